"""The collector tuning a case run applies, and undoes, in its own process only."""

from __future__ import annotations

import gc

from conformance.run.worker import gc_policy


def test_tune_and_restore_round_trip() -> None:
    before = gc.get_threshold()
    gc_policy.tune()
    try:
        assert gc.get_threshold()[0] == gc_policy.YOUNG_THRESHOLD
        assert gc.get_freeze_count() > 0
        gc_policy.tune()  # idempotent: the saved defaults are not overwritten
    finally:
        gc_policy.restore()
    assert gc.get_threshold() == before
    assert gc.get_freeze_count() == 0


def test_a_project_without_case_items_keeps_python_defaults(pytester) -> None:
    before = gc.get_threshold()
    pytester.makepyfile(
        test_plain="""
        import gc
        def test_defaults():
            assert gc.get_threshold()[0] != 50_000
        """
    )
    pytester.runpytest("-p", "no:cacheprovider").assert_outcomes(passed=1)
    assert gc.get_threshold() == before


def test_a_worker_that_exits_keeps_its_heap_frozen() -> None:
    """pytest collects once more on the way out; in an xdist worker (the process ends with the
    session) everything is frozen instead of walked: the thresholds come back, the heap stays
    out of the collector's reach."""
    before = gc.get_threshold()
    gc_policy.tune()
    leftover = [[]]  # made after tune(): tracked by the collector until frozen
    assert any(o is leftover for o in gc.get_objects())
    gc_policy.restore(exiting=True)
    try:
        assert gc.get_threshold() == before
        assert not any(o is leftover for o in gc.get_objects())  # out of the collector's reach
    finally:
        gc.unfreeze()
