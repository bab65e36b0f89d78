"""The worker process: the Temporal worker for every Groundwork workflow and activity."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import signal
from datetime import timedelta

from temporalio.client import (
    Client,
    Schedule,
    ScheduleActionStartWorkflow,
    ScheduleAlreadyRunningError,
    ScheduleIntervalSpec,
    ScheduleSpec,
)
from temporalio.worker import Worker

from groundwork.activities.maintenance import purge_expired_idempotency_keys
from groundwork.api.temporal import connect_client
from groundwork.config import Settings
from groundwork.persistence import db
from groundwork.workflows.maintenance import PURGE_SCHEDULE_ID, PurgeIdempotencyKeysWorkflow

log = logging.getLogger("groundwork.worker")

WORKFLOWS = [PurgeIdempotencyKeysWorkflow]
ACTIVITIES = [purge_expired_idempotency_keys]


def build_worker(client: Client, task_queue: str) -> Worker:
    """A worker for every Groundwork workflow and activity on `task_queue`."""
    return Worker(client, task_queue=task_queue, workflows=WORKFLOWS, activities=ACTIVITIES)


async def ensure_schedules(client: Client, task_queue: str) -> None:
    """Create the housekeeping schedules if they do not exist yet (every worker may try)."""
    with contextlib.suppress(ScheduleAlreadyRunningError):
        await client.create_schedule(
            PURGE_SCHEDULE_ID,
            Schedule(
                action=ScheduleActionStartWorkflow(
                    PurgeIdempotencyKeysWorkflow.run, id=PURGE_SCHEDULE_ID, task_queue=task_queue
                ),
                spec=ScheduleSpec(intervals=[ScheduleIntervalSpec(every=timedelta(hours=1))]),
            ),
        )


async def run_worker(settings: Settings) -> None:
    """Run until SIGINT or SIGTERM, then finish in-flight activities and stop."""
    await db.connect(settings.database_url, max_size=settings.db_pool_max_size)
    client = await connect_client(settings)
    await ensure_schedules(client, settings.temporal_task_queue)
    worker = build_worker(client, settings.temporal_task_queue)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    log.info("worker polling task queue %s on %s", settings.temporal_task_queue, settings.temporal_address)
    try:
        async with worker:
            await stop.wait()
    finally:
        await db.disconnect()
    log.info("worker stopped")


def main() -> None:
    """Entry point for `python -m groundwork.worker`."""
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s %(message)s")
    asyncio.run(run_worker(Settings.from_env()))


if __name__ == "__main__":
    main()
