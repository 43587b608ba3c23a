"""Reproducer scripts saved as files, so a CI artifact can go straight into an upstream bug.

File names come from nodeids, which hold ``/``, ``::``, brackets and (from third-party case
files or a tampered results.json) anything at all; a name keeps only ``[A-Za-z0-9._-]``, is
bounded in length, and gets a short hash of the nodeid wherever two nodeids would otherwise
share a name. The directory is rewritten on every run, so it never mixes scripts of two runs.
"""

from __future__ import annotations

import hashlib
import re
from collections import defaultdict
from collections.abc import Iterable, Sequence
from pathlib import Path

from conformance.records.record import Record

DIRNAME = "reproducers"
MAX_STEM = 120
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")
_WINDOWS_RESERVED = {"CON", "PRN", "AUX", "NUL", *(f"COM{i}" for i in range(10))}
_WINDOWS_RESERVED |= {f"LPT{i}" for i in range(10)}


def _hash(nodeid: str) -> str:
    return hashlib.sha1(nodeid.encode("utf-8")).hexdigest()[:10]


def safe_stem(nodeid: str) -> str:
    """A file-name stem for ``nodeid``: safe characters only, never empty, never hidden."""
    stem = _UNSAFE.sub("_", nodeid.replace("::", "__")).strip("._-")
    if not stem:
        return "item-" + _hash(nodeid)
    if stem.split(".")[0].upper() in _WINDOWS_RESERVED:
        stem = "_" + stem
    if len(stem) > MAX_STEM:
        stem = stem[:MAX_STEM].rstrip("._-") + "-" + _hash(nodeid)
    return stem


def reproducer_records(records: Iterable[Record]) -> list[Record]:
    """Non-passed records that carry a reproducer script."""
    return [
        rec
        for rec in records
        if rec.outcome != "passed" and (rec.attachments.reproducer or "").strip()
    ]


def file_names(nodeids: Sequence[str]) -> dict[str, str]:
    """nodeid → ``<stem>.py``, unique (case-insensitively, for the file systems that are)."""
    by_stem: dict[str, list[str]] = defaultdict(list)
    for nodeid in dict.fromkeys(nodeids):
        by_stem[safe_stem(nodeid).lower()].append(nodeid)
    names = {}
    for group in by_stem.values():
        for nodeid in group:
            stem = safe_stem(nodeid)
            if len(group) > 1:
                stem = f"{stem}-{_hash(nodeid)}"
            names[nodeid] = stem + ".py"
    return names


def write_reproducers(records: Iterable[Record], directory: str | Path) -> dict[str, Path]:
    """Write one script per reproducible record into ``directory`` (emptied of old scripts
    first); returns nodeid → path. An empty result leaves no empty directory behind."""
    directory = Path(directory)
    chosen = reproducer_records(records)
    if directory.is_dir():
        for old in directory.glob("*.py"):
            old.unlink()
    if not chosen:
        if directory.is_dir() and not any(directory.iterdir()):
            directory.rmdir()
        return {}
    directory.mkdir(parents=True, exist_ok=True)
    names = file_names([rec.nodeid for rec in chosen])
    written = {}
    for rec in chosen:
        path = directory / names[rec.nodeid]
        text = rec.attachments.reproducer or ""
        path.write_text(text if text.endswith("\n") else text + "\n", encoding="utf-8")
        written[rec.nodeid] = path
    return written
