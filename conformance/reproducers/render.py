"""Standalone reproducer scripts: only the framework and NumPy, no conformance.

A failing item carries a script that rebuilds exactly the inputs the framework received
(embedded, bit for bit), constructs the distribution the way the adapter did, runs the failing
operation and prints expected vs actual. It ends with ``MISMATCH`` and exit status 1 when the
failure reproduces — which is what an upstream bug report needs.

Framework code comes from the adapter's *dialect* (:mod:`conformance.reproducers.dialects`: how to import,
make arrays, build each argument, call under which settings, take a gradient, read back), one
object per adapter (``Adapter.reproducer()``). Each check writes its own part, the body that
evaluates and compares and its own expected numbers (:meth:`conformance.checks.base.Check.reproducer`,
in the check's module), the same for every framework.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, Protocol

from conformance import __version__
from conformance.compare import err_over_tol, tolerance
from conformance.registry.bounds import bound_name, static_bounds
from conformance.reproducers.script import P_SLOT, Script, array_literal, indented

if TYPE_CHECKING:
    import numpy as np

    from conformance.answers.values import Expected, Inputs
    from conformance.registry import Binding
    from conformance.reproducers.dialects import Dialect


class ScriptAdapter(Protocol):
    """The adapter as a script needs it: its dialect, and the package the script imports."""

    @property
    def package(self) -> str: ...

    def reproducer(self) -> Dialect | None: ...


class ScriptSubject(Protocol):
    """What a script is written from, a check's subject read by what it hands on: rendering
    names no check type, so this package stays below the checks that write with it."""

    @property
    def adapter(self) -> ScriptAdapter: ...
    @property
    def binding(self) -> Binding: ...
    @property
    def dtype(self) -> str: ...
    @property
    def device(self) -> str: ...
    @property
    def case(self) -> Any: ...  # its file
    @property
    def case_id(self) -> str: ...
    @property
    def label(self) -> str: ...
    @property
    def inputs(self) -> Inputs: ...  # the arrays the framework received
    @property
    def expected(self) -> Expected: ...  # the oracle's log_prob, shapes and validity

    def declared_tolerance(self, tol: np.ndarray, expected: np.ndarray) -> np.ndarray: ...

    def kl_other(self) -> tuple[str, Binding, Inputs] | None:
        """q of a KL case: the function that divides, q's binding and inputs (else None)."""
        ...


class ScriptPart(Protocol):
    """A check's part of a script (``conformance.checks.base.Reproducer``)."""

    @property
    def subject(self) -> ScriptSubject: ...
    @property
    def name(self) -> str: ...
    @property
    def body(self) -> Callable[[Script], list[str]]: ...
    @property
    def constants(self) -> Callable[[Script], list[str]]: ...


class ScriptCheck(Protocol):
    """A check, as far as a script needs it: the part it writes for a subject."""

    def reproducer(self, subject: Any) -> ScriptPart | None: ...


def docstring_text(text: str) -> str:
    r"""``text`` safe in a triple-quoted docstring: backslashes doubled (a Windows path's ``\U``
    or a message's ``\x`` would be a SyntaxError), every double quote escaped (none can close
    the string), unprintable characters as escapes (a NUL makes the file uncompilable)."""
    out = []
    for c in text.replace("\\", "\\\\").replace('"', '\\"'):
        printable = c.isprintable() and not 0xD800 <= ord(c) <= 0xDFFF
        out.append(c if printable or c == "\t" else ascii(c)[1:-1])
    return "".join(out)


def _modules(path: str) -> str:
    return path.rpartition(".")[0]


def call_source(
    binding,
    arrays: Mapping[str, str],
    operator_wrap: Callable[[str, str], str] | None,
    bounds: Mapping[str, int] | None = None,
) -> tuple[str, set[str]]:
    """Source of the constructor call as the adapter makes it; returns (code, modules to import).
    ``bounds``: the ``{max_of: …}`` numbers of this input (a literal, as the adapter passes it);
    without them the call computes the bound from the array."""
    modules = {_modules(binding.constructor)}
    if binding.args is None:
        parts = []
        for name, expr in arrays.items():
            keyword = binding.keyword(name)
            if operator_wrap is not None:
                expr = operator_wrap(keyword, expr)
            parts.append(f"{keyword}={expr}")
        return f"{binding.constructor}({', '.join(parts)})", modules

    def render(spec: Any, keyword: str | None = None) -> str:
        if isinstance(spec, list):
            return f"[{', '.join(render(item) for item in spec)}]"
        if "param" in spec:
            expr = arrays[spec["param"]]
            return operator_wrap(keyword, expr) if operator_wrap and keyword else expr
        if "literal" in spec:
            return repr(spec["literal"])
        if "max_of" in spec:
            bound = (bounds or {}).get(bound_name(spec["max_of"]))
            return f"int(np.max({arrays[spec['max_of']]}))" if bound is None else repr(bound)
        modules.add(_modules(spec["call"]))
        inner = ", ".join(f"{k}={render(v)}" for k, v in spec.get("args", {}).items())
        return f"{spec['call']}({inner})"

    inner = ", ".join(f"{k}={render(v, k)}" for k, v in binding.args.items())
    return f"{binding.constructor}({inner})", modules


def _under(path: tuple[list[str], list[str]], body: list[str]) -> list[str]:
    """``body`` inside the framework settings the adapter evaluates under (if any)."""
    contexts, first = path
    if not contexts:
        return [*first, *body]
    return [f"with {', '.join(contexts)}:", *indented([*first, *body])]


def render(subject: ScriptSubject, check: ScriptCheck, message: str) -> str | None:
    """The reproducer script for ``check`` failing on ``subject``, or None where the check or
    the adapter writes none."""
    part = check.reproducer(subject)
    if part is None:
        return None
    subject = part.subject
    dialect = subject.adapter.reproducer()
    if dialect is None:
        return None
    inputs = subject.inputs
    params = inputs.framework_params()
    title = f"{subject.case.file}::{subject.case_id} [{part.name}]"
    lines = [
        '"""Reproducer for ' + docstring_text(title),
        "",
        f"framework: {docstring_text(subject.label)}",
        f"needs only {subject.adapter.package} and numpy; generated by conformance {__version__}.",
        "Exit status 1 and a MISMATCH line mean the failure reproduces.",
        "",
        *("    " + docstring_text(ln) for ln in message.splitlines()[:12]),
        '"""',
        IMPORTS,
    ]
    call_arrays = {}
    body_lines = []
    for name, array in params.items():
        if name in inputs.static:
            call_arrays[name] = repr(array.item())
        else:
            body_lines.append(f"{name} = {dialect.array(array_literal(array))}")
            call_arrays[name] = name

    def argument(keyword: str, expr: str) -> str:
        return dialect.argument(subject.binding, keyword, expr, params)

    bounds = static_bounds(subject.binding, params)
    call, modules = call_source(subject.binding, call_arrays, argument, bounds)
    other = subject.kl_other()
    q_call, q_arrays = "", []
    if other is not None:
        divides, q_binding, q_inputs = other
        q_params = q_inputs.framework_params()
        q_call_arrays = {}
        for name, array in q_params.items():
            if name in q_inputs.static:
                q_call_arrays[name] = repr(array.item())
            else:
                body_lines.append(f"q_{name} = {dialect.array(array_literal(array))}")
                q_call_arrays[name] = f"q_{name}"
                q_arrays.append(f"q_{name}")

        def q_argument(keyword: str, expr: str) -> str:
            return dialect.argument(q_binding, keyword, expr, q_params)

        q_bounds = static_bounds(q_binding, q_params)
        q_call, q_modules = call_source(q_binding, q_call_arrays, q_argument, q_bounds)
        modules |= q_modules | {_modules(divides)}
        q_call = f"{divides}({P_SLOT}, {q_call})"
    contexts = dialect.contexts(subject.binding)
    third_party = [
        "import numpy as np",
        *dialect.imports,
        *(f"import {m}" for m in (modules | dialect.modules(subject.binding)) - dialect.roots if m),
    ]
    exp = subject.expected
    # The log_prob check's tolerance, the binding's declared one included.
    tol = subject.declared_tolerance(
        tolerance(subject.dtype, exp.log_prob, exp.sensitivity), exp.log_prob
    )
    lines += [
        "",
        *dialect.setup(subject.dtype, subject.device),
        "",
        "",
        "def report(mismatch, what):",
        "    if mismatch:",
        "        print('MISMATCH:', what)",
        "        sys.exit(1)",
        "",
        "",
        # The comparison's own rule for error over tolerance, as source.
        *inspect.getsource(err_over_tol).rstrip("\n").splitlines(),
        "",
        "",
        f"EXPECTED = {array_literal(exp.log_prob)}  # float64 oracle",
        f"TOLERANCE = {array_literal(tol)}",
        f"VALID = {array_literal(exp.valid)}",
        f"EXPECTED_SHAPES = {{'batch_shape': {tuple(exp.batch_shape)!r}, 'event_shape': "
        f"{tuple(exp.event_shape)!r}, 'log_prob_shape': {tuple(exp.log_prob_shape)!r}}}",
    ]
    script = Script(
        dialect=dialect,
        dtype=subject.dtype,
        call=call,
        arrays=[n for n in call_arrays if n not in inputs.static],
        divergence=q_call,
        q_arrays=q_arrays,
    )
    lines += part.constants(script)
    definitions = dialect.definitions(subject.binding, params)
    lines += [
        *(["", "", *definitions, "", ""] if definitions else []),
        *body_lines,
        f"value = {dialect.array(array_literal(inputs.framework_value()))}",
        "try:",
        *indented(_under(contexts, part.body(script))),
        "except Exception as exc:  # the framework raising is the mismatch being reproduced",
        "    print(f'MISMATCH: raised {type(exc).__name__}: {exc}')",
        "    sys.exit(1)",
        "print('OK: no mismatch reproduced')  # every comparison above passed",
        "",
    ]
    text = "\n".join(lines)
    return text.replace(IMPORTS, import_block(text, third_party), 1)


#: Where a script's imports go once the rest is written (they depend on what it uses).
IMPORTS = "# <imports>"


def import_block(text: str, third_party: list[str]) -> str:
    """The script's imports as ruff's isort writes them: the standard library modules it uses,
    then the frameworks and numpy, each group sorted by module; nothing unused."""
    # What an embedded .npy array needs (see array_literal), and what the functions a check
    # writes with its own source use (the sampling checks' statistics, NumPyro's plates).
    used = {
        "import base64": "base64.b64decode(",
        "import io": "io.BytesIO(",
        "import contextlib": "contextlib.",
        "from dataclasses import dataclass, field": "@dataclass",
    }
    stdlib = ["import sys"] + [line for line, call in used.items() if call in text]
    if "special." in text:
        third_party = [*third_party, "from scipy import special"]

    def order(line: str) -> tuple[bool, str, bool, str]:
        # Plain imports before from-imports, each by module, the plain import before its
        # aliases (as isort writes them): a total order, so the block does not follow the
        # set's (hash-seeded) order.
        is_from = line.startswith("from ")
        module, _, alias = line.removeprefix("import ").removeprefix("from ").partition(" as ")
        return is_from, module.split(" import ")[0], bool(alias), alias

    groups = [sorted(set(stdlib), key=order), sorted(set(third_party), key=order)]
    return "\n\n".join("\n".join(group) for group in groups)
