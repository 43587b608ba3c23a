"""Which case files a run reads, from its arguments: known before collection, and without it.

The xdist controller collects no items, yet its run header says what the frameworks lack in
the run's case files (:mod:`conformance.plan.not_offered`). So the files are found as pytest's
collection finds them: below each argument, those inside a case root, and any named directly.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from conformance.cases import CASE_SUFFIXES
from conformance.cases.loader import find_case_files
from conformance.plan.not_offered import Offers, not_offered
from conformance.run.config.settings import Settings
from conformance.run.session.items import SETTINGS_KEY


def is_case_file(file_path: Path, config: pytest.Config) -> bool:
    """Whether pytest collects ``file_path`` as a case file: in a case root, or named."""
    if file_path.suffix not in CASE_SUFFIXES:
        return False
    settings: Settings = config.stash[SETTINGS_KEY]
    resolved = file_path.resolve()
    for root in settings.case_roots:
        if resolved == root or root in resolved.parents:
            return True
    return any(Path(a.split("::")[0]).resolve() == resolved for a in config.args)


def run_case_files(config: pytest.Config) -> list[Path]:
    """The case files the run's arguments reach, in argument order, each once."""
    found: dict[Path, None] = {}
    for arg in config.args:
        path = Path(arg.split("::")[0])
        if not path.is_absolute():
            path = config.invocation_params.dir / path
        if path.is_dir():
            found.update(dict.fromkeys(f for f in find_case_files(path) if is_case_file(f, config)))
        elif path.is_file() and path.suffix in CASE_SUFFIXES:
            found[path] = None
    return list(found)


_NOT_OFFERED = pytest.StashKey[Offers]()


def run_not_offered(config: pytest.Config) -> Offers:
    """What the run's frameworks lack among its case files' selected families (found once
    per process: the header, the run header and the listing ask)."""
    if _NOT_OFFERED not in config.stash:
        settings: Settings = config.stash[SETTINGS_KEY]
        config.stash[_NOT_OFFERED] = not_offered(settings.selection, run_case_files(config))
    return config.stash[_NOT_OFFERED]
