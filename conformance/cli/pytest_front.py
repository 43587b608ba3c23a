"""What ``run`` and ``list`` share: their ``--help``, and their arguments checked and translated
for pytest.

Both pass every argument they do not know to pytest, so argparse never sees them: the suite's own
options are checked here (a misspelling, a value argparse refuses) before pytest would only say
"unrecognized arguments", headed "pytest.main()".
"""

from __future__ import annotations

import argparse

from conformance.cases.builtin import builtin_cases
from conformance.run.config.arguments import has_paths, in_pytest_spelling, join_option_values

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


def wants_help(args: list[str]) -> bool:
    return any(a in ("-h", "--help") for a in args)


def misspelt_options(args: list[str]) -> str | None:
    """``--famly=Normal``: an option that is not the suite's but close to one of them (pytest
    would only say "unrecognized arguments", headed "pytest.main()"). Other unknown options
    are left to pytest, whose plugins may define them."""
    from conformance.names import misspelt_option
    from conformance.run.config.arguments import option_names, pytest_option_names

    return misspelt_option(args, option_names() | pytest_option_names() | {"--ids"})


def option_problem(args: list[str]) -> str | None:
    """A misspelt option of the suite's, or a value argparse refuses (a choice, a count), in
    ``run``'s or ``list``'s arguments; None when there is none."""
    from conformance.run.config.arguments import value_error

    return misspelt_options(args) or value_error(join_option_values(list(args)))


def pytest_args_of(args: list[str]) -> list[str]:
    """What ``run`` and ``list`` give pytest: option values joined to their options, the
    suite's options in pytest's prefixed spelling, and the built-in cases unless the arguments
    name cases or paths."""
    out = in_pytest_spelling(join_option_values(list(args)))
    if not has_paths(out):
        out.append(f"--conformance-cases={builtin_cases()}")
    return out
