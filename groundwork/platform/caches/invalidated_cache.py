"""In-process caches of facts PostgreSQL holds, dropped the moment the change feed says they changed.

A cache answers from memory only while this process's change feed is live (`change_feed.is_live`), so
a process that does not listen (a CLI command) always asks PostgreSQL. Entries also expire after a
short time as a safety net. A value loaded while an invalidation arrived is not kept: `load` notes the
cache's generation before asking PostgreSQL and stores only if it has not moved since.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable, Hashable
from typing import Generic, TypeVar

from groundwork.persistence import change_feed

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")


class InvalidatedCache(Generic[K, V]):
    """A bounded map of recently loaded values, cleared on `invalidate` and when entries expire."""

    def __init__(self, *, ttl_seconds: float, max_entries: int = 10_000) -> None:
        self.ttl = ttl_seconds
        self.max_entries = max_entries
        self._entries: dict[K, tuple[float, V]] = {}
        self._generation = 0

    def invalidate(self) -> None:
        """Forget everything (and refuse values whose loading started before now)."""
        self._generation += 1
        self._entries = {}

    def discard(self, key: K) -> None:
        """Forget one value (and refuse values whose loading started before now)."""
        self._generation += 1
        self._entries.pop(key, None)

    def discard_where(self, stale: Callable[[V], bool]) -> None:
        """Forget the values `stale` picks (and refuse values whose loading started before now)."""
        self._generation += 1
        self._entries = {key: entry for key, entry in self._entries.items() if not stale(entry[1])}

    def get(self, key: K) -> tuple[bool, V | None]:
        """(True, value) when a fresh value is held and the feed is live, else (False, None)."""
        if not change_feed.is_live():
            return False, None
        entry = self._entries.get(key)
        if entry is None or entry[0] < time.monotonic():
            return False, None
        return True, entry[1]

    async def load(self, key: K, loader: Callable[[], Awaitable[V]]) -> V:
        """The cached value, or `loader()`'s, kept unless the cache was invalidated while it ran."""
        found, value = self.get(key)
        if found:
            return value  # type: ignore[return-value]
        generation = self._generation
        fresh = await loader()
        self.put(key, fresh, generation)
        return fresh

    def put(self, key: K, value: V, generation: int | None = None) -> None:
        """Keep `value` (unless the cache moved past `generation`, or the feed is not live)."""
        if not change_feed.is_live() or (generation is not None and generation != self._generation):
            return
        if len(self._entries) >= self.max_entries:
            self._entries = {}  # a flood of distinct keys must not grow memory; start over
        self._entries[key] = (time.monotonic() + self.ttl, value)

    @property
    def generation(self) -> int:
        """Bumped by every invalidation."""
        return self._generation
