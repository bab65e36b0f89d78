"""The gauges read from PostgreSQL and the search replica (outbox, failed deliveries, index lag) and the
`/metrics` text of the API and the worker."""

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


async def refresh_gauges() -> None:
    """Set the outbox, failed-delivery and corpus index lag gauges from PostgreSQL and this process's replica."""
    backlog = await operations.outbox_backlog()
    metrics.OUTBOX_BACKLOG.set(backlog.events)
    metrics.OUTBOX_OLDEST_AGE.set(backlog.oldest_age_seconds)
    metrics.WEBHOOK_DELIVERIES_FAILED.set(await operations.failed_webhook_deliveries())
    replica_lags = search_replica.search_index_lag()
    if not replica_lags:  # a process without a replica of its own (tests, a CLI) reads the shared index
        record_index_lag(await corpus_index_lag(corpus_index()))
    for lag in replica_lags:  # this process's own replica: both of its indexes, as it measured them
        metrics.SEARCH_INDEX_LAG.labels(lag.index).set(lag.changes_behind)
        metrics.SEARCH_INDEX_LAG_SECONDS.labels(lag.index).set(lag.seconds_behind)


_refresh = _Refresh()


async def metrics_text(extra: Iterable[Collector] = ()) -> tuple[bytes, str]:
    """The Prometheus text of this process after refreshing the database gauges (if they are due)."""
    try:
        await _refresh()
    except Exception:  # a scrape still answers with the request metrics when PostgreSQL is down
        log.warning("could not refresh the database gauges for /metrics", exc_info=True)
    return metrics.exposition(extra)
