"""Standalone reproducer scripts: only the framework and NumPy, no conformance.

A failing item carries a script that rebuilds exactly the inputs the framework received
(embedded, bit for bit), constructs the distribution the way the adapter did, runs the failing
operation and prints expected vs actual. It ends with ``MISMATCH`` and exit status 1 when the
failure reproduces — which is what an upstream bug report needs.

Framework code comes from the adapter's *dialect* (:mod:`conformance.records.dialects`: how to import,
make arrays, build each argument, call under which settings, take a gradient, read back), one
object per adapter (``Adapter.reproducer()``). Each check contributes the body that evaluates
and compares (see :data:`BODIES`), the same for every framework.
"""

from __future__ import annotations

import base64
import inspect
import io
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from conformance import __version__
from conformance.compare import err_over_tol, project, tolerance
from conformance.records.dialects import Dialect

#: Arrays above this many elements are embedded as base64 .npy instead of literal lists.
LITERAL_LIMIT = 2048


def array_literal(array: np.ndarray) -> str:
    """A NumPy expression that recreates ``array`` exactly (dtype and every bit)."""
    array = np.asarray(array)
    if array.size <= LITERAL_LIMIT:
        if array.dtype.kind == "f":
            body = repr(array.astype(np.float64).tolist())
            body = body.replace("inf", "float('inf')").replace("nan", "float('nan')")
        else:
            body = repr(array.tolist())
        # The dtype by name: np.bool is missing on NumPy 1.24-1.26, 'bool' works everywhere.
        return f"np.array({body}, dtype={array.dtype.name!r})"
    buf = io.BytesIO()
    np.save(buf, array, allow_pickle=False)
    encoded = base64.b64encode(buf.getvalue()).decode("ascii")
    return f'np.load(io.BytesIO(base64.b64decode("{encoded}")))'


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
    binding, arrays: Mapping[str, str], operator_wrap: Callable[[str, str], str] | None
) -> tuple[str, set[str]]:
    """Source of the constructor call as the adapter makes it; returns (code, modules to import)."""
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
        modules.add(_modules(spec["call"]))
        inner = ", ".join(f"{k}={render(v)}" for k, v in spec.get("args", {}).items())
        return f"{spec['call']}({inner})"

    inner = ", ".join(f"{k}={render(v, k)}" for k, v in binding.args.items())
    return f"{binding.constructor}({inner})", modules


# ----- bodies per check ---------------------------------------------------------------------
def _body_shapes(ctx: dict) -> list[str]:
    d: Dialect = ctx["dialect"]
    return [
        *(_compiled_log_prob(ctx) if ctx["compiled"] else []),
        f"dist = {ctx['call']}",
        f"batch_shape, event_shape = {d.batch_shape.format(d='dist')}, {d.event_shape.format(d='dist')}",
        f"log_prob = {d.to_numpy(_log_prob_expr(ctx))}",
        "actual = {'batch_shape': batch_shape, 'event_shape': event_shape, "
        "'log_prob_shape': tuple(log_prob.shape)}",
        "print('expected shapes:', EXPECTED_SHAPES)",
        "print('actual shapes:  ', actual, 'log_prob dtype', log_prob.dtype)",
        "mismatch = {k: (actual[k], v) for k, v in EXPECTED_SHAPES.items() if tuple(actual[k]) != tuple(v)}",
        f"if not mismatch and log_prob.dtype != np.dtype('{ctx['dtype']}'):",
        f"    mismatch = {{'dtype': (str(log_prob.dtype), '{ctx['dtype']}')}}",
        "report(mismatch, 'shape mismatch: ' + repr(mismatch))",
    ]


def _compiled_log_prob(ctx: dict) -> list[str]:
    """Construction and log_prob in one ``jax.jit`` function, as the compiled items evaluate."""
    args = ", ".join([*ctx["arrays"], "value"])
    return [
        ctx["dialect"].jit_decorator,
        f"def compiled_log_prob({args}):",
        f"    return {ctx['call']}.log_prob(value)",
    ]


def _log_prob_expr(ctx: dict) -> str:
    if not ctx["compiled"]:
        return "dist.log_prob(value)"
    return f"compiled_log_prob({', '.join([*ctx['arrays'], 'value'])})"


def _body_log_prob(ctx: dict) -> list[str]:
    d: Dialect = ctx["dialect"]
    return [
        *(_compiled_log_prob(ctx) if ctx["compiled"] else [f"dist = {ctx['call']}"]),
        f"actual = {d.to_numpy(_log_prob_expr(ctx))}.astype(np.float64)",
        "print('log_prob shape', actual.shape, 'expected', EXPECTED.shape)",
        "if actual.shape != EXPECTED.shape:",
        "    report(True, 'log_prob shape mismatch')",
        "finite = np.isfinite(EXPECTED)",
        "err = np.where(finite, np.abs(actual - EXPECTED), np.where(actual == EXPECTED, 0.0, np.inf))",
        "err = np.where(np.isnan(err), np.inf, err)",
        "outside = (~VALID) & np.isfinite(actual)",
        "if outside.any():",
        "    print('outside the support or domain, finite log_prob at', np.argwhere(outside)[:5].tolist())",
        "report(bool(outside.any()), 'finite log_prob outside the support or domain')",
        "err = np.where(VALID, err, 0.0)  # outside the support: only the support rule applies",
        "ratio = err_over_tol(err, TOLERANCE, finite)",
        "worst = np.unravel_index(int(np.argmax(ratio)), ratio.shape)",
        "print('max abs err', float(err.max()), 'worst index', tuple(int(i) for i in worst))",
        "print('expected', float(EXPECTED[worst]), 'actual', float(actual[worst]), 'tolerance', float(TOLERANCE[worst]))",
        "report(bool(ratio.max() > 1), f'{int((ratio > 1).sum())} of {ratio.size} elements outside tolerance')",
    ]


def _grad_compare_lines() -> list[str]:
    return [
        "worst_ratio = 0.0",
        "for name, got in GRADS.items():",
        "    if STRUCTURE[name] == 'none':  # declared not comparable for this binding",
        "        continue",
        "    if got is None:",
        "        report(True, f'no gradient for {name} (None)')",
        "    got = project(np.asarray(got, dtype=np.float64), STRUCTURE[name])",
        "    exp = EXPECTED_GRAD[name]",
        "    # A non-finite gradient must match exactly; NaN is never within tolerance.",
        "    err = np.where(np.isfinite(exp), np.abs(got - exp), np.where(got == exp, 0.0, np.inf))",
        "    err = np.where(np.isnan(err), np.inf, err)",
        "    ratio = err_over_tol(err, TOLERANCE_GRAD[name], np.isfinite(exp))",
        "    worst = np.unravel_index(int(np.argmax(ratio)), ratio.shape) if ratio.size else ()",
        "    print(f'd/d{name} ({STRUCTURE[name]}): max abs err {float(err.max()) if err.size else 0.0:.3g}',",
        "          'worst', worst, 'expected', EXPECTED_GRAD[name][worst] if ratio.size else None,",
        "          'actual', got[worst] if ratio.size else None)",
        "    worst_ratio = max(worst_ratio, float(ratio.max()) if ratio.size else 0.0)",
        "report(worst_ratio > 1, f'gradient outside tolerance (worst err/tol {worst_ratio:.3g})')",
    ]


def _body_grad(ctx: dict) -> list[str]:
    d: Dialect = ctx["dialect"]
    return [
        *d.gradient(ctx),
        f"GRADS = {{n: (None if g is None else {d.to_numpy('g')}) "
        f"for n, g in zip({list(ctx['wrt'])!r}, grads, strict=True)}}",
        *_grad_compare_lines(),
    ]


BODIES: dict[str, Callable[[dict], list[str]]] = {
    "shapes": _body_shapes,
    "log_prob": _body_log_prob,
    "grad": _body_grad,
    "grad_functional": _body_grad,
}


def _grad_constants(subject, dialect: Dialect) -> list[str]:
    """The fixed cotangent, the oracle's projected gradients and their tolerances: the
    subject's own, so the script judges with exactly the numbers the check judged with."""
    grad = subject.gradient
    compared = grad.compared()

    def tolerance_of(n: str) -> np.ndarray:
        expected, tol, _ = grad.projected(n)
        return subject.declared_tolerance(tol, expected, normwise=True)

    return [
        "",
        "",
        # The comparison's own projection, as source: one rule, stated once.
        *inspect.getsource(project).rstrip("\n").splitlines(),
        "",
        "",
        f"STRUCTURE = {grad.structure!r}",
        f"CT = {dialect.array(array_literal(grad.cotangent.astype(subject.dtype)))}  # cotangent",
        "EXPECTED_GRAD = {",
        *(f"    {n!r}: {array_literal(grad.projected(n)[0])}," for n in compared),
        "}",
        "TOLERANCE_GRAD = {",
        *(f"    {n!r}: {array_literal(tolerance_of(n))}," for n in compared),
        "}",
    ]


def _under(path: tuple[list[str], list[str]], body: list[str]) -> list[str]:
    """``body`` inside the framework settings the adapter evaluates under (if any)."""
    contexts, first = path
    if not contexts:
        return [*first, *body]
    return [f"with {', '.join(contexts)}:", *("    " + ln for ln in [*first, *body])]


def render(
    subject, check_name: str, message: str, extra_constants: Mapping[str, np.ndarray] | None = None
) -> str | None:
    """The reproducer script for a failed ``check_name`` on ``subject``, or None if unsupported."""
    if check_name == "eager":  # the case's own log_prob, op by op
        subject, check_name = subject.eagerly(), "log_prob"
    dialect = subject.adapter.reproducer()
    if dialect is None or check_name not in BODIES:
        return None
    inputs = subject.inputs
    params = inputs.framework_params()
    title = f"{subject.case.file}::{subject.case.id} [{check_name}]"
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

    call, modules = call_source(subject.binding, call_arrays, argument)
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
    ctx = {
        "dialect": dialect,
        "dtype": subject.dtype,
        "call": call,
        "method": check_name,
        # The array inputs by name (static ones are literals in the call): a compiled
        # function's arguments.
        "arrays": [n for n in call_arrays if n not in inputs.static],
        "compiled": dialect.compiled,
    }
    if check_name in ("grad", "grad_functional"):
        lines += _grad_constants(subject, dialect)
        ctx["wrt"] = subject.gradient.wrt
    for name, array in (extra_constants or {}).items():
        lines.append(f"{name} = {array_literal(array)}")
    definitions = dialect.definitions(subject.binding, params)
    lines += [
        *(["", "", *definitions, "", ""] if definitions else []),
        *body_lines,
        f"value = {dialect.array(array_literal(inputs.framework_value()))}",
        "try:",
        *("    " + ln for ln in _under(contexts, BODIES[check_name](ctx))),
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
    # What an embedded .npy array needs (see array_literal).
    used = {"base64": "base64.b64decode(", "io": "io.BytesIO("}
    stdlib = ["import sys"] + [f"import {m}" for m, call in used.items() if call in text]

    def module(line: str) -> str:
        return line.removeprefix("import ").split(" as ")[0]

    groups = [sorted(set(stdlib), key=module), sorted(set(third_party), key=module)]
    return "\n\n".join("\n".join(group) for group in groups)
