"""Known failures keep a run green on tracked framework bugs without hiding new ones.

An entry's fields are :class:`KnownFailure`'s; the README's "Known failures" shows a file.
``version`` is a PEP 440 requirement on any installed distribution, and ``case`` globs also
match variant ids (``<case>+<variant>``). A matching item must fail with the entry's kind, and
is then xfailed with its reason and link. Another kind still fails. A pass is an XPASS, which
fails the run under ``--strict-known-failures``, the default. Entries matching no item are
reported by name. Prefer rules to lists: ``case: "scalar+*"`` with ``inputs: valid`` takes the
variants inside the support and leaves out those outside, which pass.
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from enum import Enum
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from packaging.requirements import InvalidRequirement, Requirement
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from conformance.cases.case_model import EDGE_ID_PREFIX as EDGE_PREFIX
from conformance.cases.yaml_source import YamlError, load_located
from conformance.kinds import Kind
from conformance.names import unknown_name, unmatched_pattern
from conformance.versions import installed_version

if TYPE_CHECKING:
    from conformance.records.record import Record

BUILTIN_DIR = Path(__file__).parent  # the registry's YAML files lie beside this module
#: Cheapest and most selective first: :meth:`Index.matching` stops at the first empty set.
PATTERN_FIELDS = ("framework", "family", "check", "dtype", "device", "case", "file")


Patterns = str | tuple[str, ...]


def _globs(pattern: Patterns) -> tuple[str, ...]:
    return (pattern,) if isinstance(pattern, str) else pattern


class KnownFailure(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str = Field(min_length=1)
    # Each pattern field takes a glob or a list of globs (any of them matches).
    case: Patterns = "*"
    file: Patterns = "*"
    family: Patterns = "*"
    framework: Patterns = "*"
    version: str | None = Field(default=None, description="PEP 440 requirement, e.g. numpyro<0.16")
    dtype: Patterns = "*"
    device: Patterns = "*"
    check: Patterns = "*"
    kind: tuple[Kind, ...] = Field(description="The failure kind(s) this bug produces.")
    reason: str = Field(min_length=1)
    link: str | None = None
    flaky: bool = Field(
        default=False,
        description="The bug shows on some runs and not on others (a stochastic or "
        "order-dependent numerical path): a pass is then not an XPASS failure in strict mode.",
    )
    exclude_case: Patterns = Field(
        default=(),
        description="Globs over the case id of items that are not this entry's although "
        "every other field matches them.",
    )
    inputs: Literal["any", "valid", "outside"] = Field(
        default="any",
        description="valid: only items whose inputs are all inside the support and the "
        "parameters' domains (the oracle's judgement of the float64 inputs); outside: only "
        "items with an input that is not; any: both.",
    )
    run: bool = Field(
        default=True,
        description="False where the framework hangs or runs for minutes on these items "
        "(a rejection loop that needs millions of rounds): they are reported xfailed without "
        "running (pytest's xfail(run=False)), so the run does not pay for the hang every time; "
        "a fix then shows only when the entry is removed, so the reason states what was measured.",
    )

    @field_validator("kind", mode="before")
    @classmethod
    def _declared_kinds(cls, value: object) -> object:
        """One kind or a list; each a :class:`Kind` (a misspelt one says which it is close to,
        and :func:`load` puts the file, line and entry in front)."""
        kinds = (value,) if isinstance(value, str) else value
        if isinstance(kinds, list | tuple):
            for kind in kinds:
                if isinstance(kind, str) and kind not in Kind.__members__.values():
                    raise ValueError(unknown_name("kind", kind, Kind, verb="is no"))
        return kinds

    @field_validator("version")
    @classmethod
    def _requirement(cls, value: str | None) -> str | None:
        if value is not None:
            try:
                Requirement(value)
            except InvalidRequirement as exc:
                raise ValueError(f"not a PEP 440 requirement: {exc}") from None
        return value


@dataclass(frozen=True)
class Entry:
    """A loaded entry and where it came from."""

    failure: KnownFailure
    source: str  # file:line

    @property
    def id(self) -> str:
        return self.failure.id


class KnownFailuresError(ValueError):
    """A known-failures file that cannot be used; names file and line."""


@dataclass(frozen=True)
class Vocabulary:
    """The names an entry's patterns may match: a pattern that matches none of them can never
    match an item (a misspelt family, an adapter that does not exist), so it is refused on load
    instead of lying silent. Kinds are always checked, against :class:`conformance.kinds.Kind`."""

    families: frozenset[str]
    frameworks: frozenset[str]
    checks: frozenset[str]
    dtypes: frozenset[str]

    def problem(self, failure: KnownFailure) -> tuple[str, str] | None:
        """(field, what is wrong) for the first pattern that can match nothing, or None."""
        for name, known in (
            ("family", self.families),
            ("framework", self.frameworks),
            ("check", self.checks),
            ("dtype", self.dtypes),
        ):
            for pattern in _globs(getattr(failure, name)):
                problem = unmatched_pattern(name, pattern, known)
                if problem:
                    return name, problem
        return None


def load(paths: Iterable[str | Path], vocabulary: Vocabulary | None = None) -> list[Entry]:
    """Every entry of ``paths``, in order. Raises :class:`KnownFailuresError` naming the file
    and line of the first entry that cannot be used: invalid YAML or fields, a duplicate id, a
    kind no check produces, or (with ``vocabulary``) a pattern that matches no name."""
    entries: list[Entry] = []
    seen: dict[str, str] = {}
    for path in paths:
        path = Path(path)
        try:
            doc = load_located(path.read_bytes())
        except (OSError, YamlError) as exc:
            line = getattr(exc, "line", None)
            raise KnownFailuresError(f"{path}{f':{line}' if line else ''}: {exc}") from None
        data = doc.data or {}
        if not isinstance(data, dict) or not isinstance(data.get("known_failures", []), list):
            raise KnownFailuresError(f"{path}:1: expected a mapping with a 'known_failures:' list")
        extra = sorted(set(data) - {"known_failures"})
        if extra:
            raise KnownFailuresError(f"{path}:{doc.line_of((extra[0],))}: unknown key {extra[0]!r}")
        for i, raw in enumerate(data.get("known_failures", [])):
            where = f"{path}:{doc.line_of(('known_failures', i))}"
            try:
                failure = KnownFailure.model_validate(raw)
            except ValidationError as exc:
                first = exc.errors()[0]
                if first["loc"][:1] == ("kind",) and first["type"] == "value_error":
                    line = doc.line_of(("known_failures", i, "kind"))
                    raise KnownFailuresError(
                        f"{path}:{line}: known failure {raw.get('id')!r}: kind: "
                        f"{first['ctx']['error']}"
                    ) from None
                loc = ".".join(str(p) for p in first["loc"])
                raise KnownFailuresError(f"{where}: {loc}: {first['msg']}") from None
            found = _problem(failure, vocabulary)
            if found:
                field_name, problem = found
                line = doc.line_of(("known_failures", i, field_name))
                raise KnownFailuresError(
                    f"{path}:{line}: known failure {failure.id!r}: {field_name}: {problem}"
                )
            if failure.id in seen:
                raise KnownFailuresError(
                    f"{where}: duplicate id {failure.id!r} (first at {seen[failure.id]})"
                )
            seen[failure.id] = where
            entries.append(Entry(failure, where))
    return entries


def _problem(failure: KnownFailure, vocabulary: Vocabulary | None) -> tuple[str, str] | None:
    """(field, what is wrong) for the first pattern of ``failure`` that can match nothing (its
    kinds were checked when it was read)."""
    return vocabulary.problem(failure) if vocabulary else None


#: The entries of the opt-in bulk and pair edge cases (``--edges=bulk``): loaded only with them,
#: so a default run neither calls them stale nor spends time matching them.
BULK_FILE = "bulk-edges.yaml"


def builtin_files(bulk: bool = True) -> list[Path]:
    """The suite's own known-failure files; ``bulk=False`` leaves out :data:`BULK_FILE`."""
    return sorted(p for p in BUILTIN_DIR.glob("*.yaml") if bulk or p.name != BULK_FILE)


def _is_glob(pattern: str) -> bool:
    """Whether fnmatch gives ``pattern`` a meaning beyond the string itself."""
    return any(c in pattern for c in "*?[")


@cache
def _regex(pattern: str) -> re.Pattern:
    return re.compile(fnmatch.translate(pattern))


def version_applies(failure: KnownFailure) -> bool:
    """Whether the entry's version requirement holds for what is installed here."""
    return failure.version is None or _requirement_holds(failure.version)


@cache
def _requirement_holds(text: str) -> bool:
    """Once per process and requirement: every collected item asks about every entry."""
    requirement = Requirement(text)
    installed = installed_version(requirement.name)
    if installed is None:
        return False
    return requirement.specifier.contains(installed, prereleases=True)


def matches(
    failure: KnownFailure,
    static: Mapping[str, object],
    inputs_valid: Callable[[], bool] | None = None,
) -> bool:
    """Whether an item (its static metadata: case, file, family, framework…) is this entry's;
    ``inputs_valid`` tells whether the item's inputs are valid (see :func:`excludes`)."""
    for name in PATTERN_FIELDS:
        patterns = _globs(getattr(failure, name))
        if "*" in patterns:
            continue
        value = static.get(name)
        if value is None or not any(_regex(p).match(str(value)) for p in patterns):
            return False
    return not excludes(failure, static, inputs_valid)


def excludes(
    failure: KnownFailure,
    static: Mapping[str, object],
    inputs_valid: Callable[[], bool] | None = None,
) -> bool:
    """Whether the entry's exclusions leave out an item its patterns match: a case id among
    ``exclude_case``, or inputs on the other side of ``inputs``. Without ``inputs_valid`` (a
    record read back, whose inputs are not at hand) the ``inputs`` condition is taken to hold,
    so a stale-entry report never blames an entry for items it was not asked about."""
    case = static.get("case")
    if case is not None and any(_regex(p).match(str(case)) for p in _globs(failure.exclude_case)):
        return True
    if failure.inputs == "any" or inputs_valid is None:
        return False
    return inputs_valid() != (failure.inputs == "valid")


class Index:
    """The entries whose version applies here, ready to be matched against many items.

    Matching each item against each entry cost a full collection (24,082 items × 273 entries)
    six million entry checks, about 70% of its time, and as much again when the run ended and
    looked for stale entries. An item's fields take few distinct values (a handful of
    frameworks, dtypes and checks, one file per family), so each (field, value) gets, once, the
    bit set of entries it satisfies; an item's entries are the AND of its fields' sets.
    """

    def __init__(self, entries: Iterable[Entry]) -> None:
        self.entries = [e for e in entries if version_applies(e.failure)]
        self._everything = (1 << len(self.entries)) - 1
        self._sets: dict[tuple[str, str | None], int] = {}
        # Per field: the entries any value satisfies, those naming exact values (most case
        # lists: a new case id then costs a dict lookup, not a regex per entry), and globs.
        self._any: dict[str, int] = {}
        self._exact: dict[str, dict[str, int]] = {}
        self._globbed: dict[str, list[tuple[int, tuple[str, ...]]]] = {}
        for name in PATTERN_FIELDS:
            anything = 0
            exact: dict[str, int] = {}
            globbed: list[tuple[int, tuple[str, ...]]] = []
            for i, entry in enumerate(self.entries):
                patterns = _globs(getattr(entry.failure, name))
                if "*" in patterns:
                    anything |= 1 << i
                elif any(_is_glob(p) for p in patterns):
                    globbed.append((i, patterns))
                else:
                    for p in patterns:
                        exact[p] = exact.get(p, 0) | 1 << i
            self._any[name], self._exact[name], self._globbed[name] = anything, exact, globbed

    def _set(self, name: str, value: object) -> int:
        key = (name, None if value is None else str(value))
        found = self._sets.get(key)
        if found is None:
            found = self._any[name]
            if key[1] is not None:
                found |= self._exact[name].get(key[1], 0)
                for i, patterns in self._globbed[name]:
                    if any(_regex(p).match(key[1]) for p in patterns):
                        found |= 1 << i
            self._sets[key] = found
        return found

    def matching(
        self, static: Mapping[str, object], inputs_valid: Callable[[], bool] | None = None
    ) -> list[Entry]:
        """The entries matching an item (its static metadata), in their loaded order, less
        those whose exclusions leave it out (``inputs_valid``: see :func:`excludes`)."""
        found = self._everything
        for name in PATTERN_FIELDS:
            found &= self._set(name, static.get(name))
            if not found:
                return []
        out = []
        while found:  # the set bits only: most items match a few of hundreds of entries
            low = found & -found
            entry = self.entries[low.bit_length() - 1]
            if not excludes(entry.failure, static, inputs_valid):
                out.append(entry)
            found ^= low
        return out


#: The fields a run's own filters (--framework, --family, --check, --dtype, --device) narrow.
FILTERED_FIELDS = ("framework", "family", "check", "dtype", "device")


class Coverage(Enum):
    """How much of its cases a run ran, which decides which entries it can call stale."""

    #: Every item of its cases, less what the filters records show (framework, family, …).
    WHOLE = "whole"
    #: Every item of the case files it named, and no other file.
    NAMED_FILES = "named files"
    #: Some items of its cases only (a shard, ``--quick``, ``-k``, ``--lf``, node ids): an
    #: entry that matched none of them may name items the run left out.
    SAMPLE = "sample"


def unmatched(
    entries: Iterable[Entry],
    records: list[Record],
    index: Index | None = None,
    coverage: Coverage = Coverage.WHOLE,
) -> tuple[list[Entry], list[Entry]]:
    """(stale entries to warn about, entries whose version does not apply here).

    An entry is stale when it matched no item although the run covered every item it names:
    one whose framework, family, check, dtype or device this run filtered out is not, nor in a
    run of named files one whose case or file the run did not have. A run that sampled its
    cases' items calls no entry stale: only the whole selection can tell.
    """
    entries = list(entries)
    judged = coverage is not Coverage.SAMPLE
    fields = FILTERED_FIELDS + (("case", "file") if coverage is Coverage.NAMED_FILES else ())
    statics = [r.static.to_json() for r in records]
    seen = {name: {s[name] for s in statics if s.get(name)} for name in fields}
    index = index or Index(entries)  # the run's own, built from the same entries, when given
    matched = {id(e) for s in statics for e in index.matching(s)} if judged else set()
    ran_edges = any(str(r.static.case or "").startswith(EDGE_PREFIX) for r in records)
    stale, inactive = [], []
    for entry in entries:
        f = entry.failure
        if not version_applies(f):
            inactive.append(entry)
            continue
        if not ran_edges and all(p.startswith(EDGE_PREFIX) for p in _globs(f.case)):
            continue  # written for generated edge cases, and this run generated none (--edges)
        in_scope = all(
            any(_regex(p).match(x) for p in _globs(getattr(f, name)) for x in seen[name])
            for name in fields
        )
        if judged and in_scope and id(entry) not in matched:
            stale.append(entry)
    return stale, inactive


def describe(entries: Iterable[Entry]) -> str:
    parts = []
    for e in entries:
        link = f" ({e.failure.link})" if e.failure.link else ""
        parts.append(f"known failure {e.id}: {e.failure.reason}{link}")
    return "; ".join(parts)
