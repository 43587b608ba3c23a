"""``--shard K/N``: an item's shard, from a stable hash of its id alone.

So adding or removing a case file leaves every other item in its shard (a shard's cached
compiled programs stay warm, and a before/after comparison of one shard compares the same
items), and a run and ``conformance list --shard`` agree. Shards are balanced in
expectation: each of N holds about 1/N of the items, not exactly.
"""

from __future__ import annotations

import hashlib


def item_id(file_id: str, name: str) -> str:
    """An item's id, as pytest's node id and the records spell it: ``<file id>::<name>``."""
    return f"{file_id}::{name}"


def shard_of(item: str, count: int) -> int:
    """The shard (1-based, of ``count``) that holds the item whose id is ``item``: a hash that
    is the same in every process and Python build (never :func:`hash`)."""
    digest = hashlib.blake2b(item.encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big") % count + 1


def in_shard(item: str, which: tuple[int, int]) -> bool:
    """``--shard K/N``, the one rule: whether the item whose id is ``item`` is in shard K of N.
    The plan and pytest's collection
    (:func:`conformance.run.session.hooks.pytest_collection_modifyitems`) both apply it."""
    k, n = which
    return shard_of(item, n) == k
