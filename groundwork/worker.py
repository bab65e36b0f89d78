"""The worker process: the Temporal worker for every Groundwork workflow and activity."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import signal
from collections.abc import Callable
from datetime import timedelta
from typing import Any

import uvloop
from temporalio.client import (
    Client,
    Schedule,
    ScheduleActionStartWorkflow,
    ScheduleAlreadyRunningError,
    ScheduleIntervalSpec,
    ScheduleOverlapPolicy,
    SchedulePolicy,
    ScheduleSpec,
)
from temporalio.worker import Worker

from groundwork.activities.context_engine import CONTEXT_ACTIVITIES
from groundwork.activities.enhancement import EnhancementActivities
from groundwork.activities.evidence_search import CORPUS_ACTIVITIES
from groundwork.activities.maintenance import RetentionActivities, purge_expired_idempotency_keys
from groundwork.activities.notifications import NotificationActivities
from groundwork.activities.webhooks import WebhookActivities
from groundwork.activities.work_items import WORK_ITEM_ACTIVITIES
from groundwork.config import Settings
from groundwork.domain.enhancement.enhancer import Enhancer
from groundwork.domain.enhancement.extractive import ExtractiveEnhancer
from groundwork.persistence import db
from groundwork.platform.caches.serving import serving_caches
from groundwork.platform.observability import tracing
from groundwork.platform.observability.gauges import SharedGaugeReporter, refresh_gauges, refresh_shared_gauges
from groundwork.platform.observability.logs import configure_logging
from groundwork.platform.observability.metrics import MetricsServer
from groundwork.platform.observability.temporal_sdk import sdk_metrics_runtime
from groundwork.platform.outbox.relay import OutboxConsumer, OutboxRelay
from groundwork.platform.search_replica import replica as search_replica
from groundwork.platform.temporal.client import connect_client
from groundwork.search import corpus_index
from groundwork.services.enhancement.chat_completions import ChatCompletionsEnhancer
from groundwork.services.enhancement.evidence import CorpusEvidence
from groundwork.services.enhancement.run_evidence import EvidenceSource
from groundwork.services.enhancement.run_sweeps import sweep_ended_workflows
from groundwork.services.enhancement.runs import sweep_queued_runs
from groundwork.services.evidence_search import search as corpus_search
from groundwork.services.notifications.fanout import NotificationFanout
from groundwork.services.notifications.snooze_timers import SnoozeTimers
from groundwork.services.tenancy import project_access
from groundwork.services.webhooks.deliveries import WebhookDeliveries
from groundwork.services.webhooks.secrets import seal_legacy_webhook_secrets
from groundwork.workflows.context_engine import (
    CONTEXT_WORKFLOWS,
    PROVIDERS_INTERVAL,
    PROVIDERS_SCHEDULE_ID,
    ContextProvidersRunWorkflow,
    ProvidersRunInput,
)
from groundwork.workflows.enhancement import ApplyDraftsWorkflow, EnhancementRunWorkflow
from groundwork.workflows.evidence_search import CORPUS_WORKFLOWS
from groundwork.workflows.maintenance import (
    PURGE_SCHEDULE_ID,
    WEBHOOK_HISTORY_SCHEDULE_ID,
    PurgeIdempotencyKeysWorkflow,
    PurgeWebhookHistoryWorkflow,
)
from groundwork.workflows.notifications import (
    CHANGES_PURGE_SCHEDULE_ID,
    NOTIFICATION_WORKFLOWS,
    PurgeNotificationChangesWorkflow,
)
from groundwork.workflows.search_attributes import workspace_attributes
from groundwork.workflows.webhooks import WebhookDeliveryWorkflow
from groundwork.workflows.work_items import WORK_ITEM_WORKFLOWS

log = logging.getLogger("groundwork.worker")

WORKFLOWS: list[type] = [
    PurgeIdempotencyKeysWorkflow,
    PurgeWebhookHistoryWorkflow,
    EnhancementRunWorkflow,
    ApplyDraftsWorkflow,
    WebhookDeliveryWorkflow,
    *CORPUS_WORKFLOWS,
    *NOTIFICATION_WORKFLOWS,
    *CONTEXT_WORKFLOWS,
    *WORK_ITEM_WORKFLOWS,
]
ACTIVITIES: list[Callable[..., Any]] = [
    purge_expired_idempotency_keys,
    *CORPUS_ACTIVITIES,
    *CONTEXT_ACTIVITIES,
    *WORK_ITEM_ACTIVITIES,
]
# How often the worker reads the outbox, delivery and index-lag gauges from PostgreSQL (with --metrics-port).
METRICS_REFRESH_SECONDS = 10.0


def enhancer_for(settings: Settings) -> Enhancer:
    """The configured draft generator: an OpenAI-compatible endpoint if set, else the extractive default."""
    if settings.llm_base_url:
        return ChatCompletionsEnhancer(settings.llm_base_url, settings.llm_model or "", settings.llm_api_key)
    return ExtractiveEnhancer()


def outbox_relay(client: Client, settings: Settings, **options: Any) -> OutboxRelay:
    """The outbox relay with every domain's consumer: notifications first (then their snooze timers), then
    webhook deliveries."""

    async def get_client() -> Client:
        return client

    consumers: list[OutboxConsumer] = [
        NotificationFanout(get_client, settings),
        SnoozeTimers(get_client, settings),
        WebhookDeliveries(get_client, settings),
    ]
    options.setdefault("sweep_seconds", settings.webhook_sweep_seconds)
    return OutboxRelay(settings.database_url, consumers, **options)


def build_worker(
    client: Client,
    task_queue: str,
    *,
    enhancer: Enhancer | None = None,
    settings: Settings | None = None,
    evidence: EvidenceSource | None = None,
) -> Worker:
    """A worker for every Groundwork workflow and activity on `task_queue` (sends configured by `settings`)."""
    # Draft evidence checks the requester's context:read and the index's serving state on every run: the
    # worker keeps both cached, dropped by the change feed like an API process's.
    evidence = evidence or CorpusEvidence(
        holds=project_access.principal_holds, serving_state=corpus_search.serving_state
    )
    enhancement = EnhancementActivities(enhancer or ExtractiveEnhancer(), evidence)
    notifications = NotificationActivities(settings)
    webhooks = WebhookActivities(settings)
    retention = RetentionActivities(settings)
    return Worker(
        client,
        task_queue=task_queue,
        workflows=WORKFLOWS,
        activities=[*ACTIVITIES, *enhancement.all(), *notifications.all(), *webhooks.all(), *retention.all()],
    )


async def sweep_queued_runs_forever(client: Client, settings: Settings) -> None:
    """Give every run left `queued` its workflow (same id, so never twice), and mark `failed` every open run whose
    workflow ended without finishing it (terminated, timed out, failed outside the code)."""
    while True:
        try:
            await sweep_queued_runs(client, settings.temporal_task_queue, settings.review_window_seconds)
            await sweep_ended_workflows(client)
        except Exception:  # the next sweep tries again; the error is logged, never lost silently
            log.exception("queued-run sweep failed")
        await asyncio.sleep(settings.queued_run_sweep_seconds)


async def ensure_schedules(client: Client, task_queue: str) -> None:
    """Create the housekeeping schedules if they do not exist yet (every worker may try)."""
    with contextlib.suppress(ScheduleAlreadyRunningError):
        await client.create_schedule(
            PURGE_SCHEDULE_ID,
            Schedule(
                action=ScheduleActionStartWorkflow(
                    PurgeIdempotencyKeysWorkflow.run,
                    id=PURGE_SCHEDULE_ID,
                    task_queue=task_queue,
                    typed_search_attributes=workspace_attributes(None),
                ),
                spec=ScheduleSpec(intervals=[ScheduleIntervalSpec(every=timedelta(hours=1))]),
            ),
        )
    # Webhook history (attempts, deliveries, dispatched events) past its retention windows.
    with contextlib.suppress(ScheduleAlreadyRunningError):
        await client.create_schedule(
            WEBHOOK_HISTORY_SCHEDULE_ID,
            Schedule(
                action=ScheduleActionStartWorkflow(
                    PurgeWebhookHistoryWorkflow.run,
                    id=WEBHOOK_HISTORY_SCHEDULE_ID,
                    task_queue=task_queue,
                    typed_search_attributes=workspace_attributes(None),
                ),
                spec=ScheduleSpec(intervals=[ScheduleIntervalSpec(every=timedelta(hours=1))]),
                policy=SchedulePolicy(overlap=ScheduleOverlapPolicy.SKIP),
            ),
        )
    # The live notification feed's changes past its resume window.
    with contextlib.suppress(ScheduleAlreadyRunningError):
        await client.create_schedule(
            CHANGES_PURGE_SCHEDULE_ID,
            Schedule(
                action=ScheduleActionStartWorkflow(
                    PurgeNotificationChangesWorkflow.run,
                    id=CHANGES_PURGE_SCHEDULE_ID,
                    task_queue=task_queue,
                    typed_search_attributes=workspace_attributes(None),
                ),
                spec=ScheduleSpec(intervals=[ScheduleIntervalSpec(every=timedelta(hours=1))]),
                policy=SchedulePolicy(overlap=ScheduleOverlapPolicy.SKIP),
            ),
        )
    # The built-in context providers contribute what changed in every workspace's data.
    with contextlib.suppress(ScheduleAlreadyRunningError):
        await client.create_schedule(
            PROVIDERS_SCHEDULE_ID,
            Schedule(
                action=ScheduleActionStartWorkflow(
                    ContextProvidersRunWorkflow.run,
                    ProvidersRunInput(),
                    id=PROVIDERS_SCHEDULE_ID,
                    task_queue=task_queue,
                    typed_search_attributes=workspace_attributes(None),
                ),
                spec=ScheduleSpec(intervals=[ScheduleIntervalSpec(every=PROVIDERS_INTERVAL)]),
                policy=SchedulePolicy(overlap=ScheduleOverlapPolicy.SKIP),
            ),
        )


async def refresh_gauges_forever(stop: asyncio.Event, dsn: str) -> None:
    """Keep the gauges of the worker's `/metrics` current: its replica's index lag, and the outbox and failed
    deliveries while this worker is the one reporting them."""
    reporter = SharedGaugeReporter(dsn)
    try:
        while not stop.is_set():
            try:
                await refresh_gauges()
                if await reporter.holds():
                    await refresh_shared_gauges()
            except Exception:  # the next round tries again
                log.warning("could not refresh the database gauges", exc_info=True)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), METRICS_REFRESH_SECONDS)
    finally:
        await reporter.close()


async def run_worker(settings: Settings, *, metrics_host: str = "127.0.0.1", metrics_port: int | None = None) -> None:
    """Run until SIGINT or SIGTERM, then finish in-flight activities and stop.

    With `metrics_port`, Prometheus text is served at `http://metrics_host:metrics_port/metrics`:
    Groundwork's metrics and the Temporal SDK's own (workflow and activity outcomes).
    """
    await db.connect(settings.database_url, max_size=settings.db_pool_max_size)
    # Where this process's indexes live until its replica claims its own directory (the gauges read it first).
    corpus_index.configure(settings.index_dir)
    # Signing secrets written before they were sealed (SQL cannot encrypt them) are sealed now.
    await seal_legacy_webhook_secrets(settings.keyring)
    runtime, metrics_server = None, None
    if metrics_port is not None:
        runtime, sdk_metrics = sdk_metrics_runtime()
        metrics_server = MetricsServer(metrics_host, metrics_port, [sdk_metrics])
        log.info("metrics on http://%s:%s/metrics", metrics_host, metrics_server.port)
    client = await connect_client(settings, runtime=runtime)
    await ensure_schedules(client, settings.temporal_task_queue)
    worker = build_worker(client, settings.temporal_task_queue, enhancer=enhancer_for(settings), settings=settings)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    log.info("worker polling task queue %s on %s", settings.temporal_task_queue, settings.temporal_address)
    sweep = asyncio.create_task(sweep_queued_runs_forever(client, settings))
    # The outbox relay runs beside the worker: every worker process relays, SKIP LOCKED shares the work.
    relay = asyncio.create_task(outbox_relay(client, settings).run(stop))
    gauges = (
        asyncio.create_task(refresh_gauges_forever(stop, settings.database_url)) if metrics_server is not None else None
    )
    try:
        # Index readers (draft evidence) reload when told of a commit; the worker keeps its own search
        # replica (its ingest steps index into it) and polls the task queue once it has caught up.
        async with serving_caches(settings.database_url), search_replica.running(settings.index_dir) as replica:
            await _first_of(replica.wait_ready(), stop.wait())
            if not stop.is_set():
                log.info("search replica in %s is ready", replica.directory)
                async with worker:
                    await stop.wait()
    finally:
        sweep.cancel()
        stop.set()
        with contextlib.suppress(Exception):
            await relay
        if gauges is not None:
            with contextlib.suppress(Exception):
                await gauges
        if metrics_server is not None:
            metrics_server.close()
        await db.disconnect()
    log.info("worker stopped")


async def _first_of(*waits: Any) -> None:
    tasks = [asyncio.ensure_future(w) for w in waits]
    try:
        await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for task in tasks:
            task.cancel()


def main(*, metrics_host: str = "127.0.0.1", metrics_port: int | None = None) -> None:
    """Entry point for `python -m groundwork.worker` and `groundwork worker`."""
    configure_logging()
    tracing.configure_from_env("groundwork-worker")
    settings = Settings.from_env()
    if settings.keyring is None:
        log.error(
            "GROUNDWORK_SECRET_KEY is not set: e-mail and chat messages go out without action links, "
            "and chat webhook URLs cannot be opened"
        )
    uvloop.run(run_worker(settings, metrics_host=metrics_host, metrics_port=metrics_port))


if __name__ == "__main__":
    main()
