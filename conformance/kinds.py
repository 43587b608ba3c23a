"""The failure kinds a record can carry, stated once.

A kind says *how* an item failed; a known-failure entry names the kinds its bug produces, so
an unknown kind there can never match and must be a usage error (``valu`` is not ``value``).
The README's kind table, the known-failure loader and the checks' headlines read this list.
"""

from __future__ import annotations

#: kind -> what it means (the README's table is held to this text by a test).
KINDS: dict[str, str] = {
    "value": "log_prob outside the tolerance around the oracle's value",
    "grad": "a gradient outside the tolerance around the oracle's gradient",
    "shape": "batch, event or log_prob shape differs from the oracle's",
    "dtype": "log_prob's dtype is not the inputs' dtype",
    "nan": "NaN where the oracle has a number",
    "inf": "an infinity where the oracle has a finite number (or the other infinity)",
    "raises": "the framework raised on valid input",
    "memory": "the framework ran out of memory (MemoryError)",
    "support": "an input outside the support or domain got a finite log_prob, validation off",
    "no_validation_error": "an input outside the support or domain did not raise, validation on",
    "no_type_error": "a value of a dtype the binding declares it refuses did not raise TypeError",
    "vmap": "the result under vmap differs from the unbatched one",
    "jit": "the compiled result is wrong, and so is the eager one",
    "jit_only": "the compiled result is wrong, the eager one right",
    "eager_only": "the eager (op-by-op) result is wrong, the compiled one right",
    "timeout": "the item ran past --item-timeout",
    "crash": "the process running the item died (segfault, abort, hard timeout)",
    "no_result": "the item never reported a result (interrupted, or its worker vanished)",
    "case_error": "the case file or case is invalid (the suite's input, not the framework)",
    "harness_error": "the suite itself failed on the item (a bug in conformance)",
}

#: The headline verb of a failing item's message, where "mismatch" does not say it.
HEADLINE_WORDS: dict[str, str] = {
    "raises": "raised",
    "memory": "ran out of memory",
    "nan": "returned NaN",
    "inf": "returned inf",
    "shape": "shape mismatch",
    "dtype": "dtype mismatch",
}
