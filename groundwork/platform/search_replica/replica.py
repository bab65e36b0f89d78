"""This process's search replica: its own copy of the corpus and package indexes, fed in order from PostgreSQL.

Every process that serves search (each API process, each worker) keeps its replica in a directory of its
own (`GROUNDWORK_INDEX_DIR`, claimed for the process's lifetime, see `search.replica_directory`), so no
two processes share a Tantivy writer lock or a directory, and API nodes need no shared file system. A
replica applies the change logs (`corpus_index_log`, `context_entry_index_log`) in `seq` order: the
logs' NOTIFY wakes it at once (`persistence.change_feed`), and it looks every `POLL_SECONDS` anyway.
A fresh replica (or one written by an older schema) is first rebuilt from PostgreSQL; the process is
ready (`/health/ready`) once both indexes have applied everything logged when they started.

Consistency holds per replica: each commit records the log position it reached, and a search answers
from one snapshot and the serving state at that position (`search.passages`). A lagging replica may
miss a newer version for as long as it lags; it never serves a version its own position has taken out,
and its counts always agree with its pages.

`search_index_lag()` says how far behind the head of each log this process's replica is (no I/O: for
metrics gauges), `search_replica_state()` adds its directory and readiness (for `/health/ready`).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from groundwork.persistence import change_feed
from groundwork.persistence.repositories.platform.index_logs import IndexLog, log_position
from groundwork.platform.search_replica.corpus_projection import catch_up_index, rebuild_index
from groundwork.platform.search_replica.package_projection import catch_up_package_index, rebuild_package_index
from groundwork.platform.search_replica.projection import VERIFY_SECONDS, verify_or_rebuild
from groundwork.search import generations
from groundwork.search.corpus_index import CorpusIndex
from groundwork.search.generations import GenerationalIndex, IndexBusy
from groundwork.search.package_index import PackageIndex
from groundwork.search.replica_directory import claim_directory

log = logging.getLogger(__name__)

# The safety net beside NOTIFY: a replica looks for changes at least this often.
POLL_SECONDS = 2.0
# How long stopping waits for a catch-up in progress before it abandons it.
STOP_SECONDS = 5.0


@dataclass(frozen=True)
class IndexLag:
    """How far one index of this process's replica is behind the head of its change log.

    `changes_behind`: change sets logged and not applied yet. `seconds_behind`: how long the oldest of them
    has waited (0 when none). Measured after each catch-up; `seconds_behind` keeps growing while stuck.
    """

    index: str
    applied_seq: int
    head_seq: int
    changes_behind: int
    seconds_behind: float


@dataclass(frozen=True)
class ReplicaState:
    """This process's replica: where it lives, whether it has caught up since start, and its lag per index."""

    directory: Path
    ready: bool
    indexes: list[IndexLag]


class _Follower:
    """One index of the replica, following its change log."""

    def __init__(
        self,
        name: IndexLog,
        index: GenerationalIndex[Any],
        catch_up: Callable[[], Awaitable[int]],
        rebuild: Callable[[], Awaitable[int]],
    ) -> None:
        self.name = name
        self.index = index
        self._catch_up = catch_up
        self._rebuild = rebuild
        self.applied_seq = -1
        self.head_seq = 0
        self.changes_behind = 0
        # Monotonic time at which the oldest change not applied was logged (None: none waits).
        self._behind_since: float | None = None
        self.caught_up = asyncio.Event()
        self.wake = asyncio.Event()
        self._verified_at = time.monotonic()

    async def round(self) -> None:
        """Measure the lag, apply every logged change (rebuilding first when nothing serves), measure again.

        Measuring first keeps the lag true while a long catch-up (a rebuild) runs.
        """
        if self.applied_seq < 0:  # where a replica kept from an earlier run stands
            self.applied_seq = await asyncio.to_thread(self.index.committed_position)
        if await self._measure() and self.applied_seq > self.head_seq:
            # Ahead of the log: PostgreSQL was restored from a backup (or the directory belongs to another
            # database). Changes logged from here on would reuse positions it believes applied: start over.
            log.warning(
                "the %s index of this replica is at position %s, beyond the change log's head %s: rebuilding it",
                self.name,
                self.applied_seq,
                self.head_seq,
            )
            async with self.index.write_lock():
                await self._rebuild()
        try:
            self.applied_seq = await self._catch_up()
            self.caught_up.set()
            if await asyncio.to_thread(self.index.outdated):
                # A new analysis: build its generation beside the serving one, which answers until the switch.
                log.info("rebuilding the %s index of this replica for its new analysis version", self.name)
                async with self.index.write_lock():
                    await self._rebuild()
                self.applied_seq = await self._catch_up()
        except IndexBusy:
            log.error("the %s index of this replica is held by another process; retrying", self.name)
        except Exception:  # the next round retries; never let the follower die silently
            log.exception("%s index catch-up failed", self.name)
        if self.index.unreadable or time.monotonic() - self._verified_at >= VERIFY_SECONDS:
            # A segment corrupted where no commit touches it is found here (at once when a search could not read
            # it), and rebuilt from PostgreSQL.
            self.index.unreadable = False
            self._verified_at = time.monotonic()
            try:
                await verify_or_rebuild(self.index, self._rebuild)
            except Exception:
                log.exception("%s index check failed", self.name)
        await self._measure()

    async def _measure(self) -> bool:
        try:
            position = await log_position(self.name, self.applied_seq)
        except Exception:  # PostgreSQL is away: the lag is measured again on the next round
            log.debug("could not measure the %s index's lag", self.name, exc_info=True)
            return False
        self.head_seq = position.head_seq
        self.changes_behind = position.changes_after
        self._behind_since = time.monotonic() - position.oldest_after_seconds if position.changes_after else None
        return True

    def lag(self) -> IndexLag:
        """The lag as last measured (its age in seconds grows until the next measurement)."""
        seconds = 0.0 if self._behind_since is None else max(0.0, time.monotonic() - self._behind_since)
        applied = max(0, self.applied_seq)
        return IndexLag(self.name, applied, self.head_seq, self.changes_behind, round(seconds, 3))


class SearchReplica:
    """The corpus and package indexes under one directory, following their change logs until stopped."""

    def __init__(self, directory: Path, *, poll_seconds: float = POLL_SECONDS) -> None:
        self.directory = directory
        self.poll_seconds = poll_seconds
        self.corpus = CorpusIndex.at(directory)
        self.packages = PackageIndex.at(directory)
        corpus, packages = self.corpus, self.packages
        self._followers = {
            "corpus": _Follower("corpus", corpus, lambda: catch_up_index(corpus), lambda: rebuild_index(corpus)),
            "packages": _Follower(
                "packages",
                packages,
                lambda: catch_up_package_index(packages),
                lambda: rebuild_package_index(packages),
            ),
        }

    def ready(self) -> bool:
        """Whether every index has applied everything logged when this replica started."""
        return all(f.caught_up.is_set() for f in self._followers.values())

    async def wait_ready(self) -> None:
        """Return once the replica is ready."""
        for follower in self._followers.values():
            await follower.caught_up.wait()

    def lag(self) -> list[IndexLag]:
        """Each index's lag behind its change log."""
        return [f.lag() for f in self._followers.values()]

    def state(self) -> ReplicaState:
        """Directory, readiness and lag."""
        return ReplicaState(self.directory, self.ready(), self.lag())

    def _on_change(self, topic: str) -> None:
        if topic == "*":  # the feed (re)connected: whatever was logged meanwhile is unknown
            woken = list(self._followers.values())
        else:
            woken = [f for name, f in self._followers.items() if topic == f"log:{name}"]
        for follower in woken:
            follower.wake.set()

    async def _follow(self, follower: _Follower, stop: asyncio.Event) -> None:
        stopping = asyncio.ensure_future(stop.wait())
        try:
            while not stop.is_set():
                follower.wake.clear()
                try:
                    await follower.round()
                except Exception:  # a round's own bug must not end following: the next round tries again
                    log.exception("the %s index's follower failed", follower.name)
                woken = asyncio.ensure_future(follower.wake.wait())
                await asyncio.wait([woken, stopping], timeout=self.poll_seconds, return_when=asyncio.FIRST_COMPLETED)
                woken.cancel()
        finally:
            stopping.cancel()

    async def run(self, stop: asyncio.Event) -> None:
        """Follow both change logs until `stop` (woken by the change feed when this process listens)."""
        change_feed.subscribe(self._on_change)
        try:
            await asyncio.gather(*(self._follow(f, stop) for f in self._followers.values()))
        finally:
            change_feed.unsubscribe(self._on_change)
            for index in (self.corpus, self.packages):
                async with index.write_lock():
                    # Stopping: merges resume after this index's next commit, in whichever process writes it.
                    await asyncio.to_thread(index.release_writer, finish_merges=False)


_current: SearchReplica | None = None


@asynccontextmanager
async def running(index_dir: Path, *, poll_seconds: float = POLL_SECONDS) -> AsyncIterator[SearchReplica]:
    """Keep this process's replica in `index_dir` (or the first free sibling) until the block ends.

    The process's searches and index steps use that directory from now on. Nested use (two apps in one
    process) shares the one replica.
    """
    global _current
    if _current is not None:
        yield _current
        return
    claimed = claim_directory(index_dir)
    if claimed.path != claimed.requested:
        log.warning("%s is used by another process: this process keeps its replica in %s", index_dir, claimed.path)
    generations.configure(claimed.path)
    replica = SearchReplica(claimed.path, poll_seconds=poll_seconds)
    stop = asyncio.Event()
    task = asyncio.create_task(replica.run(stop))
    _current = replica
    try:
        yield replica
    finally:
        _current = None
        stop.set()
        # A round finishes within moments; a rebuild may take minutes and is simply started again next time.
        done, _ = await asyncio.wait([task], timeout=STOP_SECONDS)
        if not done:
            task.cancel()
        with contextlib.suppress(BaseException):
            await task
        claimed.release()


def search_replica_state() -> ReplicaState | None:
    """This process's replica (directory, readiness, lag); None when the process keeps none."""
    return _current.state() if _current is not None else None


def search_index_lag() -> list[IndexLag]:
    """How far this process's search replica is behind each change log (empty when it keeps none).

    One `IndexLag` per index (`corpus`, `packages`) with `changes_behind` and `seconds_behind`; no I/O,
    so a metrics gauge may call it on every scrape.
    """
    return _current.lag() if _current is not None else []
