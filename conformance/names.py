"""How a name that matches nothing is reported: what it is not, the closest known name, and
the known names, so a typo in an option or a known-failure file is fixed in one read."""

from __future__ import annotations

import argparse
import difflib
import fnmatch
import re
from collections.abc import Iterable

MAX_LISTED = 25


def unknown_name(what: str, name: str, known: Iterable[str], verb: str = "matches no") -> str:
    """``'Norml' matches no family (did you mean 'Normal'?); known: Bernoulli, …``."""
    known = sorted(str(k) for k in known)  # a str enum's member reads as its value, not its repr
    close = difflib.get_close_matches(name, known, n=1)
    hint = f" (did you mean {close[0]!r}?)" if close else ""
    listed = ", ".join(known[:MAX_LISTED]) + (", …" if len(known) > MAX_LISTED else "")
    return f"{name!r} {verb} {what}{hint}; known: {listed}"


def unmatched_pattern(what: str, pattern: str, known: Iterable[str]) -> str | None:
    """What is wrong with a glob (``--family``, a known-failure ``family:``) that matches none
    of the ``known`` names, or None when it matches one."""
    known = list(known)
    if any(fnmatch.fnmatchcase(name, pattern) for name in known):
        return None
    return unknown_name(what, pattern, known)


def unknown_options(args: Iterable[str], known: Iterable[str]) -> str | None:
    """``--famly=Normal`` among ``args``: "unknown option --famly (did you mean --family?)",
    for the first option that is not ``known``; None when every one is."""
    known = sorted(known)
    for arg in args:
        name = arg.split("=", 1)[0]
        if not name.startswith("-") or name in known:
            continue
        close = difflib.get_close_matches(name, known, n=1, cutoff=0.6)
        hint = f" (did you mean {close[0]}?)" if close else ""
        return f"unknown option {name}{hint}; its options: {', '.join(known)}"
    return None


def misspelt_option(args: Iterable[str], known: Iterable[str]) -> str | None:
    """An option among ``args`` that is not ``known`` but close to one of them ("unknown
    option --famly (did you mean --family?)"); other unknown options are left alone (they may
    be pytest's or a plugin's)."""
    known = sorted(known)
    for arg in args:
        name = arg.split("=", 1)[0]
        if not name.startswith("--") or name in known:
            continue
        close = difflib.get_close_matches(name, known, n=1, cutoff=0.8)
        if close:
            return f"unknown option {name} (did you mean {close[0]}?)"
    return None


class SuggestingParser(argparse.ArgumentParser):
    """An argument parser whose errors name the closest option or choice: argparse (before
    Python 3.14) says only "unrecognized arguments" or "invalid choice"."""

    def parse_args(self, args=None, namespace=None):
        parsed, extra = self.parse_known_args(args, namespace)
        if extra:
            command = self._chosen_parser(parsed)
            options = [s for a in command._actions for s in a.option_strings]
            command.error(
                unknown_options(extra, options) or f"unrecognized arguments: {' '.join(extra)}"
            )
        return parsed

    def _chosen_parser(self, parsed: argparse.Namespace) -> argparse.ArgumentParser:
        """The subcommand's parser an unknown option belongs to (or this one)."""
        for action in self._actions:
            if isinstance(action, argparse._SubParsersAction):
                chosen = getattr(parsed, action.dest, None)
                if chosen in action.choices:
                    return action.choices[chosen]
        return self

    def error(self, message: str):
        found = re.match(
            r"argument (\S+): invalid choice: '([^']*)' \(choose from (.*)\)$", message
        )
        if found:
            option, given, choices = found.groups()
            known = re.findall(r"'([^']*)'", choices) or [c.strip() for c in choices.split(",")]
            message = f"argument {option}: " + unknown_name("choice", given, known, "is no")
        super().error(message)
