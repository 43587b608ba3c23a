"""What ``conformance report`` and ``conformance diff`` do: fronts over publish and diff.

Their arguments are parsed in ``conformance.cli.report`` and ``conformance.cli.diff``; nothing
heavy (jinja2, the templates) is imported until one of these functions runs.
"""

from __future__ import annotations

import sys
from pathlib import Path

EXIT_OK, EXIT_FAILING = 0, 1
#: What ``conformance diff --fail-on`` can fail on (see ``diff.failing_changes``).
FAIL_ON: dict[str, str] = {
    "regression": "an item that passed now fails or errors",
    "new-failure": "a new item (not in the old run) fails or errors",
    "removed": "an item of the old run is missing from the new one",
    "changed": "any outcome change but a fix (regressions and other changes)",
}


def report(paths: list[Path], output: Path | None) -> int:
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


def ci_files(
    paths: list[Path],
    junit: Path | None,
    summary: Path | None,
    artifact_url: str | None,
    title: str,
) -> None:
    """``--junit`` and ``--summary``: read from the same (merged) records as the report."""
    if junit is None and summary is None:
        return
    from conformance.report import ci
    from conformance.report.merge import load_results_files

    results = load_results_files(paths)
    if junit is not None:
        ci.write(junit, ci.junit_xml(results))
        print(f"wrote {junit}")
    if summary is not None:
        ci.write(summary, ci.summary_markdown(results, artifact_url, title), append=True)
        print(f"wrote the summary to {summary}")


def diff(old: Path, new: Path, html: Path | None, fail_on: list[str]) -> int:
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
