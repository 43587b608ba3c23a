"""The failure kinds a record can carry, stated once.

A kind says *how* an item failed; a known-failure entry names the kinds its bug produces, so
an unknown kind there can never match and must be a usage error (``valu`` is not ``value``).
:class:`Kind` is a ``str`` enum: records, known-failure YAML and messages keep the plain
strings, and a kind nobody declared cannot be constructed (``Kind("valu")`` raises).
The README's kind table, the known-failure loader and the checks' headlines read this list.
"""

from __future__ import annotations

from enum import StrEnum


class Kind(StrEnum):
    """How an item failed (see :data:`KINDS` for what each means)."""

    VALUE = "value"
    GRAD = "grad"
    SHAPE = "shape"
    DTYPE = "dtype"
    NAN = "nan"
    INF = "inf"
    RAISES = "raises"
    MEMORY = "memory"
    SUPPORT = "support"
    NO_VALIDATION_ERROR = "no_validation_error"
    NO_TYPE_ERROR = "no_type_error"
    VMAP = "vmap"
    JIT = "jit"
    JIT_ONLY = "jit_only"
    EAGER_ONLY = "eager_only"
    TIMEOUT = "timeout"
    CRASH = "crash"
    NO_RESULT = "no_result"
    CASE_ERROR = "case_error"
    HARNESS_ERROR = "harness_error"
    FIT = "fit"
    SAMPLE_SUPPORT = "sample_support"


#: kind -> what it means (the README's table is held to this text by a test).
KINDS: dict[Kind, str] = {
    Kind.VALUE: "log_prob outside the tolerance around the oracle's value",
    Kind.GRAD: "a gradient outside the tolerance around the oracle's gradient",
    Kind.SHAPE: "batch, event or log_prob shape differs from the oracle's",
    Kind.DTYPE: "log_prob's dtype is not the inputs' dtype",
    Kind.NAN: "NaN where the oracle has a number",
    Kind.INF: "an infinity where the oracle has a finite number (or the other infinity)",
    Kind.RAISES: "the framework raised on valid input",
    Kind.MEMORY: "the framework ran out of memory (MemoryError)",
    Kind.SUPPORT: "an input outside the support or domain got a finite log_prob, validation off",
    Kind.NO_VALIDATION_ERROR: "an input outside the support or domain did not raise, validation on",
    Kind.NO_TYPE_ERROR: "a value of a dtype the binding declares it refuses did not raise TypeError",
    Kind.VMAP: "the result under vmap differs from the unbatched one",
    Kind.JIT: "the compiled result is wrong, and so is the eager one",
    Kind.JIT_ONLY: "the compiled result is wrong, the eager one right",
    Kind.EAGER_ONLY: "the eager (op-by-op) result is wrong, the compiled one right",
    Kind.TIMEOUT: "the item ran past --item-timeout",
    Kind.CRASH: "the process running the item died (segfault, abort, hard timeout)",
    Kind.NO_RESULT: "the item never reported a result (interrupted, or its worker vanished)",
    Kind.CASE_ERROR: "the case file or case is invalid (the suite's input, not the framework)",
    Kind.HARNESS_ERROR: "the suite itself failed on the item (a bug in conformance)",
    Kind.FIT: "draws fail a goodness-of-fit test against the oracle's law (at a stated false-failure rate)",
    Kind.SAMPLE_SUPPORT: "a draw outside the support, or not a number",
}
assert set(KINDS) == set(Kind), "every kind has its meaning"

#: Kinds that are not the framework's fault: a record of one has outcome ``error``.
ERROR_KINDS = frozenset({Kind.CASE_ERROR, Kind.HARNESS_ERROR})

#: The headline verb of a failing item's message, where "mismatch" does not say it.
HEADLINE_WORDS: dict[Kind, str] = {
    Kind.RAISES: "raised",
    Kind.MEMORY: "ran out of memory",
    Kind.NAN: "returned NaN",
    Kind.INF: "returned inf",
    Kind.SHAPE: "shape mismatch",
    Kind.DTYPE: "dtype mismatch",
    Kind.FIT: "does not fit",
    Kind.SAMPLE_SUPPORT: "drew outside the support",
}
