"""Keeps a framework call that hangs, crashes or leaks from costing more than its own item.

Each case item arms its own time limit (:func:`time_limit`, ``--item-timeout``) through
pytest-timeout's ``pytest_timeout_set_timer`` hook. SIGALRM raises :class:`ItemTimeout`, a
``BaseException``, so a framework's ``except Exception`` cannot swallow it. A call stuck in C
never sees the signal, so in an xdist worker faulthandler ends the worker later
(:func:`hard_timeout`). The controller reads each worker's faulthandler dump to record the crash.
Workers cap ``RLIMIT_DATA`` (``--worker-memory``), not ``RLIMIT_AS``: JAX and glibc reserve
gigabytes of address space they never touch. With ``-n 0`` only the soft timeout applies.
What users see: docs/robustness.md.
"""

from __future__ import annotations

import contextlib
import faulthandler
import os
import re
import signal
import threading
import time
import traceback
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from conformance.kinds import Kind

DEFAULT_ITEM_TIMEOUT = 120.0
DEFAULT_WORKER_MEMORY = 8 << 30
#: How much of a crash dump a record keeps.
MAX_DUMP_CHARS = 6000
#: The key under which the controller tells workers where their dump files go.
DUMP_DIR_KEY = "conformance_dump_dir"


class ItemTimeout(BaseException):
    """The item ran past its timeout; raised by SIGALRM wherever the item's code was."""


def hard_timeout(timeout: float) -> float:
    """When a worker stuck outside Python is ended, at the earliest: the soft timeout plus a
    grace period (at the latest :data:`WATCHDOG_LEASE` s later, see :class:`_Watchdog`)."""
    return timeout * 1.25 + 5.0


#: How long faulthandler's watchdog stays armed across consecutive case items before it is
#: armed again (each arming starts a thread and each cancel joins it: about 1.3 ms, once per
#: item that was 38 s of a warm full run's worker time).
WATCHDOG_LEASE = 5.0


# ----- soft and hard timeout, around the item's own work --------------------------------------
#: Where pytest-timeout's timer hook leaves an item's limit: (seconds, hard timeout too?).
TIMER_ATTR = "conformance_time_limit"


def set_item_timer(item: Any, timeout: float, hard: bool) -> None:
    """pytest-timeout's timer hook for a case item: note the limit, arm nothing yet.

    The item arms it around its own work (:func:`time_limit`), after its framework is
    imported: a first import of torch or JAX takes seconds on a loaded machine, and is not the
    framework's call hanging.
    """
    setattr(item, TIMER_ATTR, (timeout, hard))


def _raise_timeout(timeout: float):
    def handler(signum: int, frame: Any) -> None:
        where = "".join(traceback.format_stack(frame, limit=4)) if frame else ""
        raise ItemTimeout(
            f"timed out after {timeout:g} s (--item-timeout); interrupted at:\n{where}"
        )

    return handler


@contextlib.contextmanager
def time_limit(timeout: float | None, hard: bool) -> Iterator[None]:
    """Raise :class:`ItemTimeout` here after ``timeout`` s (SIGALRM, main thread only); with
    ``hard``, end the process a little later if that cannot happen (see :func:`hard_timeout`)."""
    if not timeout:
        yield
        return
    on_main = threading.current_thread() is threading.main_thread()
    if on_main:
        previous = signal.signal(signal.SIGALRM, _raise_timeout(timeout)) or signal.SIG_DFL
        signal.setitimer(signal.ITIMER_REAL, timeout)
    dump = _dump.get("file") if hard else None
    if dump is not None:
        _watchdog.arm(hard_timeout(timeout), dump)
    try:
        yield
    finally:
        if on_main:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, previous)


class _Watchdog:
    """faulthandler's C watchdog, leased across consecutive case items.

    Armed for ``hard + lease`` seconds and armed again only once the lease has run out, so an
    item started within the lease still has at least ``hard`` seconds, and at most
    ``hard + lease``. Released (:func:`release_watchdog`) after an item that no case item
    follows: a worker waiting for work, or running a project's own tests, is never ended.
    """

    def __init__(self) -> None:
        self.armed_at: float | None = None
        self.seconds = 0.0

    def arm(self, hard: float, dump: Any) -> None:
        now = time.monotonic()
        seconds = hard + WATCHDOG_LEASE
        if self.armed_at is None or now - self.armed_at > WATCHDOG_LEASE or seconds != self.seconds:
            faulthandler.dump_traceback_later(seconds, exit=True, file=dump)
            self.armed_at, self.seconds = now, seconds

    def release(self) -> None:
        if self.armed_at is not None:
            faulthandler.cancel_dump_traceback_later()
            self.armed_at = None


_watchdog = _Watchdog()


def release_watchdog() -> None:
    """No case item follows this one (see :class:`_Watchdog`)."""
    _watchdog.release()


# ----- worker side: dump file, memory limit -------------------------------------------------
_dump: dict[str, Any] = {}


def start_worker(workerinput: dict, memory_limit: int | None) -> None:
    """In an xdist worker: crash and hard-timeout dumps go to the controller's dump dir; the
    worker's writable memory is capped."""
    directory = workerinput.get(DUMP_DIR_KEY)
    if directory:
        path = Path(directory) / f"{workerinput['workerid']}.txt"
        fh = open(path, "w", encoding="utf-8")  # noqa: SIM115 - lives as long as the worker
        _dump["file"] = fh
        # After pytest's own faulthandler setup (pytest_configure), so ours is the one in force.
        faulthandler.enable(file=fh, all_threads=False)
    if memory_limit is not None:
        set_memory_limit(memory_limit)


def stop_worker() -> None:
    """At the end of an xdist worker's session: no item can crash it any more, so the dump file
    is closed (left to interpreter exit, it was reported as an unclosed file)."""
    release_watchdog()
    fh = _dump.pop("file", None)
    if fh is not None:
        faulthandler.disable()
        fh.close()


def set_memory_limit(limit: int) -> None:
    """Lower this process's RLIMIT_DATA soft limit (never above the hard limit)."""
    import resource

    _, hard = resource.getrlimit(resource.RLIMIT_DATA)
    if hard != resource.RLIM_INFINITY:
        limit = min(limit, hard)
    resource.setrlimit(resource.RLIMIT_DATA, (limit, hard))


# ----- controller side: what a crashed worker left ------------------------------------------
#: Frames of the machinery between pytest and the item: not where a framework went wrong.
_HARNESS_FRAME = re.compile(r'File ".*[/\\](_pytest|pluggy|xdist|execnet)[/\\]')


def read_dump(directory: str | Path, workerid: str) -> str:
    """What a dead worker's faulthandler wrote, without harness frames, bounded in size."""
    try:
        text = (Path(directory) / f"{workerid}.txt").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""
    return summarize_dump(text)


def summarize_dump(text: str) -> str:
    """Keep the fatal error line and each thread's own frames; drop pytest/xdist frames,
    threads left with none, and the list of extension modules."""
    out: list[str] = []
    section: list[str] = []

    def flush() -> None:
        if len(section) > 1:  # a thread header with frames of its own
            out.extend(["", *section])
        section.clear()

    for line in text.splitlines():
        if line.startswith(("Thread 0x", "Current thread 0x", "Extension modules:")):
            flush()
            if not line.startswith("Extension"):
                section.append(line)
        elif line.strip() and not _HARNESS_FRAME.search(line):
            (section if section else out).append(line)
    flush()
    summary = "\n".join(out).strip()
    if len(summary) <= MAX_DUMP_CHARS:
        return summary
    return summary[:MAX_DUMP_CHARS] + "\n[… truncated]"


def crash_result(message: str, dump: str, timeout: float | None) -> dict:
    """The result a crashed item's record gets: kind ``timeout`` if the hard timeout ended the
    worker (faulthandler's dump starts with ``Timeout (``), else ``crash``."""
    if dump.startswith("Timeout ("):
        limit = (
            f" (--item-timeout {timeout:g} s, ended after {hard_timeout(timeout):g} to "
            f"{hard_timeout(timeout) + WATCHDOG_LEASE:g} s)"
            if timeout
            else ""
        )
        head = f"timed out and did not return to Python{limit}; {message}"
        return {"kind": Kind.TIMEOUT, "message": f"{head}\n{dump}".rstrip()}
    head = f"{message}: the process died (segfault, abort or out of memory)"
    return {"kind": Kind.CRASH, "message": f"{head}\n{dump}".rstrip()}


def terminate_as_interrupt() -> None:
    """SIGTERM (a CI job cancelled, ``timeout`` expiring) ends the run as Ctrl-C does.

    pytest turns KeyboardInterrupt into an orderly finish, so results.json is still written
    (complete, marked interrupted); the default SIGTERM action would lose it. Only the
    controller's main thread installs this, and only over the default handler.
    """
    if threading.current_thread() is not threading.main_thread():
        return
    if signal.getsignal(signal.SIGTERM) is not signal.SIG_DFL:
        return

    def interrupt(signum: int, frame: Any) -> None:
        raise KeyboardInterrupt(f"signal {signum}")

    signal.signal(signal.SIGTERM, interrupt)


def remove_dir(directory: str | Path) -> None:
    path = Path(directory)
    for child in path.glob("*.txt"):
        with contextlib.suppress(OSError):
            child.unlink()
    with contextlib.suppress(OSError):
        os.rmdir(path)
