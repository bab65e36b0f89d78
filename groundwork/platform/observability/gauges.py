"""The gauges read from PostgreSQL and the search replica (outbox, failed deliveries, index lag) and the
`/metrics` text of the API; the worker serves its own (`metrics.MetricsServer`)."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from prometheus_client.registry import Collector

from groundwork.persistence.repositories.platform import backlogs as operations
from groundwork.platform.observability import metrics
from groundwork.platform.search_replica import replica as search_replica
from groundwork.search.corpus_index import corpus_index
from groundwork.search.generations import GenerationalIndex

log = logging.getLogger(__name__)

# A scrape reads PostgreSQL at most this often per process; scrapes in between see the last values.
REFRESH_SECONDS = 5.0
CORPUS = "corpus"


@dataclass(frozen=True)
class IndexLag:
    """How far a search replica is behind its change log."""

    index: str
    applied_seq: int
    change_sets_behind: int
    oldest_age_seconds: float


def record_index_lag(lag: IndexLag) -> None:
    """Publish `lag` as `groundwork_search_index_lag_*{index=...}` (any replica-keeping process may call it)."""
    metrics.SEARCH_INDEX_LAG.labels(lag.index).set(lag.change_sets_behind)
    metrics.SEARCH_INDEX_LAG_SECONDS.labels(lag.index).set(lag.oldest_age_seconds)


async def corpus_index_lag(index: GenerationalIndex[Any] | None, applied_seq: int | None = None) -> IndexLag:
    """The lag of this process's corpus replica: change sets after the position its searcher sees.

    `applied_seq` overrides the position (a replica that tracks its own); otherwise the serving
    snapshot's position is read (0 when no generation serves yet: the whole log is behind).
    """
    if applied_seq is None:
        snapshot = await asyncio.to_thread(index.snapshot) if index is not None else None
        applied_seq = snapshot.applied_seq if snapshot is not None else 0
    tail = await operations.corpus_index_log_after(applied_seq)
    return IndexLag(CORPUS, applied_seq, tail.change_sets, tail.oldest_age_seconds)


class _Refresh:
    """Reads the database gauges at most every REFRESH_SECONDS, one read at a time."""

    def __init__(self) -> None:
        self.last = 0.0
        self.lock = asyncio.Lock()

    async def __call__(self) -> None:
        if time.monotonic() - self.last < REFRESH_SECONDS:
            return
        async with self.lock:
            if time.monotonic() - self.last < REFRESH_SECONDS:
                return
            await refresh_gauges()
            self.last = time.monotonic()


class SharedGaugeReporter:
    """Makes one worker at a time the reporter of the gauges of shared state (outbox backlog, failed deliveries):
    the holder of a PostgreSQL session lock. Every worker reporting them would multiply them in a sum."""

    def __init__(self, dsn: str) -> None:
        self.dsn = dsn
        self._connection: Any = None

    async def holds(self) -> bool:
        """Whether this process reports them now (taking the lock when it is free)."""
        if self._connection is None or self._connection.is_closed():
            self._connection = await operations.hold_gauge_reporter_lock(self.dsn)
        metrics.report_shared_state(self._connection is not None)
        return self._connection is not None

    async def close(self) -> None:
        """Give the lock back (another worker takes over at its next round)."""
        metrics.report_shared_state(False)
        if self._connection is not None and not self._connection.is_closed():
            await self._connection.close()
        self._connection = None


async def refresh_shared_gauges() -> None:
    """Set the outbox and failed-delivery gauges from PostgreSQL (the reporting worker calls it)."""
    backlog = await operations.outbox_backlog()
    metrics.OUTBOX_BACKLOG.set(backlog.events)
    metrics.OUTBOX_OLDEST_AGE.set(backlog.oldest_age_seconds)
    metrics.WEBHOOK_DELIVERIES_FAILED.set(await operations.failed_webhook_deliveries())


async def refresh_gauges() -> None:
    """Set this process's search index lag gauges from its replica (or the shared index, without one)."""
    replica_lags = search_replica.search_index_lag()
    if not replica_lags:  # a process without a replica of its own (tests, a CLI) reads the shared index
        record_index_lag(await corpus_index_lag(corpus_index()))
    for lag in replica_lags:  # this process's own replica: both of its indexes, as it measured them
        metrics.SEARCH_INDEX_LAG.labels(lag.index).set(lag.changes_behind)
        metrics.SEARCH_INDEX_LAG_SECONDS.labels(lag.index).set(lag.seconds_behind)


_refresh = _Refresh()


async def metrics_text(extra: Iterable[Collector] = ()) -> tuple[bytes, str]:
    """The Prometheus text of this API process after refreshing its index lag gauges (if they are due)."""
    try:
        await _refresh()
    except Exception:  # a scrape still answers with the request metrics when PostgreSQL is down
        log.warning("could not refresh the index lag gauges for /metrics", exc_info=True)
    return metrics.exposition(metrics.API_FAMILIES, extra)
