"""Index replicas as projections of PostgreSQL: build a generation from scratch, catch up with a change log,
and keep following it. The corpus index and the package index both run on these."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable
from typing import Protocol, TypeVar

from groundwork.persistence import change_feed
from groundwork.search.failures import is_index_failure
from groundwork.search.generations import GenerationalIndex, GenerationWriter, IndexBusy

log = logging.getLogger(__name__)

W = TypeVar("W", bound=GenerationWriter)
C = TypeVar("C")


class Sequenced(Protocol):
    """A row the index holds, keyed by its position (`seq`)."""

    @property
    def seq(self) -> int: ...


R = TypeVar("R", bound=Sequenced)


async def rebuild_generation(
    index: GenerationalIndex[W],
    snapshot: int,
    rows_after: Callable[[int, int], Awaitable[list[R]]],
    write: Callable[[W, list[R]], object],
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
        after = rows[-1].seq
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
    """Apply every logged change to the serving generation (building one if none serves); returns the position.

    A generation whose files cannot be read or written (deleted, corrupted) is replaced by a rebuild from
    PostgreSQL, which holds every passage: the index is only a projection of it."""
    async with index.write_lock():
        try:
            return await _catch_up_locked(index, rebuild, changes_after, apply, per_commit)
        except BaseException as exc:
            if not is_index_failure(exc):
                raise
            log.error("the %s index is unreadable (%s); rebuilding it from PostgreSQL", index.folder, exc)
            await asyncio.to_thread(index.release_writer, finish_merges=False)
            await rebuild()
            return await _catch_up_locked(index, rebuild, changes_after, apply, per_commit)


async def _catch_up_locked(
    index: GenerationalIndex[W],
    rebuild: Callable[[], Awaitable[int]],
    changes_after: Callable[[int, int], Awaitable[list[tuple[int, C]]]],
    apply: Callable[[W, list[tuple[int, C]]], Awaitable[None]],
    per_commit: int,
) -> int:
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


async def verify_or_rebuild(index: GenerationalIndex[W], rebuild: Callable[[], Awaitable[int]]) -> bool:
    """Check the serving generation's files; rebuild it from PostgreSQL if they cannot be read. True if rebuilt."""
    async with index.write_lock():
        try:
            await asyncio.to_thread(index.verify)
            return False
        except BaseException as exc:
            if not is_index_failure(exc):
                raise
            log.error("the %s index is unreadable (%s); rebuilding it from PostgreSQL", index.folder, exc)
            await asyncio.to_thread(index.release_writer, finish_merges=False)
            await rebuild()
            return True


# How often a follower checks its index's files even when nothing is written (a corrupted segment that no
# commit touches is found within this).
VERIFY_SECONDS = 10.0


async def follow(
    stop: asyncio.Event,
    catch_up_now: Callable[[], Awaitable[int]],
    label: str,
    interval: float,
    verify_now: Callable[[], Awaitable[bool]] | None = None,
) -> None:
    """Run `catch_up_now` every `interval` seconds, and `verify_now` every VERIFY_SECONDS, until `stop` (the
    worker runs one per index)."""
    verified_at = asyncio.get_running_loop().time()
    while not stop.is_set():
        try:
            await catch_up_now()
            if verify_now is not None and asyncio.get_running_loop().time() - verified_at >= VERIFY_SECONDS:
                verified_at = asyncio.get_running_loop().time()
                await verify_now()
        except IndexBusy:
            log.warning("the %s index is held by another process; retrying", label)
        except Exception:  # the next round retries; never let the follower die silently
            log.exception("%s index catch-up failed", label)
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(stop.wait(), interval)
