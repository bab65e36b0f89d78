"""A large tracker import as a Temporal workflow: the entries in batches, each batch one activity, progress
recorded in PostgreSQL after each batch (so `GET .../imports/{id}` shows it and a restart resumes there).

`WorkItemImportWorkflow` (id = the import's id, `imp_...`) runs start → batch … batch → finish. A batch
that is retried after a crash finds the entries it already wrote by their external id: nothing doubles.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta

from temporalio import workflow
from temporalio.common import RetryPolicy

_TIMEOUT = timedelta(minutes=5)
_HEARTBEAT = timedelta(seconds=30)
_RETRY = RetryPolicy(
    initial_interval=timedelta(milliseconds=200),
    maximum_interval=timedelta(seconds=10),
    maximum_attempts=20,
    non_retryable_error_types=["not_found"],
)


@dataclass
class ImportJob:
    """The import to run (its file, maps and actor are in its row)."""

    import_id: str


@dataclass
class ImportBatch:
    """The next entries to import, from `start`."""

    import_id: str
    start: int


@dataclass
class ImportProgress:
    """How far the import is: entries processed of the total, and its status."""

    processed: int
    total: int
    status: str


@workflow.defn(name="WorkItemImportWorkflow")
class WorkItemImportWorkflow:
    """Import a tracker export's entries in batches, recording progress after each."""

    @workflow.run
    async def run(self, job: ImportJob) -> ImportProgress:
        """Start, import every batch, finish."""
        progress: ImportProgress = await _step("work_item_import_start", job)
        while progress.status == "running" and progress.processed < progress.total:
            progress = await _step("work_item_import_batch", ImportBatch(job.import_id, progress.processed))
        return await _step("work_item_import_finish", job)


async def _step(activity: str, arg: ImportJob | ImportBatch) -> ImportProgress:
    result: ImportProgress = await workflow.execute_activity(
        activity,
        arg,
        result_type=ImportProgress,
        start_to_close_timeout=_TIMEOUT,
        heartbeat_timeout=_HEARTBEAT,
        retry_policy=_RETRY,
    )
    return result


WORK_ITEM_WORKFLOWS: list[type] = [WorkItemImportWorkflow]
