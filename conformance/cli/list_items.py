"""``conformance list``: collect as ``run`` would and print the coverage; ``--ids`` prints every
item id. Exit 2 when nothing is collected or a case file fails to load."""

from __future__ import annotations

import sys

from conformance.cli.command import EXIT_OK, EXIT_USAGE, ForwardingCommand
from conformance.cli.pytest_front import command_help, option_problem, pytest_args_of, wants_help


def list_items(pytest_args: list[str]) -> int:
    """Collect as ``run`` would and print the coverage; ``--ids`` prints every item id."""
    from conformance.commands import listing

    if wants_help(pytest_args):
        sys.stdout.write(command_help("list"))
        return EXIT_OK
    show_ids = "--ids" in pytest_args
    given = [a for a in pytest_args if a != "--ids"]
    problem = option_problem(given)
    if problem:
        print(f"conformance list: error: {problem}", file=sys.stderr)
        return EXIT_USAGE
    args = pytest_args_of(given)
    code, items, output, not_offered = listing.collect(
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
    sys.stdout.write(listing.not_offered_section(not_offered))
    has_errors = any(i.get("check") == "load" for i in items)
    return EXIT_USAGE if has_errors or not items else EXIT_OK


COMMAND = ForwardingCommand(
    name="list",
    help="what a run would collect (family × framework counts); other arguments go to pytest",
    run=list_items,
)
