"""What `groundwork serve` does to the collector once its apps are built."""

from __future__ import annotations

import gc

from groundwork.platform.garbage_collection import YOUNG_THRESHOLD, settle_after_startup


def test_start_up_objects_leave_the_collectors_sight_and_the_young_are_collected_less_often() -> None:
    threshold = gc.get_threshold()
    built_at_startup = [{"route": n} for n in range(1000)]
    try:
        settle_after_startup()
        assert gc.get_freeze_count() >= len(built_at_startup)
        assert gc.get_threshold() == (YOUNG_THRESHOLD, threshold[1], threshold[2])
        # Cyclic garbage made afterwards is still collected.
        cycle: list[object] = []
        cycle.append(cycle)
        del cycle
        assert gc.collect() >= 1
    finally:
        gc.unfreeze()
        gc.set_threshold(*threshold)
