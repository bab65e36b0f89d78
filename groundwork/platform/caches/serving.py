"""The change feed wired to this process's caches and index readers, for long-running processes.

The API and the worker run `serving_caches(dsn)` for their lifetime. While it listens, what the domains
cache (resolved API keys, visibility, run rows, the corpus serving state) and the index snapshots are
reused from memory, and each is dropped the moment any process changes what it depends on (a revoked key
is refused at once by every API process). Without it (a CLI command), every read goes to PostgreSQL and
every search looks for a new index commit. A domain registers what to drop with `forget_on`, next to the
cache it keeps, so this module knows no domain.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Iterable
from contextlib import asynccontextmanager

from groundwork.persistence import change_feed
from groundwork.search import generations

# (the topics a cache depends on, or None for every topic; what drops it, given the topic heard)
_forgetters: list[tuple[frozenset[str] | None, Callable[[str], None]]] = []


def forget_on(topics: Iterable[str] | None, forget: Callable[[str], None]) -> None:
    """Call `forget(topic)` when the change feed names one of `topics` (None: every topic), and on `*`."""
    _forgetters.append((None if topics is None else frozenset(topics), forget))


def _on_change(topic: str) -> None:
    for topics, forget in _forgetters:
        if topics is None or topic == "*" or topic in topics:
            forget(topic)
    if topic == "*":
        # Snapshots are reused only while every commit is heard of.
        generations.set_watched(change_feed.is_live())
    elif topic.startswith("index:"):
        folder = topic.removeprefix("index:")
        generations.GenerationalIndex.mark_all_stale(None if folder == "*" else folder)


_users = 0


@asynccontextmanager
async def serving_caches(dsn: str) -> AsyncIterator[None]:
    """Listen for changes and keep this process's caches and index readers current until the block ends."""
    global _users
    _users += 1
    change_feed.subscribe(_on_change)
    try:
        async with change_feed.listening(dsn):
            yield
    finally:
        _users -= 1
        if _users == 0:
            change_feed.unsubscribe(_on_change)
        generations.set_watched(change_feed.is_live())
