"""``conformance edges``: the generated edge cases as case files, one per case file that has an
anchor, printed (YAML documents separated by ``---``) or written to ``-o DIR``."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from conformance.cases.builtin import builtin_cases
from conformance.cli.command import EXIT_OK, EXIT_USAGE, Command


def _arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "paths",
        nargs="*",
        type=Path,
        help="case files or directories (default: the built-in cases)",
    )
    parser.add_argument("--family", action="append", default=[], help="only these families (glob)")
    parser.add_argument("-o", "--output", type=Path, help="directory to write <file>.edges.yaml to")
    parser.add_argument(
        "--bulk",
        action="store_true",
        help="also large magnitudes and values where the density lives (as --edges=bulk)",
    )


def _run(ns: argparse.Namespace) -> int:
    families = [f for given in ns.family for f in given.split(",") if f]
    return export_edges(ns.paths, families, ns.output, ns.bulk)


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


COMMAND = Command(
    name="edges",
    help="export the generated edge cases (--edges=on runs them) as case-file YAML",
    description="Each family's parameters at the ends of their domains and its value at "
    "the ends of its support, moved one at a time from the first case of each case file "
    "with scalar parameters and value (see docs/case-format.md).",
    arguments=_arguments,
    run=_run,
)
