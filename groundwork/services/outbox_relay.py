"""The outbox relay: turns committed events into one `WebhookDeliveryWorkflow` per subscribed endpoint.

It wakes on `LISTEN groundwork_outbox` (the outbox trigger notifies at commit) and sweeps on a timer
as well, so a lost notification or a dropped listener only delays. Each pass claims undispatched
events with `FOR UPDATE SKIP LOCKED`, so several relays (one per worker process) share the work
without taking the same event. The claim creates the delivery rows and marks the events dispatched
in one transaction; the workflows start after the commit with id `whd_<event>_<endpoint>`. A relay
that dies between the commit and the start leaves rows without `workflow_started_at`, which any
relay's sweep starts again after a grace period; Temporal's id policies (use the running workflow,
reject a closed one) make that restart a no-op when the workflow did start.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable
from typing import Any

import asyncpg
from temporalio.client import Client, WorkflowHandle
from temporalio.common import (
    SearchAttributePair,
    TypedSearchAttributes,
    WorkflowIDConflictPolicy,
    WorkflowIDReusePolicy,
)
from temporalio.exceptions import WorkflowAlreadyStartedError

from groundwork.config import Settings
from groundwork.persistence.repositories import webhooks as repo
from groundwork.services.notification_fanout import NotificationFanout
from groundwork.workflows.webhooks import (
    ENDPOINT_ATTRIBUTE,
    EVENT_TYPE_ATTRIBUTE,
    STATUS_ATTRIBUTE,
    WORKSPACE_ATTRIBUTE,
    DeliveryPolicy,
    DeliveryRequest,
    WebhookDeliveryWorkflow,
)

log = logging.getLogger("groundwork.services.outbox_relay")

NOTIFY_CHANNEL = "groundwork_outbox"


class DeliveryStarter:
    """Starts delivery workflows for delivery rows and records which ones started."""

    def __init__(
        self,
        client: Callable[[], Awaitable[Client]],
        task_queue: str,
        policy: DeliveryPolicy,
        *,
        concurrency: int = 32,
    ) -> None:
        self._client = client
        self._task_queue = task_queue
        self._policy = policy
        self._limit = asyncio.Semaphore(concurrency)

    async def start(self, deliveries: list[dict[str, Any]]) -> int:
        """Start (or find already started) the workflow of each delivery; returns how many are known started.

        Each generation of a delivery has its own workflow id, so the run found for an id is always
        of the generation the row asks for: reusing it (a relay and the API, or two relays, starting
        the same one) is safe, and a run of an older generation never stands in for a newer one.
        """
        if not deliveries:
            return 0
        try:
            client = await self._client()
        except Exception as exc:
            log.warning("Temporal unreachable, %d deliveries wait for the sweep: %s", len(deliveries), exc)
            return 0
        outcomes = await asyncio.gather(*(self._start_one(client, d) for d in deliveries))
        started = [o for o in outcomes if o is not None]
        await repo.mark_started(started)
        return len(started)

    async def _start_one(self, client: Client, delivery: dict[str, Any]) -> tuple[str, int, str | None] | None:
        generation = int(delivery["generation"])
        request = DeliveryRequest(
            delivery_id=delivery["id"],
            generation=generation,
            workspace_id=delivery["workspace_id"],
            endpoint_id=delivery["endpoint_id"],
            event_id=delivery["event_id"],
            event_type=delivery["event_type"],
            policy=self._policy,
        )
        attributes = TypedSearchAttributes(
            [
                SearchAttributePair(ENDPOINT_ATTRIBUTE, delivery["endpoint_id"]),
                SearchAttributePair(EVENT_TYPE_ATTRIBUTE, delivery["event_type"]),
                SearchAttributePair(STATUS_ATTRIBUTE, "pending"),
                SearchAttributePair(WORKSPACE_ATTRIBUTE, delivery["workspace_id"]),
            ]
        )
        async with self._limit:
            try:
                handle: WorkflowHandle[Any, Any] = await client.start_workflow(
                    WebhookDeliveryWorkflow.run,
                    request,
                    id=delivery["workflow_id"],
                    task_queue=self._task_queue,
                    # One run per id, ever: a closed one is never run again, a running one is reused.
                    id_reuse_policy=WorkflowIDReusePolicy.REJECT_DUPLICATE,
                    id_conflict_policy=WorkflowIDConflictPolicy.USE_EXISTING,
                    search_attributes=attributes,
                    # In the worker process the first workflow task goes straight to the local worker.
                    request_eager_start=True,
                )
            except WorkflowAlreadyStartedError:
                return delivery["id"], generation, None  # it ran and closed: nothing to start
            except Exception as exc:
                log.warning("could not start %s, the sweep retries: %s", delivery["workflow_id"], exc)
                return None
        return delivery["id"], generation, handle.result_run_id


class OutboxRelay:
    """Dispatches the outbox to delivery workflows: `run_once()` for one pass, `run()` until stopped."""

    def __init__(
        self,
        client: Client,
        settings: Settings,
        *,
        batch_size: int = 200,
        restart_grace_seconds: float = 15.0,
        sweep_seconds: float | None = None,
    ) -> None:
        self.settings = settings
        self.batch_size = batch_size
        self.restart_grace_seconds = restart_grace_seconds
        self.sweep_seconds = sweep_seconds if sweep_seconds is not None else settings.webhook_sweep_seconds

        async def get_client() -> Client:
            return client

        self.starter = DeliveryStarter(get_client, settings.temporal_task_queue, DeliveryPolicy.from_settings(settings))
        # Notifications are created from the same claim, in its transaction; their sends start after it.
        self.notifications = NotificationFanout(get_client, settings)

    async def run_once(self, *, restart_stranded: bool = True) -> int:
        """Dispatch every undispatched event and (unless told not to) restart deliveries left unstarted; returns
        workflows started."""
        started = 0
        while True:
            claimed, created = await repo.dispatch_outbox_batch(self.batch_size, on_claimed=self.notifications.consume)
            started += await self.starter.start(created)
            started += await self.notifications.start_consumed()
            if claimed < self.batch_size:
                break
        if restart_stranded:
            started += await self._restart_stranded()
        return started

    async def _restart_stranded(self) -> int:
        started = 0
        while True:
            stranded = await repo.claim_unstarted(self.restart_grace_seconds, self.batch_size)
            started += await self.starter.start(stranded)
            if len(stranded) < self.batch_size:
                break
        started += await self.notifications.restart_stranded(self.restart_grace_seconds, self.batch_size)
        return started

    async def run(self, stop: asyncio.Event | None = None) -> None:
        """Pass on every notification and at least every `sweep_seconds`, until `stop` is set."""
        stop = stop or asyncio.Event()
        wake = asyncio.Event()
        listener: asyncpg.Connection | None = None
        failures = 0
        loop = asyncio.get_running_loop()
        # A delivery counts as stranded only `restart_grace_seconds` after its start was asked for, so looking
        # for stranded ones more often than that finds nothing: under load the relay passes many times a
        # second, and those three statements were most of an idle pass's round trips.
        restart_every = min(self.sweep_seconds, self.restart_grace_seconds)
        next_restart = loop.time()
        try:
            while not stop.is_set():
                if listener is None or listener.is_closed():
                    listener = await self._listen(wake)
                wake.clear()
                try:
                    restart = loop.time() >= next_restart
                    await self.run_once(restart_stranded=restart)
                    if restart:
                        next_restart = loop.time() + restart_every
                    failures = 0
                except Exception:
                    failures += 1
                    log.exception("outbox relay pass failed (%d in a row)", failures)
                    # Back off while PostgreSQL or Temporal is down, without oversleeping a stop.
                    with contextlib.suppress(TimeoutError):
                        await asyncio.wait_for(stop.wait(), min(30.0, 0.5 * 2**failures))
                    continue
                await _first_of(wake, stop, timeout=self.sweep_seconds)
        finally:
            if listener is not None and not listener.is_closed():
                await listener.close()

    async def _listen(self, wake: asyncio.Event) -> asyncpg.Connection | None:
        try:
            connection = await asyncpg.connect(self.settings.database_url)
            await connection.add_listener(NOTIFY_CHANNEL, lambda *_: wake.set())
            return connection
        except Exception as exc:
            log.warning("LISTEN %s failed, sweeping only: %s", NOTIFY_CHANNEL, exc)
            return None


async def _first_of(wake: asyncio.Event, stop: asyncio.Event, *, timeout: float) -> None:
    waiters = [asyncio.create_task(wake.wait()), asyncio.create_task(stop.wait())]
    try:
        await asyncio.wait(waiters, timeout=timeout, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for waiter in waiters:
            waiter.cancel()
