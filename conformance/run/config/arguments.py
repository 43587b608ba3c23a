"""How a run's command line is read before pytest sees it: shipped case ids as paths, whether
the arguments name paths, and option values joined to their options. Shared by the CLI and the
bench, which both start runs."""

from __future__ import annotations

import argparse
from functools import cache
from pathlib import Path
from typing import Any

from conformance.cases.builtin import builtin_cases
from conformance.run.config.options import PREFIX, add_options


def builtin_id_path(arg: str, cwd: Path | None = None) -> str:
    """A shipped case's id as given on the command line (``cases/beta.yaml::scalar[...]``,
    as results and reports name it) made a path pytest can find from any directory and from
    a wheel; anything else, and a ``cases/`` path that exists where the run starts, as given."""
    path, sep, rest = arg.partition("::")
    if arg.startswith("-") or not path.startswith("cases/"):
        return arg
    if ((cwd or Path.cwd()) / path).exists():
        return arg
    try:
        shipped = builtin_cases() / path.removeprefix("cases/")
    except FileNotFoundError:
        return arg
    return f"{shipped}{sep}{rest}" if shipped.exists() else arg


def has_paths(args: list[str]) -> bool:
    """Whether pytest args name a case root or path (then the built-in cases are not added)."""
    cases = ("--cases", prefixed("--cases"))
    if any(a.split("=", 1)[0] in cases for a in args):
        return True
    return any(_names_path(a) for a in args)


def _names_path(arg: str) -> bool:
    if arg.startswith("@"):  # pytest's argument file: one argument (e.g. a node id) per line
        path = Path(arg[1:])
        return path.is_file() and has_paths(path.read_text().split())
    return not arg.startswith("-") and Path(arg.split("::")[0]).exists()


#: Actions that take no value.
_FLAGS = {"store_true", "store_false", "count", argparse.BooleanOptionalAction}


@cache
def declared_options() -> tuple[tuple[tuple[str, ...], dict[str, Any]], ...]:
    """The suite's option declarations, (flags, how) each, as :func:`add_options` makes them:
    read here once for whatever needs to know the options before pytest does."""
    found: list[tuple[tuple[str, ...], dict[str, Any]]] = []
    add_options(lambda *flags, **how: found.append((flags, how)))
    return tuple(found)


@cache
def option_names() -> frozenset[str]:
    """Every long option of the suite's in its short spelling (``conformance run``'s), ``--no-``
    spellings of the boolean ones included."""
    names: set[str] = set()
    for flags, how in declared_options():
        names.update(flags)
        if how.get("action") is argparse.BooleanOptionalAction:
            names.update(f"--no-{f[2:]}" for f in flags)
    return frozenset(n for n in names if n.startswith("--"))


def prefixed(name: str) -> str:
    """``--device`` → ``--conformance-device`` (pytest's spelling of the suite's options)."""
    return PREFIX + name.removeprefix("--")


@cache
def pytest_option_names() -> frozenset[str]:
    """Every long option of the suite's as pytest knows it (``--conformance-device``)."""
    return frozenset(prefixed(n) for n in option_names())


def in_pytest_spelling(args: list[str]) -> list[str]:
    """``conformance run``'s short spellings made pytest's: ``--family=Normal`` →
    ``--conformance-family=Normal``; anything else (pytest's own options, the prefixed
    spelling, paths) as given."""
    out = []
    for arg in args:
        name, eq, value = arg.partition("=")
        out.append(prefixed(name) + eq + value if name in option_names() else arg)
    return out


@cache
def value_options() -> frozenset[str]:
    """Every long option of the suite's that takes a value, read from its declarations (and
    pytest's ``--deselect``, whose node id stays an id, see :func:`builtin_id_path`). pytest
    finds its rootdir before plugin options are known, so the value of ``--results out/r.json``
    would count as a path, and ``--known-failures my.yaml`` ran nothing; joined as
    ``--opt=value`` they do not."""
    names = {"--deselect"}
    for flags, how in declared_options():
        if how.get("action") not in _FLAGS:
            names.update(f for f in flags if f.startswith("--"))
            names.update(prefixed(f) for f in flags if f.startswith("--"))
    return frozenset(names)


def join_option_values(args: list[str]) -> list[str]:
    out: list[str] = []
    it = iter(args)
    for arg in it:
        if arg in value_options():
            value = next(it, None)
            out.append(arg if value is None else f"{arg}={value}")
        else:
            out.append(arg)
    return out


def value_error(args: list[str]) -> str | None:
    """What is wrong with a value of the suite's options in ``args`` (short spelling, values
    joined), as argparse says it (``argument --edges: invalid choice: 'maybe' (choose from
    'on', 'off')``), or None. Checked before pytest, whose message would name the option
    ``--conformance-edges`` and head it "usage: pytest.main()"."""
    parser = argparse.ArgumentParser(add_help=False, allow_abbrev=False, exit_on_error=False)
    add_options(parser.add_argument)
    try:
        parser.parse_known_args(args)
    except argparse.ArgumentError as exc:
        return str(exc)
    return None
