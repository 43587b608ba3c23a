"""Keeping the JAX cache directory (JAX's compilation cache and the executable store) from
growing without end where it is saved between runs (a CI cache).

Every change of the suite's code, a framework or a case file keys new entries; the old ones are
never read again. ``mark`` before a run, ``prune`` after it: prune removes other jaxlib
releases' directories, every entry no process read since the mark, and then the least recently
read entries until the directory fits ``max_size``.

Reads are seen through access times. Linux's default (``relatime``) updates a file's access
time on a read only while it is not later than its modification time, so ``mark`` sets every
entry's access time just before its modification time; a file system that records no reads at
all (``noatime``) is detected with a probe file, and then only the size cap prunes.
"""

from __future__ import annotations

import os
import shutil
import time
from dataclasses import dataclass
from pathlib import Path

from conformance.adapters.numpyro.store import cache
from conformance.versions import version_text

MARK = ".conformance-mark"


def _entries(root: Path) -> list[Path]:
    return [
        Path(d) / f
        for d, _, files in os.walk(root)
        for f in files
        if not f.startswith(".") and f != MARK
    ]


def mark(root: Path) -> int:
    """Record now as the mark and make the next read of every entry visible; returns the
    number of entries."""
    root.mkdir(parents=True, exist_ok=True)
    entries = _entries(root)
    for path in entries:
        try:
            mtime = path.stat().st_mtime
            os.utime(path, (mtime - 1, mtime))
        except OSError:
            continue
    (root / MARK).write_text(f"{time.time()}\n")
    return len(entries)


def reads_are_recorded(root: Path) -> bool:
    """Whether reading a file here updates its access time (after :func:`mark`'s reset)."""
    probe = root / ".conformance-atime-probe"
    try:
        probe.write_bytes(b"x")
        mtime = probe.stat().st_mtime
        os.utime(probe, (mtime - 10, mtime))
        probe.read_bytes()
        return probe.stat().st_atime > mtime - 10
    except OSError:
        return False
    finally:
        probe.unlink(missing_ok=True)


@dataclass
class Pruned:
    releases: list[str]
    unread: int
    over_size: int
    kept: int
    kept_bytes: int


def prune(root: Path, max_size: int | None = None, jaxlib: str | None = None) -> Pruned:
    """Other jaxlib releases' directories, entries unread since the mark (when reads are
    recorded), then the least recently read entries beyond ``max_size`` bytes."""
    jaxlib = jaxlib or version_text("jaxlib")
    current = f"jaxlib-{jaxlib}"
    releases = []
    for parent in (root, root / "executables"):
        if not parent.is_dir():
            continue
        for child in parent.iterdir():
            if child.is_dir() and child.name.startswith("jaxlib-") and child.name != current:
                shutil.rmtree(child, ignore_errors=True)
                releases.append(str(child.relative_to(root)))
    unread = 0
    mark_file = root / MARK
    if mark_file.exists() and reads_are_recorded(root):
        since = float(mark_file.read_text().strip() or 0)
        for path in _entries(root):
            st = path.stat()
            if st.st_atime < since and st.st_mtime < since:
                path.unlink(missing_ok=True)
                unread += 1
    entries = sorted(
        ((p.stat().st_atime, p.stat().st_size, p) for p in _entries(root)), reverse=True
    )
    kept, total, over = [], 0, 0
    for _, size, path in entries:
        if max_size is not None and total + size > max_size:
            path.unlink(missing_ok=True)
            over += 1
            continue
        kept.append(path)
        total += size
    return Pruned(releases, unread, over, len(kept), total)


def default_root() -> Path | None:
    """The directory ``CONFORMANCE_JAX_CACHE`` names (or the default), None when off."""
    return cache._root()
