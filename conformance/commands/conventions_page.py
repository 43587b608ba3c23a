"""The docs' table of framework conventions, generated from the registry so it cannot drift.

The registry (``conformance/registry/families/*.yaml``) is the only place a framework's naming
and by-design differences are declared; checks read them from there. This module renders the
same data as Markdown for ``docs/conventions.md`` (``conformance conventions``), and the suite's
own tests fail when the checked-in page differs from what the registry says.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from conformance.adapters.base import Adapter
from conformance.adapters.capabilities import CallingContexts
from conformance.registry import Binding, FamilyEntry, entries

DOC_PATH = Path(__file__).resolve().parents[2] / "docs" / "conventions.md"

VALIDATION_MEANING = {
    "all": "raises ValueError for invalid parameters and for values outside the support",
    "params": "raises ValueError for invalid parameters; values outside the support give -inf/NaN",
    "none": "raises nothing; invalid inputs give -inf or NaN",
}


#: Conventions the oracle holds every framework to, whatever the family (found by the generated
#: edge cases; the reasons and the bugs they found: docs/findings/edges.md).
DECIDED = (
    "- An event of probability 0 (a probability of 0 or 1, or a category's weight of 0, that "
    "rules the value out) has log-probability −inf, and a mixture component of weight 0 adds "
    "nothing. A clamped probability's log eps in their place fails: it turns “impossible” into "
    "“unlikely” in a likelihood.",
    "- At an end of the support, log_prob is the density's one-sided limit there (finite, +inf "
    "or −inf). The gradients judged there are the one-sided derivatives that exist as finite "
    "numbers, each on its own (`grad_wrt`); a framework that gives 0 or NaN for one of them "
    "fails.",
    "- Where a framework's own support or parameter domain leaves out an end the oracle "
    "includes, its binding declares it below (`support_lower`, `total_count_lower`: open); the "
    "oracle then holds that framework to −inf there, or to a validation error for a parameter.",
    "- In float32, where the answer is a finite float32 number, a framework must give it: a "
    "subnormal input is a number (JAX on CPU flushes it to 0 by design, and is held to the "
    "answer all the same), and an intermediate that leaves float32's range is the formula's "
    "failure, not the dtype's. Where the answer itself is beyond float32's range, the "
    "infinity of its sign is right.",
)


def _cell(text: str) -> str:
    """One Markdown table cell: a single line, pipes escaped."""
    return " ".join(str(text).split()).replace("|", "\\|")


def _short(path: str) -> str:
    return path.rsplit(".", 1)[-1]


def _keywords(binding: Binding) -> str:
    """How oracle parameter names reach the constructor, where they are not passed as is."""
    if binding.args is not None:
        return ", ".join(f"{k}={_spec(v)}" for k, v in binding.args.items())
    return ", ".join(f"{k}→{v}" for k, v in binding.rename.items())


def _spec(spec: object) -> str:
    if isinstance(spec, list):
        return f"[{', '.join(_spec(item) for item in spec)}]"
    if isinstance(spec, dict) and "param" in spec:
        return str(spec["param"])
    if isinstance(spec, dict) and "literal" in spec:
        return repr(spec["literal"])
    if isinstance(spec, dict) and "max_of" in spec:
        return f"max({spec['max_of']})"
    if isinstance(spec, dict) and "call" in spec:
        inner = ", ".join(f"{k}={_spec(v)}" for k, v in spec.get("args", {}).items())
        return f"{_short(spec['call'])}({inner})"
    return repr(spec)


def declared(binding: Binding) -> list[str]:
    """The binding's by-design differences, each as ``what: value`` (empty: none declared)."""
    out = [f"oracle {k}={v}" for k, v in binding.oracle.items()]
    if binding.validation is not None:
        out.append(f"validation={binding.validation}")
    if binding.value_dtypes is not None:
        out.append(f"value dtypes {'/'.join(binding.value_dtypes)}")
    if binding.tolerance:
        out.append("tolerance " + ", ".join(f"{k}={v}" for k, v in binding.tolerance.items()))
    out += [f"gradient of {k}: {v}" for k, v in binding.structure.items()]
    return out


def _rows(family: FamilyEntry, adapters: dict[str, Adapter]) -> Iterable[tuple[str, Binding]]:
    """Every binding of the family, the naming convention's defaults included."""
    for adapter in adapters.values():
        for binding in adapter.family_bindings().get(family.family, ()):
            yield adapter.registry_name or adapter.name, binding


def _parametrizations(binding: Binding) -> str:
    return ", ".join(binding.parametrizations) if binding.parametrizations else "all"


def render(adapters: dict[str, Adapter] | None = None) -> str:
    """The whole page: framework defaults, by-design differences, then every spelling."""
    if adapters is None:
        from conformance.adapters import BUILTIN

        adapters = {cls.name: cls() for cls in BUILTIN}
    families = entries()
    lines = [
        "# Framework conventions",
        "",
        "Generated from `conformance/registry/families/*.yaml` by `conformance conventions "
        "--output=docs/conventions.md`; do not edit by hand (tests/records/test_conventions.py checks "
        "that this page matches the registry). Each check holds a framework to the conventions "
        "declared here; anything not declared is held to the oracle's mathematics.",
        "",
        "## Decided for every family",
        "",
        *DECIDED,
        "",
        "## Validation by default",
        "",
        "What each adapter's framework does, with its default `validate_args`, for inputs "
        "outside the family's domain or support. A binding may declare otherwise (below).",
        "",
        "| adapter | validation | meaning |",
        "| --- | --- | --- |",
    ]
    for name, adapter in adapters.items():
        lines.append(
            f"| `{name}` | {adapter.validation} | {VALIDATION_MEANING[adapter.validation]} |"
        )
    lines += _contexts(adapters)
    lines += [
        "",
        "## By-design differences",
        "",
        "Bindings that declare a convention of their own: the oracle evaluates them with the "
        "declared options (e.g. an open support end, normalised probabilities), or the checks "
        "expect the declared validation, value dtypes or tolerance.",
        "",
        "| family | framework | constructor | parametrisations | declared | why |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    for fam in families.values():
        for framework, binding in _rows(fam, adapters):
            if declared(binding):
                lines.append(
                    f"| {fam.family} | {framework} | `{_short(binding.constructor)}` "
                    f"| {_parametrizations(binding)} | {_cell('; '.join(declared(binding)))} "
                    f"| {_cell(binding.note)} |"
                )
    lines += _summary_conventions()
    lines += [
        "",
        "## Spellings",
        "",
        "Every binding: the constructor, the parametrisations it covers, and how the oracle's "
        "parameter names reach it (`a→b`: passed as keyword `b`; `k=…`: an explicit argument "
        "tree). Family notes follow the table.",
        "",
        "| family | framework | constructor | parametrisations | keywords |",
        "| --- | --- | --- | --- | --- |",
    ]
    for fam in families.values():
        for framework, binding in _rows(fam, adapters):
            lines.append(
                f"| {fam.family} | {framework} | `{binding.constructor}` "
                f"| {_parametrizations(binding)} | {_cell(_keywords(binding)) or 'as named'} |"
            )
    notes = [(fam.family, fam.notes) for fam in families.values() if fam.notes.strip()]
    if notes:
        lines += ["", "### Family notes", ""]
        lines += [f"- **{family}**: {_cell(text)}" for family, text in notes]
    return "\n".join(lines) + "\n"


def _summary_conventions() -> list[str]:
    """What each framework declares it returns where a summary is undefined or infinite
    (``conformance/registry/summary_conventions.yaml``), one row per declaration."""
    from conformance.registry.summary_conventions import SUMMARY_CONVENTIONS_FILE, load

    lines = [
        "",
        "## Summaries where mathematics has no number",
        "",
        "The oracle's mean, variance, stddev, mode and entropy are NaN where mathematics leaves "
        "them undefined (Cauchy's mean, a mode that is not unique) and ±inf where they are "
        "infinite (Pareto's mean at alpha ≤ 1). The `moments` and `entropy` checks hold a "
        "framework to exactly that, unless it declares here what it returns there instead "
        "(`conformance/registry/summary_conventions.yaml`): then the elements in that condition, "
        "and only those, pass with the declared answer, and the item's metrics list them "
        "(`convention`). A declared convention never excuses an element where the oracle has a "
        "number; the reproducer scripts apply the same rule. GPyTorch declares none.",
        "",
        "| framework | family | summary | where | returns | why |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    for (framework, family, summary), found in load(SUMMARY_CONVENTIONS_FILE).items():
        for where, convention in found.items():
            lines.append(
                f"| {framework} | {family} | {summary} | {where} | {convention.returns} "
                f"| {_cell(convention.reason)} |"
            )
    return lines


def _contexts(adapters: dict[str, Adapter]) -> list[str]:
    """Each adapter's calling contexts (``context`` items): what it offers on the axis and
    the promotion rules its expected dtypes come from (see conformance/contexts.py)."""
    lines = [
        "",
        "## Calling contexts",
        "",
        "The `context` items call each framework as its users do (docs/case-format.md, "
        '"Calling contexts"): inputs as NumPy arrays or Python numbers, a global mode, a '
        "transform or a model API. Each must give the canonical call's values and the dtype "
        "its framework's own promotion rules give, stated here per framework; a raise fails "
        "unless the framework documents that it does not take that kind of input.",
        "",
        "| adapter | modes | calls | parameter kinds | value kinds |",
        "| --- | --- | --- | --- | --- |",
    ]
    rules: list[tuple[str, tuple[str, ...]]] = []
    for name, adapter in adapters.items():
        axis = adapter.context_axis
        if axis is None or not isinstance(adapter, CallingContexts):
            continue
        cells = [
            ", ".join(m.value for m in axis.modes),
            ", ".join(c.value for c in axis.calls),
            ", ".join(k.value for k in axis.param_kinds),
            ", ".join(k.value for k in axis.value_kinds),
        ]
        lines.append(f"| `{name}` | " + " | ".join(cells) + " |")
        if adapter.context_rules and not any(adapter.context_rules == r for _, r in rules):
            rules.append((name, adapter.context_rules))
    for name, said in rules:
        lines += ["", f"`{name}` (and the adapters built on it):", ""]
        lines += [f"- {_cell(text)}" for text in said]
    return lines


def stale(path: Path = DOC_PATH) -> bool:
    """Whether the checked-in page differs from the registry."""
    return not path.is_file() or path.read_text(encoding="utf-8") != render()
