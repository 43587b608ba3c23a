"""``conformance coverage``: every distribution class the installed frameworks ship, and which
of them the suite tests.

A class is *covered* when items of the default run build it: its binding's constructor (or a
distribution the binding builds inside another, ``Independent``'s base) is the class, or a
constructor that is a function returned an instance of it for a case's inputs (NumPyro's
``TruncatedNormal`` builds ``LeftTruncatedDistribution``, ``TwoSidedTruncatedDistribution``…).
A class no item builds is *excluded* when the registry's ``coverage.yaml`` gives the reason a
user would accept, and *missing* otherwise: the suite does not test it yet.

What a framework ships is the adapter's declaration (:attr:`Adapter.distribution_modules` and
``distribution_bases``): the public classes of those modules whose ``log_prob`` is their own,
defined below every base.
"""

from __future__ import annotations

import importlib
import inspect
from collections import defaultdict
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import yaml

from conformance.adapters.base import Adapter, import_dotted
from conformance.commands.kl_coverage import KLCoverage, kl_coverage, tested_kl_pairs
from conformance.commands.method_coverage import (
    MethodCoverage,
    load_method_exclusions,
    method_coverage,
    tested_pairs,
)
from conformance.registry import Binding
from conformance.summaries import METHODS

Status = Literal["covered", "excluded", "missing"]
#: The checks that read the methods of the (class, method) table; opt-in until triaged.
METHOD_CHECKS = ("moments", "entropy", "cdf", "icdf")
#: Classes no family covers on purpose, by package, each with its reason.
EXCLUSIONS_PATH = Path(__file__).resolve().parents[1] / "registry" / "coverage.yaml"
#: The generated page (``conformance coverage --format=markdown --output=docs/coverage.md``).
DOC_PATH = Path(__file__).resolve().parents[2] / "docs" / "coverage.md"


@dataclass
class ClassCoverage:
    """One shipped class: its status and, when covered, what tests it."""

    name: str
    module: str
    status: Status = "missing"
    reason: str = ""
    #: family → the parametrizations whose items build the class.
    families: dict[str, set[str]] = field(default_factory=lambda: defaultdict(set))
    adapters: set[str] = field(default_factory=set)
    checks: set[str] = field(default_factory=set)
    items: int = 0

    def as_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"status": self.status, "module": self.module}
        if self.status == "covered":
            out["family"] = sorted(self.families)
            out["parametrizations"] = {f: sorted(p) for f, p in sorted(self.families.items())}
            out["adapters"] = sorted(self.adapters)
            out["checks"] = sorted(self.checks)
            out["items"] = self.items
        else:
            out["reason"] = self.reason
        return out


@dataclass
class FrameworkCoverage:
    """One installed framework (a package; GPyTorch's operator adapters are one framework)."""

    package: str
    version: str
    adapters: list[str]
    classes: dict[str, ClassCoverage]
    #: Why the framework could not be inspected (not installed), or "".
    unavailable: str = ""
    #: Exclusions that no longer hold: the class is covered, or the framework ships no such
    #: class (``coverage.yaml`` must not keep a reason nobody needs).
    stale_exclusions: list[str] = field(default_factory=list)
    #: Adapter → the suite's families (or ``Family.parametrization``) it does not offer.
    lacking: dict[str, list[str]] = field(default_factory=dict)
    #: The classes' (class, method) pairs: tested, not implemented, excluded or missing.
    methods: MethodCoverage = field(default_factory=MethodCoverage)
    #: The KL rules the framework registers: tested, excluded or missing.
    kl: KLCoverage = field(default_factory=KLCoverage)

    def count(self, status: Status) -> int:
        return sum(1 for c in self.classes.values() if c.status == status)

    @property
    def percent(self) -> float:
        return 100.0 * self.count("covered") / len(self.classes) if self.classes else 0.0

    def summary(self) -> str:
        if self.unavailable:
            return f"{self.package}: not inspected ({self.unavailable})"
        return (
            f"{self.package} {self.version}: {self.count('covered')} of {len(self.classes)} "
            f"classes covered ({self.percent:.0f}%), {self.count('excluded')} excluded, "
            f"{self.count('missing')} without a family yet"
        )


def shipped_classes(adapter: Adapter) -> dict[str, type]:
    """The public classes of the adapter's distribution modules whose ``log_prob`` is their own."""
    bases = tuple(import_dotted(b) for b in adapter.distribution_bases)
    found: dict[str, type] = {}
    for module_name in adapter.distribution_modules:
        module = importlib.import_module(module_name)
        names = getattr(module, "__all__", None) or [n for n in vars(module) if n[:1].isupper()]
        for name in names:
            cls = getattr(module, name, None)
            if not inspect.isclass(cls) or not issubclass(cls, bases) or cls in bases:
                continue
            definer = next((m for m in cls.__mro__ if "log_prob" in vars(m)), None)
            if definer is not None and definer not in bases:
                found.setdefault(name, cls)
    return found


def _calls(binding: Binding) -> Iterator[str]:
    """Every dotted constructor a binding calls: its own and those nested in its arguments."""
    yield binding.constructor

    def walk(spec: Any) -> Iterator[str]:
        if isinstance(spec, dict):
            if isinstance(spec.get("call"), str):
                yield spec["call"]
            for value in spec.values():
                yield from walk(value)
        elif isinstance(spec, list):
            for value in spec:
                yield from walk(value)

    yield from walk(binding.args or {})


class _Builds:
    """Which classes an item's binding builds (memoised: a plan has thousands of items)."""

    def __init__(self) -> None:
        self._static: dict[int, tuple[set[type], bool]] = {}
        self._built: dict[tuple[str, int, Any], type | None] = {}

    def classes(self, spec: Any) -> set[type]:
        binding = spec.binding
        static, by_function = self._static_of(binding)
        if not by_function:
            return static
        key = (spec.adapter.name, id(binding), spec.case)
        if key not in self._built:
            self._built[key] = _built_type(spec)
        built = self._built[key]
        return static | ({built} if built is not None else set())

    def _static_of(self, binding: Binding) -> tuple[set[type], bool]:
        found = self._static.get(id(binding))
        if found is None:
            classes, by_function = set(), False
            for dotted in _calls(binding):
                try:
                    target = import_dotted(dotted)
                except Exception:  # a broken binding is the plan's error to report, not ours
                    continue
                if inspect.isclass(target):
                    classes.add(target)
                elif dotted == binding.constructor:
                    by_function = True
            found = self._static[id(binding)] = (classes, by_function)
        return found


def _built_type(spec: Any) -> type | None:
    """The class a function constructor returns for the item's case (its eager construction)."""
    from conformance.expect.materialize import inputs_for

    adapter = spec.adapter.eager()
    try:
        inputs = inputs_for(spec.case, spec.dtype)
        with adapter.precision(spec.dtype):
            params = {k: adapter.asarray(v, "cpu") for k, v in inputs.framework_params().items()}
            return type(adapter.construct(spec.binding, params))
    except Exception:  # an item whose construction raises builds nothing to count
        return None


def _public(version: str) -> str:
    """A version without its local part (torch's ``+cpu`` wheel is the same release)."""
    return version.partition("+")[0]


def load_exclusions(path: Path = EXCLUSIONS_PATH) -> dict[str, dict[str, str]]:
    """package → class → the reason no family covers it."""
    data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    return {package: dict(classes or {}) for package, classes in data.items()}


def coverage(
    adapters: dict[str, Adapter],
    specs: Iterable[Any],
    exclusions: dict[str, dict[str, str]],
    lacking: Mapping[str, list[str]] | None = None,
    method_specs: Iterable[Any] | None = None,
) -> dict[str, FrameworkCoverage]:
    """Every framework's shipped classes with their status, from a run's plan (``specs``);
    ``lacking``: adapter → the suite's families it does not offer (no item says so);
    ``method_specs``: the plan the (class, method) table reads (default ``specs``)."""
    from conformance.plan.specs import CheckSpec

    frameworks: dict[str, FrameworkCoverage] = {}
    by_class: dict[type, ClassCoverage] = {}
    shipped: dict[str, tuple[Adapter, dict[str, type]]] = {}
    specs = list(specs)
    for adapter in adapters.values():
        package = adapter.package
        fw = frameworks.get(package)
        if fw is None:
            fw = frameworks[package] = FrameworkCoverage(package, "", [], {})
        fw.adapters.append(adapter.name)
        if (lacking or {}).get(adapter.name):
            fw.lacking[adapter.name] = list((lacking or {})[adapter.name])
        reason = adapter.unavailable()
        if reason:
            fw.unavailable = reason
            continue
        fw.version = _public(adapter.version())
        classes = shipped_classes(adapter)
        shipped.setdefault(package, (adapter, {}))[1].update(classes)
        for name, cls in classes.items():
            if name not in fw.classes:
                fw.classes[name] = by_class[cls] = ClassCoverage(name, cls.__module__)
    builds = _Builds()
    for spec in specs:
        if not isinstance(spec, CheckSpec) or spec.adapter.package not in frameworks:
            continue
        for cls in builds.classes(spec):
            entry = by_class.get(cls)
            if entry is None:
                continue
            entry.status = "covered"
            entry.families[spec.case.family].add(spec.case.parametrization)
            entry.adapters.add(spec.adapter.name)
            entry.checks.add(spec.check.name)
            entry.items += 1
    tested = tested_pairs(specs if method_specs is None else method_specs, builds.classes)
    method_exclusions = load_method_exclusions()
    for package, (adapter, classes) in shipped.items():
        frameworks[package].methods = method_coverage(
            adapter, classes, tested, method_exclusions.get(package, {})
        )
    kl_tested = tested_kl_pairs(specs)
    for package, (adapter, _) in shipped.items():
        rules = getattr(adapter, "kl_rules", None)
        if rules:
            frameworks[package].kl = kl_coverage(rules, kl_tested.get(rules, set()))
    for package, fw in frameworks.items():
        excluded = exclusions.get(package, {})
        if not fw.unavailable:
            fw.stale_exclusions = sorted(
                name
                for name in excluded
                if name not in fw.classes or fw.classes[name].status == "covered"
            )
        for name, entry in fw.classes.items():
            if entry.status == "covered":
                continue
            if name in excluded:
                entry.status, entry.reason = "excluded", str(excluded[name]).strip()
            else:
                entry.reason = "no family of the suite builds it yet"
    return frameworks


def method_plan(cases: str | Path) -> list[Any]:
    """The plan the (class, method) table reads: the methods' checks turned on (they are
    opt-in) over ``cases``."""
    from conformance.plan.planner import plan
    from conformance.run.config.settings import Settings, parse_options

    options = parse_options([f"--cases={cases}", f"--check={','.join(METHOD_CHECKS)}"])[0]
    return list(plan(Settings.from_sources(options, {}).selection))


def as_json(frameworks: dict[str, FrameworkCoverage]) -> dict[str, Any]:
    return {
        "frameworks": {
            package: {name: c.as_json() for name, c in sorted(fw.classes.items())}
            for package, fw in sorted(frameworks.items())
        },
        "summary": {
            package: {
                "version": fw.version,
                "adapters": fw.adapters,
                "classes": len(fw.classes),
                "covered": fw.count("covered"),
                "excluded": fw.count("excluded"),
                "missing": fw.count("missing"),
                "percent_covered": round(fw.percent, 1),
                **({"unavailable": fw.unavailable} if fw.unavailable else {}),
                **({"not_offered": fw.lacking} if fw.lacking else {}),
                "methods": fw.methods.as_json(),
                "kl": fw.kl.as_json(),
            }
            for package, fw in sorted(frameworks.items())
        },
    }


def render_text(frameworks: dict[str, FrameworkCoverage]) -> str:
    lines = []
    for _, fw in sorted(frameworks.items()):
        lines.append(fw.summary())
        if not fw.unavailable:
            lines.append(fw.methods.summary())
            missing = [
                f"{c}.{m}" for (c, m), s in sorted(fw.methods.status.items()) if s == "missing"
            ]
            if missing:
                lines.append(f"  methods missing: {', '.join(missing)}")
            if fw.kl.status:
                lines.append(fw.kl.summary())
                for (p, q), status in sorted(fw.kl.status.items()):
                    if status != "tested":
                        reason = fw.kl.reasons.get((p, q), "no KL case computes it yet")
                        lines.append(f"  KL {status:<8} ({p}, {q}): {reason}")
        for adapter, names in fw.lacking.items():
            lines.append(f"  not offered by {adapter}: {', '.join(names)}")
        for name, c in sorted(fw.classes.items()):
            if c.status == "covered":
                families = ", ".join(sorted(c.families))
                lines.append(f"  covered   {name}: {families} ({c.items} items)")
        for name, c in sorted(fw.classes.items()):
            if c.status != "covered":
                lines.append(f"  {c.status:<9} {name}: {c.reason}")
    return "\n".join(lines) + "\n"


def render_markdown(frameworks: dict[str, FrameworkCoverage]) -> str:
    out = [
        "# Coverage of the frameworks' distribution classes",
        "",
        "Generated by `conformance coverage --format=markdown --output=docs/coverage.md` from",
        "the installed frameworks and the default run's plan; `tests/project/test_coverage.py`",
        "fails while it is stale. A class is *covered* when items of the default run build it,",
        "*excluded* with the reason in `conformance/registry/coverage.yaml`, *missing* when no",
        "family of the suite builds it yet. What each framework ships is its adapter's",
        "declaration: the public classes of its distribution modules with their own `log_prob`.",
        "",
        "| framework | classes | covered | excluded | missing |",
        "| --- | ---: | ---: | ---: | ---: |",
    ]
    for package, fw in sorted(frameworks.items()):
        out.append(
            f"| {package} {fw.version} | {len(fw.classes)} | {fw.count('covered')} "
            f"({fw.percent:.0f}%) | {fw.count('excluded')} | {fw.count('missing')} |"
        )
    for package, fw in sorted(frameworks.items()):
        out += ["", f"## {package} {fw.version}", ""]
        if fw.unavailable:
            out.append(f"Not inspected: {fw.unavailable}")
            continue
        out += [
            "| class | status | families | checks | items |",
            "| --- | --- | --- | --- | ---: |",
        ]
        for name, c in sorted(fw.classes.items()):
            if c.status == "covered":
                families = ", ".join(
                    f"{f} ({', '.join(sorted(p))})" for f, p in sorted(c.families.items())
                )
                checks = ", ".join(sorted(c.checks))
                out.append(f"| `{name}` | covered | {families} | {checks} | {c.items} |")
            else:
                out.append(f"| `{name}` | {c.status} | {c.reason} | | |")
        out += ["", _methods_table(fw)]
        if fw.kl.status:
            out += ["", _kl_table(fw.kl)]
    return "\n".join(out) + "\n"


def _kl_table(kl: KLCoverage) -> str:
    """The KL rules of one framework, a row per rule."""
    out = [
        f"KL rules: {kl.count('tested')} of {len(kl.status)} tested ({kl.percent:.0f}%), "
        f"{kl.count('excluded')} excluded, {kl.count('missing')} missing (the `kl` items of "
        "`cases/kl/`; the rules and the oracle's pairs behind each in "
        "`conformance/registry/kl_pairs.yaml`).",
        "",
        "| p | q | status | oracle pairs tested, or why not |",
        "| --- | --- | --- | --- |",
    ]
    for (p, q), status in sorted(kl.status.items()):
        why = ", ".join(kl.pairs.get((p, q), [])) or kl.reasons.get((p, q), "")
        out.append(f"| `{p}` | `{q}` | {status} | {why} |")
    return "\n".join(out)


def _methods_table(fw: FrameworkCoverage) -> str:
    """The (class, method) pairs of one framework, a row per class with a method."""
    methods = fw.methods
    out = [
        f"Methods ({', '.join(METHODS)}): {methods.count('tested')} of {methods.implemented} "
        f"pairs the classes define tested ({methods.percent:.0f}%), "
        f"{methods.count('excluded')} excluded, {methods.count('missing')} missing.",
        "",
        "| class | " + " | ".join(METHODS) + " |",
        "| --- |" + " --- |" * len(METHODS),
    ]
    marks = {
        "tested": "tested",
        "not implemented": "·",
        "excluded": "excluded",
        "missing": "missing",
    }
    for name in sorted(fw.classes):
        cells = [marks[methods.status.get((name, m), "not implemented")] for m in METHODS]
        if any(cell != "·" for cell in cells):
            out.append(f"| `{name}` | " + " | ".join(cells) + " |")
    return "\n".join(out)


def readme_line(frameworks: dict[str, FrameworkCoverage]) -> str:
    """The README's one line of coverage."""
    parts = [
        f"{package} {fw.count('covered')}/{len(fw.classes)}"
        for package, fw in sorted(frameworks.items())
        if not fw.unavailable
    ]
    return (
        "Distribution classes covered (`conformance coverage`, [docs/coverage.md]"
        f"(docs/coverage.md)): {', '.join(parts)}."
    )
