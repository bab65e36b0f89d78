"""`groundwork status`: the health of a running stack on one screen (API, PostgreSQL, Temporal, workers,
outbox, webhook deliveries, search index lag), each with a verdict."""

from __future__ import annotations

import asyncio
import time
from dataclasses import asdict, dataclass, field
from datetime import timedelta
from typing import Any

import httpx
from temporalio.client import Client
from temporalio.service import RPCError

from groundwork.config import Settings
from groundwork.persistence import db
from groundwork.persistence.repositories.platform import backlogs as operations
from groundwork.platform.observability.gauges import corpus_index_lag
from groundwork.platform.temporal.client import connect_client
from groundwork.search.corpus_index import corpus_index

# The outbox relay sweeps every few seconds: an event waiting longer means nothing dispatches.
OUTBOX_STALE_SECONDS = 300.0
# The index follower applies changes within seconds: a change set waiting longer means it is stuck.
INDEX_STALE_SECONDS = 300.0
# Temporal lists a poller for minutes after its worker died; a live one polls at least every ~70 s.
POLLER_FRESH_SECONDS = 90.0
TIMEOUT_SECONDS = 3.0


@dataclass(frozen=True)
class Check:
    """One line of the status: what was looked at, whether it is healthy, and what was seen."""

    name: str
    healthy: bool
    detail: str
    values: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class StackStatus:
    """Every check; the stack is healthy when each of them is."""

    checks: list[Check]

    @property
    def healthy(self) -> bool:
        """Whether every check passed."""
        return all(check.healthy for check in self.checks)

    def as_json(self) -> dict[str, Any]:
        """The status as a JSON-ready object."""
        return {"healthy": self.healthy, "checks": [asdict(check) for check in self.checks]}


async def _api(api_url: str) -> Check:
    url = f"{api_url.rstrip('/')}/health/ready"
    try:
        async with httpx.AsyncClient(timeout=TIMEOUT_SECONDS) as http:
            answer = await http.get(url)
    except httpx.HTTPError as exc:
        return Check("api", False, f"{url} unreachable ({type(exc).__name__})", {"url": url})
    ready = answer.status_code == 200
    return Check("api", ready, f"{url} answered {answer.status_code}", {"url": url, "status": answer.status_code})


async def _postgres(connected: bool) -> Check:
    if not connected:
        return Check("postgres", False, "not reachable")
    return Check("postgres", True, "answers") if await db.ping() else Check("postgres", False, "does not answer")


async def _temporal(settings: Settings) -> tuple[Check, Client | None]:
    try:
        client = await asyncio.wait_for(connect_client(settings), TIMEOUT_SECONDS)
        healthy = await asyncio.wait_for(client.service_client.check_health(), TIMEOUT_SECONDS)
    except Exception as exc:
        return Check("temporal", False, f"{settings.temporal_address} unreachable ({type(exc).__name__})"), None
    detail = f"{settings.temporal_address} namespace {settings.temporal_namespace}"
    return Check("temporal", bool(healthy), detail), client


async def _pollers(client: Client | None, task_queue: str) -> Check:
    from temporalio.api.enums.v1 import TaskQueueType
    from temporalio.api.taskqueue.v1 import TaskQueue
    from temporalio.api.workflowservice.v1 import DescribeTaskQueueRequest

    if client is None:
        return Check("workers", False, f"task queue {task_queue}: Temporal unreachable")
    fresh_after = time.time() - POLLER_FRESH_SECONDS
    counts: dict[str, int] = {}
    identities: set[str] = set()
    for label, kind in (
        ("workflow", TaskQueueType.TASK_QUEUE_TYPE_WORKFLOW),
        ("activity", TaskQueueType.TASK_QUEUE_TYPE_ACTIVITY),
    ):
        try:
            response = await client.workflow_service.describe_task_queue(
                DescribeTaskQueueRequest(
                    namespace=client.namespace, task_queue=TaskQueue(name=task_queue), task_queue_type=kind
                ),
                timeout=timedelta(seconds=TIMEOUT_SECONDS),
            )
        except RPCError as exc:
            return Check("workers", False, f"task queue {task_queue}: cannot describe it ({exc.message})")
        live = [p for p in response.pollers if p.last_access_time.ToSeconds() >= fresh_after]
        counts[label] = len(live)
        identities.update(p.identity for p in live)
    healthy = counts["workflow"] > 0 and counts["activity"] > 0
    detail = (
        f"task queue {task_queue}: {counts['workflow']} workflow poller(s), {counts['activity']} activity poller(s)"
        + ("" if healthy else " (no worker is polling)")
    )
    return Check("workers", healthy, detail, {**counts, "task_queue": task_queue, "identities": sorted(identities)})


async def _outbox() -> Check:
    backlog = await operations.outbox_backlog()
    healthy = backlog.oldest_age_seconds <= OUTBOX_STALE_SECONDS
    detail = f"{backlog.events} undispatched event(s), oldest {backlog.oldest_age_seconds:.0f} s" + (
        "" if healthy else f" (over {OUTBOX_STALE_SECONDS:.0f} s: is the worker's relay running?)"
    )
    values = {"events": backlog.events, "oldest_age_seconds": backlog.oldest_age_seconds}
    return Check("outbox", healthy, detail, values)


async def _deliveries() -> Check:
    failed = await operations.failed_webhook_deliveries()
    # Receivers that refuse deliveries are their owners' concern, not the stack's: reported, not a failure.
    detail = f"{failed} failed webhook deliveries" + (" (see `groundwork webhooks tail`)" if failed else "")
    return Check("webhook deliveries", True, detail, {"failed": failed})


async def _index_lag() -> Check:
    lag = await corpus_index_lag(corpus_index())
    healthy = lag.oldest_age_seconds <= INDEX_STALE_SECONDS
    detail = f"corpus index at change {lag.applied_seq}: {lag.change_sets_behind} change set(s) behind" + (
        f", oldest {lag.oldest_age_seconds:.0f} s" if lag.change_sets_behind else ""
    )
    if not healthy:
        detail += f" (over {INDEX_STALE_SECONDS:.0f} s: is the worker following the change log?)"
    return Check(
        "search index",
        healthy,
        detail,
        {
            "applied_seq": lag.applied_seq,
            "change_sets_behind": lag.change_sets_behind,
            "oldest_age_seconds": lag.oldest_age_seconds,
        },
    )


async def stack_status(settings: Settings, api_url: str, *, database_connected: bool) -> StackStatus:
    """Look at every part of the stack; parts that need PostgreSQL are reported down when it is."""
    api = await _api(api_url)
    postgres = await _postgres(database_connected)
    temporal, client = await _temporal(settings)
    checks = [api, postgres, temporal, await _pollers(client, settings.temporal_task_queue)]
    if postgres.healthy:
        checks += [await _outbox(), await _deliveries(), await _index_lag()]
    else:
        names = ("outbox", "webhook deliveries", "search index")
        checks += [Check(name, False, "PostgreSQL is down") for name in names]
    return StackStatus(checks)
