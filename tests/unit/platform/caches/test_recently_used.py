"""RecentlyUsed: a bounded map that forgets its least recently used entry first."""

from __future__ import annotations

from groundwork.platform.caches.recently_used import RecentlyUsed


def test_past_its_size_the_least_recently_used_entry_is_forgotten_and_a_read_counts_as_use() -> None:
    kept: RecentlyUsed[str, int] = RecentlyUsed(2)
    kept.put("a", 1)
    kept.put("b", 2)
    assert kept.get("a") == 1  # "a" is now more recent than "b"
    kept.put("c", 3)
    assert (kept.get("a"), kept.get("b"), kept.get("c"), len(kept)) == (1, None, 3, 2)
    kept.put("a", 4)  # a new value for a kept key replaces it without growing the map
    assert (kept.get("a"), len(kept)) == (4, 2)
