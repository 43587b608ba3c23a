"""``conformance``: a thin front over the pytest plugin.

``conformance run [pytest args]`` runs the suite (the built-in cases unless ``--cases`` or paths
are given) and writes reports/results.json. Exit codes: 0 all good, 1 mismatches, 2 usage or
case-file errors. ``conformance mutants`` runs it against replicas of known framework bugs.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from conformance.cases.builtin import builtin_cases
from conformance.kinds import Kind
from conformance.records.results import read_records
from conformance.report import commands as report_commands
from conformance.run.config.arguments import (
    builtin_id_path,
    has_paths,
    in_pytest_spelling,
    join_option_values,
)

if TYPE_CHECKING:
    from conformance.adapters.hooks import Command

EXIT_OK, EXIT_MISMATCH, EXIT_USAGE = 0, 1, 2
EXIT_INTERRUPTED = 130  # as a shell reports a process ended by SIGINT


#: What ``run`` and ``list`` say above the suite's own options in their ``--help``.
RUN_HELP = {
    "run": "Run the conformance suite (the built-in cases unless --cases or paths are given) "
    "and write results.json, index.html and junit.xml.",
    "list": "Collect as `run` would and print the item counts per family x framework, and "
    "per check; --ids prints every item id.",
}
PYTEST_NOTE = (
    "Any other argument goes to pytest, e.g. -n auto (parallel workers), -k EXPR, --lf, -x, "
    "node ids or case files. Options may also come from CONFORMANCE_* variables (README, "
    "'Configuration'). `pytest --help` lists pytest's own options."
)


def command_help(command: str) -> str:
    """``conformance run --help``: the suite's options first (pytest's 500 lines of help,
    headed "usage: pytest.main()", hid them), then where the rest go."""
    from conformance.run.config.options import add_options

    parser = argparse.ArgumentParser(
        prog=f"conformance {command}",
        usage=f"conformance {command} [options] [pytest arguments]",
        description=RUN_HELP[command],
        epilog=PYTEST_NOTE,
        add_help=False,
    )
    if command == "list":
        parser.add_argument("--ids", action="store_true", help="print every item id")
    add_options(parser.add_argument)
    return parser.format_help()


def misspelt_options(args: list[str]) -> str | None:
    """``--famly=Normal``: an option that is not the suite's but close to one of them (pytest
    would only say "unrecognized arguments", headed "pytest.main()"). Other unknown options
    are left to pytest, whose plugins may define them."""
    from conformance.names import misspelt_option
    from conformance.run.config.arguments import option_names, pytest_option_names

    return misspelt_option(args, option_names() | pytest_option_names() | {"--ids"})


def pytest_args_of(args: list[str]) -> list[str]:
    """What ``run`` and ``list`` give pytest: option values joined to their options, the
    suite's options in pytest's prefixed spelling, and the built-in cases unless the arguments
    name cases or paths."""
    out = in_pytest_spelling(join_option_values(list(args)))
    if not has_paths(out):
        out.append(f"--conformance-cases={builtin_cases()}")
    return out


def option_problem(args: list[str]) -> str | None:
    """A misspelt option of the suite's, or a value argparse refuses (a choice, a count), in
    ``run``'s or ``list``'s arguments; None when there is none."""
    from conformance.run.config.arguments import value_error

    return misspelt_options(args) or value_error(join_option_values(list(args)))


def _wants_help(args: list[str]) -> bool:
    return any(a in ("-h", "--help") for a in args)


def run(pytest_args: list[str]) -> int:
    import pytest

    if _wants_help(pytest_args):
        sys.stdout.write(command_help("run"))
        return EXIT_OK
    problem = option_problem(pytest_args)
    if problem:
        print(f"conformance run: error: {problem}", file=sys.stderr)
        return EXIT_USAGE
    args = [builtin_id_path(a) for a in pytest_args_of(pytest_args)]
    # This process imported the package before pytest could register it for rewriting.
    args = ["-W", "ignore::pytest.PytestAssertRewriteWarning", *args]
    if os.environ.get("PYTEST_DISABLE_PLUGIN_AUTOLOAD"):
        args = ["-p", "conformance.run.plugin", *args]
    if os.environ.get("CONFORMANCE_MUTANT") and "conformance.mutants.plugin" not in args:
        args = ["-p", "conformance.mutants.plugin", *args]  # CONFORMANCE_MUTANT=name: apply it
    from conformance.run.config.options import ShortSpelling

    code = int(pytest.main(with_worker(args), plugins=[ShortSpelling()]))
    return _exit_code(code, args)


#: Arguments after which the run keeps its process layout: xdist already configured, or
#: something a worker cannot do (a debugger) or need not (collection only, help).
_AS_GIVEN = {"--pdb", "--trace", "--co", "--collect-only", "-h", "--help", "--version", "-d"}
_XDIST_OPTIONS = {"-n", "--numprocesses", "--dist", "--tx", "--maxprocesses"}
#: Workers xdist may replace before it gives up on the rest of the run. Its default (4 per
#: worker) guards against a worker that dies while collecting; here each crash is one item's,
#: and a framework bug that segfaults in twenty items must not cost the results of the others.
MAX_WORKER_RESTARTS = 100


def _leaves_as_given(arg: str) -> bool:
    if arg in _AS_GIVEN or arg.split("=", 1)[0] in _XDIST_OPTIONS:
        return True
    return arg.startswith("-n") and (arg[2:].isdigit() or arg[2:] in ("auto", "logical"))


def with_worker(args: list[str]) -> list[str]:
    """``-n 1`` unless the arguments choose otherwise: a framework that segfaults, aborts, hangs
    in C or exhausts memory then costs its item (recorded as ``crash``/``timeout``), and xdist
    starts a new worker for the rest; in-process (``-n 0``), it would end the whole run."""
    import importlib.util

    if importlib.util.find_spec("xdist") is None:
        return args
    given = [*args, *shlex.split(os.environ.get("PYTEST_ADDOPTS", ""))]
    pairs = list(zip(given, [*given[1:], None], strict=True))
    if any(a == "-pno:xdist" or (a == "-p" and b == "no:xdist") for a, b in pairs):
        return args
    out = list(args)
    if not any(a.split("=", 1)[0] == "--max-worker-restart" for a in given):
        out.append(f"--max-worker-restart={MAX_WORKER_RESTARTS}")
    if not any(_leaves_as_given(a) for a in given):
        out += ["-n", "1"]
    return out


def list_items(pytest_args: list[str]) -> int:
    """Collect as ``run`` would and print the coverage; ``--ids`` prints every item id."""
    from conformance.commands import listing

    if _wants_help(pytest_args):
        sys.stdout.write(command_help("list"))
        return EXIT_OK
    show_ids = "--ids" in pytest_args
    given = [a for a in pytest_args if a != "--ids"]
    problem = option_problem(given)
    if problem:
        print(f"conformance list: error: {problem}", file=sys.stderr)
        return EXIT_USAGE
    args = pytest_args_of(given)
    code, items, output = listing.collect(
        ["-W", "ignore::pytest.PytestAssertRewriteWarning", *args]
    )
    if code not in (0, 5):
        sys.stdout.write(output)
        return EXIT_USAGE
    for line in output.splitlines():
        if line.startswith("conformance: nothing collected"):
            print(f"conformance list: {line.removeprefix('conformance: ')}", file=sys.stderr)
    if show_ids:
        sys.stdout.write("".join(f"{i['nodeid']}\n" for i in items))
    sys.stdout.write(listing.summary(items) + "\n")
    has_errors = any(i.get("check") == "load" for i in items)
    return EXIT_USAGE if has_errors or not items else EXIT_OK


def _results_path(args: list[str]) -> Path:
    """Where the run wrote results.json (``args`` are pytest's: joined and prefixed)."""
    for a in args:
        if a.startswith("--conformance-results="):
            return Path(a.split("=", 1)[1])
    from conformance.run.config.settings import DEFAULT_RESULTS

    return Path(os.environ.get("CONFORMANCE_RESULTS") or DEFAULT_RESULTS)


def _exit_code(code: int, args: list[str]) -> int:
    if code == 0:
        return EXIT_OK
    if code in (4, 5):  # usage error, or nothing collected
        return EXIT_USAGE
    if code == 2:  # pytest's INTERRUPTED: results.json is complete and says "interrupted"
        return EXIT_INTERRUPTED
    if code == 1:
        path = _results_path(args)
        try:
            records = read_records(path)
        except (OSError, ValueError, KeyError, TypeError):
            return EXIT_MISMATCH
        if any(r.kind == Kind.CASE_ERROR for r in records):
            return EXIT_USAGE
        return EXIT_MISMATCH
    return code


def _emit(text: str, out: Path | None) -> int:
    """A generated page or document: to stdout, or to ``out``."""
    if out is None:
        sys.stdout.write(text)
    else:
        out.write_text(text, encoding="utf-8")
    return EXIT_OK


def export_schema(out: Path | None, results: bool = False) -> int:
    from conformance.cases.case_model import json_schema
    from conformance.records.schema import results_schema

    schema = results_schema() if results else json_schema()
    return _emit(json.dumps(schema, indent=2, ensure_ascii=False) + "\n", out)


def export_conventions(out: Path | None) -> int:
    from conformance.commands.conventions_page import render

    return _emit(render(), out)


def export_edges(
    paths: list[Path], families: list[str], out: Path | None, bulk: bool = False
) -> int:
    """``conformance edges``: the generated edge cases as case files, one per case file that
    has an anchor — printed (YAML documents separated by ``---``) or written to ``out``/."""
    from fnmatch import fnmatch

    from conformance import reference
    from conformance.cases.loader import find_case_files, load_case_file
    from conformance.names import unmatched_pattern
    from conformance.plan.derived.edges import edge_yaml
    from conformance.plan.planner import case_file_id

    for pattern in families:
        problem = unmatched_pattern("family", pattern, reference.family_names())
        if problem:
            print(f"conformance edges: error: --family {problem}", file=sys.stderr)
            return EXIT_USAGE
    roots = paths or [builtin_cases()]
    missing = [str(p) for p in roots if not p.exists()]
    if missing:
        print(f"conformance edges: error: no such file or directory: {', '.join(missing)}",
              file=sys.stderr)  # fmt: skip
        return EXIT_USAGE
    files = [f for root in roots for f in find_case_files(root)]
    if not files:
        print(f"conformance edges: no case files in {', '.join(map(str, roots))}", file=sys.stderr)
        return EXIT_USAGE
    docs: list[tuple[Path, str]] = []
    for path in files:
        display = case_file_id(path, tuple(roots), Path.cwd())
        cases = load_case_file(path, display=display).cases
        if families:
            cases = [c for c in cases if any(fnmatch(c.family, f) for f in families)]
        text = edge_yaml(cases, bulk=bulk)
        if text:
            docs.append((path, text))
    if not docs:
        print(
            "conformance edges: no anchor case (scalar parameters and value) selected",
            file=sys.stderr,
        )
        return EXIT_USAGE
    if out is None:
        sys.stdout.write("---\n".join(text for _, text in docs))
        return EXIT_OK
    out.mkdir(parents=True, exist_ok=True)
    for path, text in docs:
        (out / f"{path.stem}.edges.yaml").write_text(text, encoding="utf-8")
    print(f"conformance edges: {len(docs)} files in {out}")
    return EXIT_OK


def export_coverage(fmt: str, out: Path | None) -> int:
    """``conformance coverage``: every shipped distribution class and whether items build it."""
    from conformance.adapters import all_adapters
    from conformance.commands.coverage import (
        as_json,
        coverage,
        load_exclusions,
        render_markdown,
        render_text,
    )
    from conformance.plan.planner import plan
    from conformance.run.config.settings import Settings, parse_options

    settings = Settings.from_sources(parse_options([f"--cases={builtin_cases()}"])[0], {})
    found = coverage(all_adapters(), plan(settings.selection), load_exclusions())
    if fmt == "json":
        text = json.dumps(as_json(found), indent=2) + "\n"
    elif fmt == "markdown":
        text = render_markdown(found)
    else:
        text = render_text(found)
    return _emit(text, out)


def export_triage(results: Path, out: Path | None) -> int:
    """``conformance triage``: known-failure entries drafted from a run's failing records."""
    from conformance.known_failures.triage import draft_entries, render

    try:
        records = read_records(results)
    except (OSError, ValueError, KeyError, TypeError) as exc:
        print(f"conformance triage: cannot read {results}: {exc}", file=sys.stderr)
        return EXIT_USAGE
    entries = draft_entries(records)
    code = _emit(render(entries, str(results)), out)
    if out is not None:
        print(f"conformance triage: {len(entries)} draft entries in {out}", file=sys.stderr)
    return code


def init_command(target: Path, force: bool) -> int:
    """``conformance init DIR``: see :mod:`conformance.commands.scaffold`."""
    from conformance.commands import scaffold

    try:
        written = scaffold.scaffold(target, force, scaffold.installed_commit())
    except FileExistsError as exc:
        print(f"conformance init: error: these exist (--force overwrites): {exc}", file=sys.stderr)
        return EXIT_USAGE
    for path in written:
        print(f"wrote {path}")
    print(f"\nRun them: {scaffold.run_command(target)}")
    return EXIT_OK


def _adapter_commands() -> dict[str, Command]:
    """The subcommands the built-in adapters bring (NumPyro's ``jax-cache``), by name."""
    from conformance.adapters import BUILTIN

    return {c.name: c for adapter in BUILTIN for c in adapter.commands()}


def version_line() -> str:
    """``conformance --version``: the suite's version and the frameworks it would test."""
    from conformance import __version__
    from conformance.adapters import reported_packages
    from conformance.versions import installed_version

    found = [
        f"{name} {v}" for name in reported_packages() if (v := installed_version(name)) is not None
    ]
    return f"conformance {__version__} ({', '.join(found) or 'no framework installed'})"


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["--version"]:
        print(version_line())
        return EXIT_OK
    from conformance.names import SuggestingParser

    parser = SuggestingParser(prog="conformance", description="Distribution conformance suite.")
    parser.add_argument(
        "--version", action="store_true", help="print the version and the frameworks' versions"
    )
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser(
        "run",
        help="run the suite; other arguments go to pytest",
        description="Run the conformance suite. Every other argument is passed to pytest "
        "(--framework, --family, --check, --dtype, --device, --cases, -n auto, -k …).",
        add_help=False,
    )
    sub.add_parser(
        "list",
        help="what a run would collect (family × framework counts); other arguments go to pytest",
        add_help=False,
    )
    sub.add_parser(
        "mutants",
        help="inject catalogued framework bugs at run time and print the kill table",
        add_help=False,
    )
    sub.add_parser(
        "calibrate",
        help="rerun the sampling items under N other seeds; the false-failure rate observed "
        "beside the one stated",
        add_help=False,
    )
    sub.add_parser(
        "bench",
        help="time the suite (-n 0, -n 2), a bare-loop baseline, and where the time goes",
        add_help=False,
    )
    schema = sub.add_parser("schema", help="export the case-file (or results.json) JSON Schema")
    schema.add_argument("-o", "--output", type=Path, help="file to write (default: stdout)")
    schema.add_argument(
        "--results", action="store_true", help="results.json's schema instead of the case file's"
    )
    conventions = sub.add_parser(
        "conventions", help="the registry's framework conventions as Markdown (docs/conventions.md)"
    )
    conventions.add_argument("-o", "--output", type=Path, help="file to write (default: stdout)")
    cover = sub.add_parser(
        "coverage",
        help="every distribution class the installed frameworks ship, covered or not, and why",
        description="Each installed framework's public distribution classes (its adapter's "
        "declaration) with their status: covered (the families, checks and item counts of "
        "the default run that build it), excluded (with the reason in the registry's "
        "coverage.yaml) or missing (no family builds it yet).",
    )
    cover.add_argument(
        "--format", choices=("text", "json", "markdown"), default="text", help="output format"
    )
    cover.add_argument("-o", "--output", type=Path, help="file to write (default: stdout)")
    triage = sub.add_parser(
        "triage",
        help="draft known-failure entries from a run's failing records, grouped by symptom",
        description="One entry per family × framework × kind × symptom (the exception, the "
        "partial derivative) and set of checks × dtypes, case lists exact; each reason is a "
        "draft for a person to write.",
    )
    triage.add_argument(
        "results", nargs="?", type=Path, default=Path("reports/results.json"),
        help="results.json of the run (default: reports/results.json)",
    )  # fmt: skip
    triage.add_argument("-o", "--output", type=Path, help="file to write (default: stdout)")
    edges = sub.add_parser(
        "edges",
        help="export the generated edge cases (--edges=on runs them) as case-file YAML",
        description="Each family's parameters at the ends of their domains and its value at "
        "the ends of its support, moved one at a time from the first case of each case file "
        "with scalar parameters and value (see docs/case-format.md).",
    )
    edges.add_argument(
        "paths",
        nargs="*",
        type=Path,
        help="case files or directories (default: the built-in cases)",
    )
    edges.add_argument("--family", action="append", default=[], help="only these families (glob)")
    edges.add_argument("-o", "--output", type=Path, help="directory to write <file>.edges.yaml to")
    edges.add_argument(
        "--bulk",
        action="store_true",
        help="also large magnitudes and values where the density lives (as --edges=bulk)",
    )
    brought = _adapter_commands()
    for command in brought.values():
        command.arguments(
            sub.add_parser(command.name, help=command.help, description=command.description)
        )
    init = sub.add_parser(
        "init",
        help="write the downstream example into a repository: cases, known failures, a workflow",
        description="Write conformance/cases/, conformance/known_failures.yaml and "
        ".github/workflows/conformance.yml (pull requests --quick, nightly the full run; the "
        "reusable workflow pinned to the commit this suite was installed from) under DIR.",
    )
    init.add_argument("dir", nargs="?", type=Path, default=Path("."), help="default: here")
    init.add_argument("--force", action="store_true", help="overwrite files that exist")
    report_commands.add_parsers(sub)
    if argv and not argv[0].startswith("-") and argv[0] not in sub.choices:
        from conformance.names import unknown_name

        print(
            f"conformance: error: {unknown_name('command', argv[0], sub.choices, 'is no')}",
            file=sys.stderr,
        )
        return EXIT_USAGE
    if argv and argv[0] == "run":
        return run(argv[1:])
    if argv and argv[0] == "list":
        return list_items(argv[1:])
    if argv and argv[0] == "bench":
        from conformance.bench import runner as bench_runner

        return bench_runner.main(argv[1:])
    if argv and argv[0] == "calibrate":
        from conformance.commands import calibrate

        return calibrate.main(argv[1:])
    if argv and argv[0] == "mutants":
        from conformance.mutants import runner

        return runner.main(argv[1:])
    ns = parser.parse_args(argv)
    if ns.command == "schema":
        return export_schema(ns.output, ns.results)
    if ns.command == "conventions":
        return export_conventions(ns.output)
    if ns.command == "coverage":
        return export_coverage(ns.format, ns.output)
    if ns.command == "triage":
        return export_triage(ns.results, ns.output)
    if ns.command == "edges":
        families = [f for given in ns.family for f in given.split(",") if f]
        return export_edges(ns.paths, families, ns.output, ns.bulk)
    if ns.command == "init":
        return init_command(ns.dir, ns.force)
    if ns.command in brought:
        return brought[ns.command].run(ns)
    if ns.command in report_commands.COMMANDS:
        return report_commands.run_command(ns)
    parser.error(f"unknown command {ns.command}")
    return EXIT_USAGE


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
