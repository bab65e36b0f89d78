"""Activities of the tracker import workflow: thin steps over `services.work_items.import_jobs`."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from temporalio import activity

from groundwork.activities.heartbeats import beating
from groundwork.services.work_items import import_jobs as steps
from groundwork.workflows.work_items import ImportBatch, ImportJob, ImportProgress


@activity.defn(name="work_item_import_start")
async def start_import(job: ImportJob) -> ImportProgress:
    """Mark the import running and count its entries."""
    async with beating():
        return await steps.start(job.import_id)


@activity.defn(name="work_item_import_batch")
async def import_batch(batch: ImportBatch) -> ImportProgress:
    """Import the next batch of entries and record the progress."""
    async with beating():
        return await steps.run_batch(batch.import_id, batch.start)


@activity.defn(name="work_item_import_finish")
async def finish_import(job: ImportJob) -> ImportProgress:
    """Mark the import succeeded (its report complete)."""
    async with beating():
        return await steps.finish(job.import_id)


WORK_ITEM_ACTIVITIES: list[Callable[..., Any]] = [start_import, import_batch, finish_import]
