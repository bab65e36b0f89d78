"""Index replicas as projections of PostgreSQL: build a generation from scratch, catch up with a change log,
and keep following it. The corpus index and the package index both run on these."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from groundwork.persistence import change_feed
from groundwork.search.generations import GenerationalIndex, GenerationWriter, IndexBusy

log = logging.getLogger(__name__)

W = TypeVar("W", bound=GenerationWriter)
C = TypeVar("C")
Rows = list[dict[str, Any]]


async def rebuild_generation(
    index: GenerationalIndex[W],
    snapshot: int,
    rows_after: Callable[[int, int], Awaitable[Rows]],
    write: Callable[[W, Rows], object],
    progress: Callable[[int], None] | None = None,
    batch: int = 20_000,
) -> int:
    """Write a new generation from rows (by ascending `seq`), record `snapshot` as applied, and make it serve.

    Changes logged after `snapshot` are replayed on the new generation by the catch-up that follows.
    """
    generation = await asyncio.to_thread(index.new_generation)
    written, after = 0, 0
    while rows := await rows_after(after, batch):
        await asyncio.to_thread(write, generation, rows)
        written += len(rows)
        after = int(rows[-1]["seq"])
        if progress is not None:
            progress(len(rows))
    await asyncio.to_thread(generation.commit, snapshot)
    await asyncio.to_thread(index.publish, generation)
    await change_feed.announce_index_commit(index.folder)
    return written


async def catch_up(
    index: GenerationalIndex[W],
    rebuild: Callable[[], Awaitable[int]],
    changes_after: Callable[[int, int], Awaitable[list[tuple[int, C]]]],
    apply: Callable[[W, list[tuple[int, C]]], Awaitable[None]],
    per_commit: int,
) -> int:
    """Apply every logged change to the serving generation (building one if none serves); returns the position."""
    async with index.write_lock():
        writer = await asyncio.to_thread(index.writer)
        if writer is None:
            await rebuild()
            writer = await asyncio.to_thread(index.writer)
            assert writer is not None
        applied = writer.applied_seq
        committed = False
        while changes := await changes_after(applied, per_commit):
            await apply(writer, changes)
            # Whole change sets per commit: what one change set removes leaves in the commit its additions enter.
            applied = changes[-1][0]
            await asyncio.to_thread(writer.commit, applied)
            committed = True
        if committed:
            # Readers in other processes reload at once (this process's readers were told by the commit).
            await change_feed.announce_index_commit(index.folder)
        return applied


async def follow(stop: asyncio.Event, catch_up_now: Callable[[], Awaitable[int]], label: str, interval: float) -> None:
    """Run `catch_up_now` every `interval` seconds until `stop` (the worker runs one per index)."""
    while not stop.is_set():
        try:
            await catch_up_now()
        except IndexBusy:
            log.warning("the %s index is held by another process; retrying", label)
        except Exception:  # the next round retries; never let the follower die silently
            log.exception("%s index catch-up failed", label)
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(stop.wait(), interval)
