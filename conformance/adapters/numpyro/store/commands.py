"""``conformance jax-cache mark|prune``: keeping a CI cache of JAX's directory from growing
without end (see :mod:`conformance.adapters.numpyro.store.cache_pruning`)."""

from __future__ import annotations

import argparse
import sys

from conformance.adapters.hooks import Command
from conformance.adapters.numpyro.store import cache_pruning as pruning
from conformance.sizes import parse_size

#: Exit statuses, as ``conformance`` documents them.
_OK, _USAGE = 0, 2


def _arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("action", choices=("mark", "prune"))
    parser.add_argument("--max-size", metavar="SIZE", help="e.g. 2G (prune)")


def _run(ns: argparse.Namespace) -> int:
    root = pruning.default_root()
    if root is None:
        print("conformance jax-cache: the cache is off (CONFORMANCE_JAX_CACHE=off)")
        return _OK
    if ns.action == "mark":
        print(f"conformance jax-cache: marked {pruning.mark(root)} entries in {root}")
        return _OK
    try:
        limit = parse_size(ns.max_size) if ns.max_size else None
    except ValueError as exc:
        print(f"conformance jax-cache: error: --max-size: {exc}", file=sys.stderr)
        return _USAGE
    done = pruning.prune(root, limit)
    print(
        f"conformance jax-cache: removed {len(done.releases)} other jaxlib directories, "
        f"{done.unread} entries unread since the mark, {done.over_size} beyond the size cap; "
        f"kept {done.kept} entries, {done.kept_bytes / 2**20:.1f} MiB in {root}"
    )
    return _OK


JAX_CACHE = Command(
    name="jax-cache",
    help="mark the JAX cache before a run and prune what it did not read (for CI caches)",
    description="mark: note the time and make reads visible; prune: remove other jaxlib "
    "releases' directories, entries no process read since the mark, and the least "
    "recently read ones beyond --max-size (CONFORMANCE_JAX_CACHE's directory, default "
    "~/.cache/conformance/jax).",
    arguments=_arguments,
    run=_run,
)
