"""``conformance``: a thin front over the pytest plugin.

``conformance run [pytest args]`` runs the suite (the built-in cases unless ``--cases`` or paths
are given) and writes reports/results.json. Exit codes: 0 all good, 1 mismatches, 2 usage or
case-file errors.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

from conformance.report import commands as report_commands

EXIT_OK, EXIT_MISMATCH, EXIT_USAGE = 0, 1, 2


def builtin_cases() -> Path:
    """The shipped cases: ``cases/`` beside the package in a checkout, or inside the wheel."""
    here = Path(__file__).resolve().parent
    for candidate in (here.parent / "cases", here / "builtin_cases"):
        if candidate.is_dir():
            return candidate
    raise FileNotFoundError("no built-in cases found (neither ../cases nor builtin_cases)")


def _has_paths(args: list[str]) -> bool:
    """Whether pytest args name a case root or path (then the built-in cases are not added)."""
    if any(a == "--cases" or a.startswith("--cases=") for a in args):
        return True
    return any(not a.startswith("-") and Path(a.split("::")[0]).exists() for a in args)


#: Our options that take a value. pytest finds its rootdir before plugin options are known, so
#: the value of ``--results out/r.json`` would count as a path; ``--results=out/r.json`` does not.
VALUE_OPTIONS = (
    "--cases",
    "--framework",
    "--family",
    "--check",
    "--dtype",
    "--device",
    "--adapter",
    "--results",
)


def join_option_values(args: list[str]) -> list[str]:
    out: list[str] = []
    it = iter(args)
    for arg in it:
        if arg in VALUE_OPTIONS:
            value = next(it, None)
            out.append(arg if value is None else f"{arg}={value}")
        else:
            out.append(arg)
    return out


def run(pytest_args: list[str]) -> int:
    import pytest

    args = join_option_values(list(pytest_args))
    if not _has_paths(args):
        args += [f"--cases={builtin_cases()}"]
    # This process imported the package before pytest could register it for rewriting.
    args = ["-W", "ignore::pytest.PytestAssertRewriteWarning", *args]
    if os.environ.get("PYTEST_DISABLE_PLUGIN_AUTOLOAD"):
        args = ["-p", "conformance.plugin", *args]
    code = int(pytest.main(args))
    return _exit_code(code, args)


def list_items(pytest_args: list[str]) -> int:
    """Collect as ``run`` would and print the coverage; ``--ids`` prints every item id."""
    from conformance import listing

    show_ids = "--ids" in pytest_args
    args = join_option_values([a for a in pytest_args if a != "--ids"])
    if not _has_paths(args):
        args += [f"--cases={builtin_cases()}"]
    code, items, output = listing.collect(
        ["-W", "ignore::pytest.PytestAssertRewriteWarning", *args]
    )
    if code not in (0, 5):
        sys.stdout.write(output)
        return EXIT_USAGE
    if show_ids:
        sys.stdout.write("".join(f"{i['nodeid']}\n" for i in items))
    sys.stdout.write(listing.summary(items) + "\n")
    has_errors = any(i.get("check") == "load" for i in items)
    return EXIT_USAGE if has_errors or not items else EXIT_OK


def _results_path(args: list[str]) -> Path:
    for i, a in enumerate(args):
        if a == "--results" and i + 1 < len(args):
            return Path(args[i + 1])
        if a.startswith("--results="):
            return Path(a.split("=", 1)[1])
    from conformance.settings import DEFAULT_RESULTS

    return Path(os.environ.get("CONFORMANCE_RESULTS") or DEFAULT_RESULTS)


def _exit_code(code: int, args: list[str]) -> int:
    if code == 0:
        return EXIT_OK
    if code in (4, 5):  # usage error, or nothing collected
        return EXIT_USAGE
    if code == 1:
        path = _results_path(args)
        try:
            records = json.loads(path.read_text())["records"]
        except (OSError, ValueError, KeyError):
            return EXIT_MISMATCH
        if any(r.get("kind") == "case_error" for r in records):
            return EXIT_USAGE
        return EXIT_MISMATCH
    return code


def export_schema(out: Path | None) -> int:
    from conformance.case_model import json_schema

    text = json.dumps(json_schema(), indent=2, ensure_ascii=False) + "\n"
    if out is None:
        sys.stdout.write(text)
    else:
        out.write_text(text, encoding="utf-8")
    return EXIT_OK


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = argparse.ArgumentParser(
        prog="conformance", description="Distribution conformance suite."
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
    schema = sub.add_parser("schema", help="export the case-file JSON Schema")
    schema.add_argument("-o", "--output", type=Path, help="file to write (default: stdout)")
    report_commands.add_parsers(sub)
    if argv and argv[0] == "run":
        return run(argv[1:])
    if argv and argv[0] == "list":
        return list_items(argv[1:])
    ns = parser.parse_args(argv)
    if ns.command == "schema":
        return export_schema(ns.output)
    if ns.command in report_commands.COMMANDS:
        return report_commands.run_command(ns)
    parser.error(f"unknown command {ns.command}")
    return EXIT_USAGE


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
