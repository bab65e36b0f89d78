"""The change feed wired to this process's caches and index readers, for long-running processes.

The API and the worker run `serving_caches(dsn)` for their lifetime. While it listens, resolved API keys,
visibility, run rows, the corpus serving state and index snapshots are reused from memory, and each is
dropped the moment any process changes what it depends on (a revoked key is refused at once by every API
process). Without it (a CLI command), every read goes to PostgreSQL and every search looks for a new index
commit.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from groundwork.persistence import change_feed
from groundwork.search import generations
from groundwork.services import api_keys, corpus_search, heard_runs, project_access


def _on_change(topic: str) -> None:
    if topic in ("auth", "*"):
        api_keys.forget_cached_keys()
    if topic in ("visibility", "*"):
        corpus_search.forget_cached_visibility()
        project_access.forget_cached_permissions()
    if topic in ("corpus", "*"):
        corpus_search.forget_cached_serving_state()
    heard_runs.forget_heard_runs(topic)
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
