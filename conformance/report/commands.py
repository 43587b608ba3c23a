"""``conformance report`` and ``conformance diff``: fronts over publish and diff.

Kept apart from ``conformance.cli`` so the CLI only wires subcommands; nothing heavy (jinja2,
the templates) is imported until one of these commands runs.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from conformance.names import unknown_name

EXIT_OK, EXIT_FAILING, EXIT_USAGE = 0, 1, 2
COMMANDS = ("report", "diff")
#: What ``conformance diff --fail-on`` can fail on (see ``diff.failing_changes``).
FAIL_ON: dict[str, str] = {
    "regression": "an item that passed now fails or errors",
    "new-failure": "a new item (not in the old run) fails or errors",
    "removed": "an item of the old run is missing from the new one",
    "changed": "any outcome change but a fix (regressions and other changes)",
}


def add_parsers(sub: argparse._SubParsersAction) -> None:
    report = sub.add_parser(
        "report",
        help="render the HTML report (and reproducer scripts) from results.json",
        description="Render index.html from results.json alone. Several files are the shards "
        "of one run: their records are merged (a nodeid in two shards is an error) and their "
        "counts summed. Reproducer scripts go to reproducers/ beside the HTML.",
    )
    report.add_argument("results", nargs="+", type=Path, help="results.json (or its shards)")
    report.add_argument(
        "-o", "--output", type=Path, help="HTML file (default: index.html beside the first input)"
    )
    report.add_argument(
        "--junit", type=Path, metavar="PATH", help="also write one JUnit XML of every record"
    )
    report.add_argument(
        "--summary",
        type=Path,
        metavar="PATH",
        help="append a Markdown summary (counts, failures by family × framework), e.g. to "
        "$GITHUB_STEP_SUMMARY",
    )
    report.add_argument("--artifact-url", metavar="URL", help="the summary's link to the report")
    report.add_argument("--title", default="", help="the summary's title (e.g. the Python version)")
    diff = sub.add_parser(
        "diff",
        help="compare two results.json: regressions, fixes, changes, new/removed items",
        description="List regressions (passed → failed/error), fixes (failed/error → passed), "
        "other outcome changes, and new and removed items. Exits 0 whatever changed, "
        "unless --fail-on names a kind of change that happened (then 1).",
    )
    diff.add_argument("old", type=Path, help="results.json of the earlier run")
    diff.add_argument("new", type=Path, help="results.json of the later run")
    diff.add_argument("--html", type=Path, metavar="OUT", help="also write the diff as HTML")
    diff.add_argument(
        "--fail-on",
        metavar="WHAT",
        type=_fail_on,
        default=[],
        help="exit 1 when the diff has these changes (comma-separated): "
        + "; ".join(f"{k}: {v}" for k, v in FAIL_ON.items()),
    )


def _fail_on(text: str) -> list[str]:
    names = [n.strip() for n in text.split(",") if n.strip()]
    for name in names:
        if name not in FAIL_ON:
            raise argparse.ArgumentTypeError(unknown_name("change", name, FAIL_ON, "is no"))
    return names


def run_command(ns: argparse.Namespace) -> int:
    from conformance.report.merge import ResultsError

    try:
        if ns.command == "report":
            code = _report(ns.results, ns.output)
            _ci_files(ns)
            return code
        return _diff(ns.old, ns.new, ns.html, ns.fail_on)
    except ResultsError as exc:
        print(f"conformance {ns.command}: error: {exc}", file=sys.stderr)
        return EXIT_USAGE


def _report(paths: list[Path], output: Path | None) -> int:
    from conformance.report.publish import publish
    from conformance.report.reproducers import DIRNAME

    published = publish(paths, output)
    if published.incomplete:
        print(f"conformance report: warning: {published.incomplete}", file=sys.stderr)
    print(f"wrote {published.html}")
    if published.reproducers:
        print(
            f"wrote {len(published.reproducers)} reproducer scripts to {published.html.parent / DIRNAME}"
        )
    return EXIT_OK


def _ci_files(ns: argparse.Namespace) -> None:
    """``--junit`` and ``--summary``: read from the same (merged) records as the report."""
    if ns.junit is None and ns.summary is None:
        return
    from conformance.report import ci
    from conformance.report.merge import load_results_files

    results = load_results_files(ns.results)
    if ns.junit is not None:
        ci.write(ns.junit, ci.junit_xml(results))
        print(f"wrote {ns.junit}")
    if ns.summary is not None:
        ci.write(ns.summary, ci.summary_markdown(results, ns.artifact_url, ns.title), append=True)
        print(f"wrote the summary to {ns.summary}")


def _diff(old: Path, new: Path, html: Path | None, fail_on: list[str]) -> int:
    from conformance.report.diff import diff_html, diff_results, diff_text, failing_changes
    from conformance.report.merge import load_results_files

    result = diff_results(load_results_files([old]), load_results_files([new]), str(old), str(new))
    sys.stdout.write(diff_text(result))
    if html is not None:
        from conformance.report.html import write_text_atomic

        write_text_atomic(html, diff_html(result))
        print(f"wrote {html}")
    failing = failing_changes(result, fail_on)
    if failing:
        found = ", ".join(f"{n} {name}" for name, n in failing.items())
        print(f"conformance diff: failing on {found} (--fail-on={','.join(fail_on)})")
        return EXIT_FAILING
    return EXIT_OK
