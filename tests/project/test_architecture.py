"""The package's structure, held by tests: no import circles, and the boundaries of the design
(checks read only the subject; the plan needs no pytest).

Imports are read from the source (ast), at any depth in a module — a function-level import is
still a dependency. Those under ``if TYPE_CHECKING:`` never run: they count for circles (a
circle hidden from the interpreter is still one for a reader and for static tools), not for
the run-time boundaries (a check may name the subject's types).
"""

from __future__ import annotations

import ast
import graphlib
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
# The oracle is the package's conformance/reference/ (reference/ at the repository's top is a
# link to it, for the layout the README shows): one source tree, walked as the package's.
ORACLE = "conformance.reference"
SOURCES = {"conformance": ROOT / "conformance"}
#: The top-level modules every role may import: they import only each other.
VOCABULARY = {
    "check_names",
    "compare",
    "contexts",
    "dtypes",
    "kinds",
    "names",
    "operations",
    "sizes",
    "timing",
    "summaries",
    "versions",
}


def _module_name(package: str, root: Path, path: Path) -> str:
    parts = [package, *path.relative_to(root).with_suffix("").parts]
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _modules() -> dict[str, Path]:
    return {
        _module_name(package, root, p): p
        for package, root in SOURCES.items()
        for p in sorted(root.rglob("*.py"))
    }


def _runtime_imports(
    path: Path, name: str, known: set[str], type_checking: bool = False
) -> set[str]:
    """The project modules ``path`` imports when it runs (TYPE_CHECKING blocks left out, or
    with ``type_checking`` counted too)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    skipped: set[int] = set()
    for node in ast.walk(tree):
        if (
            not type_checking
            and isinstance(node, ast.If)
            and "TYPE_CHECKING" in ast.unparse(node.test)
        ):
            skipped.update(id(n) for stmt in node.body for n in ast.walk(stmt))
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    out: set[str] = set()
    for node in ast.walk(tree):
        if id(node) in skipped:
            continue
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, *([base] if base else [])])
            # ``from pkg import mod`` imports a module; ``from mod import name`` the module.
            targets = [
                f"{base}.{a.name}" if f"{base}.{a.name}" in known else base for a in node.names
            ]
        else:
            continue
        for target in targets:
            while target and target not in known:
                target = target.rpartition(".")[0]
            if target and target != name:
                out.add(target)
    return out


def _graph(type_checking: bool = False) -> dict[str, set[str]]:
    modules = _modules()
    known = set(modules)
    graph = {
        name: _runtime_imports(path, name, known, type_checking) for name, path in modules.items()
    }
    # Importing a package's module runs the package's __init__ first: that is not a circle.
    return {m: {t for t in deps if not m.startswith(t + ".")} for m, deps in graph.items()}


#: The packages from the ground up. A package imports only packages of lower layers: the
#: packages of one layer import none of each other, and nothing imports upward. "vocabulary"
#: is the top-level modules (and the package's own face, ``conformance``); every other name is
#: a subpackage or a top-level entry module.
LAYERS: list[set[str]] = [
    {"vocabulary", "reference"},
    {"records", "registry", "cases"},
    {"answers"},
    {"reproducers", "report", "known_failures"},
    {"adapters"},
    {"expect"},
    {"checks"},
    {"plan"},
    {"run"},
    {"bench", "commands"},
    {"mutants"},
    {"cli"},
    {"__main__"},
]

#: The imports allowed to run against the layers, each with its reason (docs/architecture.md
#: names the same): (importing module, imported module), each a dotted prefix. An exception
#: that matches no import any more fails too: delete it here and in the page.
UPWARD_EXCEPTIONS: dict[tuple[str, str], str] = {}

#: Imports a check may make although they reach the oracle or ``expect/``, directly or through
#: what they import, each with its reason (docs/architecture.md names the same). None today: a
#: check reads the oracle's answers as the data and protocols of ``conformance/answers/``.
ORACLE_EXCEPTIONS: dict[tuple[str, str], str] = {}

#: What a check must not reach, directly or through any chain of imports (type hints included):
#: the oracle, and the code that computes its answers.
CHECKS_NEVER_REACH = (ORACLE, "conformance.expect")


def _package(module: str) -> str:
    """The package ``module`` belongs to: a subpackage, an entry module, or the vocabulary."""
    parts = module.split(".")
    if len(parts) == 1 or parts[1] in VOCABULARY:
        return "vocabulary"
    return parts[1]


def _layer(package: str) -> int:
    return next(i for i, layer in enumerate(LAYERS) if package in layer)


def _within(module: str, prefix: str) -> bool:
    return module == prefix or module.startswith(prefix + ".")


def _excepted(edge: tuple[str, str], exceptions: dict[tuple[str, str], str]) -> bool:
    return any(_within(edge[0], a) and _within(edge[1], b) for a, b in exceptions)


def _upward(graph: dict[str, set[str]], exceptions: dict[tuple[str, str], str]) -> list[str]:
    """Every import between packages that does not go down a layer, exceptions aside."""
    return sorted(
        f"{module} -> {target} ({_package(module)} -> {_package(target)})"
        for module, targets in graph.items()
        for target in targets
        if _package(module) != _package(target)
        and _layer(_package(module)) <= _layer(_package(target))
        and not _excepted((module, target), exceptions)
    )


def _reached(
    graph: dict[str, set[str]], sources: list[str], exceptions: dict[tuple[str, str], str]
) -> dict[str, list[str]]:
    """Each module reachable from ``sources`` by imports, with one chain that reaches it; the
    excepted imports are not followed. Importing a module runs its packages' ``__init__``
    first: those count as imports too."""
    chains = {s: [s] for s in sources}
    todo = list(sources)
    while todo:
        module = todo.pop()
        parts = module.split(".")
        parents = {".".join(parts[:i]) for i in range(1, len(parts))}
        for target in sorted(graph.get(module, set()) | parents):
            if target not in chains and not _excepted((module, target), exceptions):
                chains[target] = [*chains[module], target]
                todo.append(target)
    return chains


def _checks_reaching_the_oracle(graph: dict[str, set[str]]) -> list[str]:
    checks = sorted(m for m in graph if _within(m, "conformance.checks"))
    return sorted(
        " -> ".join(chain)
        for module, chain in _reached(graph, checks, ORACLE_EXCEPTIONS).items()
        if module.startswith(CHECKS_NEVER_REACH)
    )


def test_every_package_has_a_layer() -> None:
    """A new package (or entry module) fails until it is placed among the layers."""
    placed = set().union(*LAYERS)
    packages = {_package(m) for m in _graph()}
    assert packages - placed == set(), sorted(packages - placed)
    assert len(placed) == sum(len(layer) for layer in LAYERS)  # each package in one layer


def test_packages_import_only_downward() -> None:
    """The package graph runs one way: no import, type hints included, reaches a package of
    the same or a higher layer, except the few named with their reason."""
    graph = _graph(type_checking=True)
    assert _upward(graph, UPWARD_EXCEPTIONS) == []


def test_checks_reach_neither_the_oracle_nor_expect_even_indirectly() -> None:
    """A check reads the oracle's answers through its subject and plain data types: no chain
    of imports (type hints included) leads from a check to the oracle or to ``expect/``."""
    graph = _graph(type_checking=True)
    assert _checks_reaching_the_oracle(graph) == []


def test_each_named_exception_is_still_needed() -> None:
    graph = _graph(type_checking=True)
    edges = {(m, t) for m, targets in graph.items() for t in targets}
    for exceptions in (UPWARD_EXCEPTIONS, ORACLE_EXCEPTIONS):
        for pair, reason in exceptions.items():
            assert any(_excepted(e, {pair: reason}) for e in edges), f"stale exception {pair}"


def test_the_layer_rules_fail_on_a_new_arrow() -> None:
    """The rules find what they are about: an import added upward, one between two packages
    of a layer, and a new chain from a check to the oracle each fail."""
    graph = {m: set(t) for m, t in _graph(type_checking=True).items()}
    upward = {**graph, "conformance.records.results": {"conformance.run.plugin"}}
    assert _upward(upward, UPWARD_EXCEPTIONS) == [
        "conformance.records.results -> conformance.run.plugin (records -> run)"
    ]
    sideways = {**graph, "conformance.report.junit": {"conformance.reproducers.script"}}
    assert _upward(sideways, UPWARD_EXCEPTIONS) == [
        "conformance.report.junit -> conformance.reproducers.script (report -> reproducers)"
    ]
    # Down at every step (registry -> the oracle), yet a check reaches the oracle through it.
    indirect = {**graph, "conformance.registry.bounds": {"conformance.reference.core"}}
    assert _upward(indirect, UPWARD_EXCEPTIONS) == []
    assert any(
        chain.endswith("conformance.registry.bounds -> conformance.reference.core")
        for chain in _checks_reaching_the_oracle(indirect)
    )


def test_no_import_circles() -> None:
    graph = _graph(type_checking=True)
    assert len(graph) > 50  # the walk found the package
    try:
        graphlib.TopologicalSorter(graph).prepare()
    except graphlib.CycleError as exc:
        raise AssertionError(f"import circle: {' -> '.join(exc.args[1])}") from None


def test_reference_imports_no_framework_and_nothing_of_the_suite() -> None:
    graph = _graph()
    oracle = [m for m in graph if m.startswith(ORACLE)]
    assert len(oracle) > 40
    for module in oracle:
        assert not [d for d in graph[module] if not d.startswith(ORACLE)], module


def test_the_oracle_has_one_import_name() -> None:
    """Nothing imports the top-level ``reference``: a second name would load a second oracle
    (its own FAMILIES, its own Family class), and the wheel ships only ``conformance``."""
    assert (ROOT / "reference").resolve() == ROOT / "conformance" / "reference"
    offenders = []
    for path in [*ROOT.joinpath("tests").rglob("*.py"), *_modules().values()]:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0:
                names = [node.module or ""]
            offenders += [
                f"{path.name}:{node.lineno}" for n in names if n.split(".")[0] == "reference"
            ]
    assert not offenders, offenders


def test_checks_read_the_oracle_only_through_the_subject() -> None:
    """A check imports neither the oracle nor the code that computes expectations."""
    forbidden = (ORACLE, "conformance.expect.materialize", "conformance.expect.gradients")
    forbidden += (
        "conformance.expect.expectations",
        "conformance.expect.fresh_values",
        "conformance.plan.derived.variants",
    )
    graph = _graph()
    checks = [m for m in graph if m.startswith("conformance.checks")]
    assert len(checks) >= 7
    for module in checks:
        bad = sorted(d for d in graph[module] if d.startswith(forbidden))
        assert not bad, f"{module} imports {bad}"


def test_expectations_know_no_check_and_no_runner() -> None:
    """The oracle's answers are computed without knowing who reads them: ``expect/`` imports
    neither the checks nor the runner (the subject factory, which joins both, is the runner's)."""
    graph = _graph()
    expect = [m for m in graph if m.startswith("conformance.expect")]
    assert len(expect) >= 4
    for module in expect:
        bad = sorted(
            d for d in graph[module] if d.startswith(("conformance.checks", "conformance.run"))
        )
        assert not bad, f"{module} imports {bad}"


def test_each_role_is_a_package_and_the_top_level_is_shared_vocabulary() -> None:
    """Modules live in packages by role; the few at the top are the entry point and the small
    leaf modules every role shares (they import nothing of the suite)."""
    top = {p.stem for p in (ROOT / "conformance").glob("*.py")}
    assert top == {"__init__", "__main__"} | VOCABULARY, sorted(top)
    graph = _graph()
    for name in VOCABULARY:
        others = {
            d
            for d in graph[f"conformance.{name}"]
            if d.removeprefix("conformance.") not in VOCABULARY
        }
        assert not others, f"conformance.{name} imports {others}"
    for role in (
        "cases",
        "expect",
        "adapters",
        "registry",
        "checks",
        "plan",
        "run",
        "records",
        "report",
        "cli",
    ):
        assert (ROOT / "conformance" / role / "__init__.py").is_file(), role


def test_plan_needs_no_pytest() -> None:
    """The bench, the listing and any tool can plan items without pytest."""
    code = (
        "import sys; from conformance.plan.planner import plan; from conformance.run.config.settings import "
        "Settings, parse_options; from conformance.cases.builtin import builtin_cases;"
        "opts, rest = parse_options(['--family=Normal', '--framework=torch']);"
        "s = Settings.from_sources(opts, {}, [builtin_cases()]);"
        "specs = plan(s.selection); assert specs and not rest;"
        "assert 'pytest' not in sys.modules, 'pytest imported';"
        "print(len(specs))"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=False
    )
    assert proc.returncode == 0, proc.stderr
    assert int(proc.stdout) > 50


#: The frameworks and what they run on: only their adapters (and the mutants, which patch them)
#: may name them in code.
FRAMEWORKS = {"torch", "jax", "jaxlib", "numpyro", "gpytorch", "linear_operator"}


def _framework_mentions(path: Path) -> list[str]:
    """Imports of a framework, and string constants that are a framework's name or a dotted
    path into one (``"torch"``, ``"numpyro.distributions.Normal"``), docstrings aside."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    docstrings = {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef)
        and node.body
        and isinstance(node.body[0], ast.Expr)
        and isinstance(node.body[0].value, ast.Constant)
    }
    found = []
    for node in ast.walk(tree):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0:
            names = [node.module or ""]
        elif (
            isinstance(node, ast.Constant)
            and isinstance(node.value, str)
            and id(node) not in docstrings
        ):
            names = [node.value] if " " not in node.value.strip() else []
        found += [
            f"{path.relative_to(ROOT)}:{node.lineno}: {n}"
            for n in names
            if n.split(".")[0].lstrip("-=") in FRAMEWORKS or n.split("=")[-1] in FRAMEWORKS
        ]
    return found


def test_only_adapters_name_a_framework() -> None:
    """Everything framework-specific is an adapter's to say (its names, reported versions,
    what it does after a run, its commands): nothing else imports a framework or spells its
    name in code. The fault-injecting mutants patch frameworks by design."""
    allowed = (ROOT / "conformance" / "adapters", ROOT / "conformance" / "mutants")
    offenders = [
        mention
        for path in sorted((ROOT / "conformance").rglob("*.py"))
        if not any(path.is_relative_to(a) for a in allowed)
        for mention in _framework_mentions(path)
    ]
    assert not offenders, "\n".join(offenders)
    # The rule finds what it is about: the adapters do name their frameworks.
    assert _framework_mentions(ROOT / "conformance" / "adapters" / "torch" / "adapter.py")
