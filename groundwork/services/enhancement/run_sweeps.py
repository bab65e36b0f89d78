"""The worker's sweep of runs whose workflow ended without finishing them (terminated, timed out, failed outside
the code that records a run's failures): each is marked `failed` with a coded reason and its one `failed` event.

Temporal's visibility lists the run workflows that closed that way; PostgreSQL says which of them are still open
runs. Marking one is the transaction of `run_endings.end_run`, which leaves a final run alone: repeated sweeps and
several workers sweeping at once mark each run once and send its event once.
"""

from __future__ import annotations

import logging
from datetime import UTC, datetime, timedelta

from temporalio.client import Client, WorkflowExecutionStatus

from groundwork.persistence.repositories.enhancement import runs
from groundwork.services.enhancement.run_endings import end_run

log = logging.getLogger(__name__)

# Each way a workflow can end without its code finishing the run, with the run's error code and message.
ENDINGS: dict[WorkflowExecutionStatus, tuple[str, str]] = {
    WorkflowExecutionStatus.TERMINATED: (
        "workflow_terminated",
        "The run's workflow was terminated outside Groundwork before it finished the run.",
    ),
    WorkflowExecutionStatus.TIMED_OUT: (
        "workflow_timed_out",
        "The run's workflow reached a Temporal timeout before it finished the run.",
    ),
    WorkflowExecutionStatus.FAILED: (
        "workflow_failed",
        "The run's workflow failed outside the code that records a run's failures.",
    ),
}
# How far back the sweep looks for closed workflows: far more than the sweep's interval, so a worker that was down
# for hours still finds them; bounded, so the listing stays small on clusters that keep closed workflows long.
LOOKBACK = timedelta(days=1)


def ended_workflows_query(since: datetime) -> str:
    """The visibility query for run workflows that closed abnormally since `since`."""
    return (
        "WorkflowType = 'EnhancementRunWorkflow'"
        " AND ExecutionStatus IN ('Terminated', 'TimedOut', 'Failed')"
        f" AND CloseTime > '{since.astimezone(UTC).strftime('%Y-%m-%dT%H:%M:%SZ')}'"
    )


async def sweep_ended_workflows(client: Client) -> int:
    """Mark `failed` every open run whose workflow ended without finishing it; returns how many this call marked."""
    ended: dict[str, WorkflowExecutionStatus] = {}
    async for execution in client.list_workflows(ended_workflows_query(datetime.now(UTC) - LOOKBACK)):
        if execution.status in ENDINGS:
            ended[execution.id] = execution.status
    if not ended:
        return 0
    marked = 0
    for run_id in await runs.open_runs_among(list(ended)):
        code, message = ENDINGS[ended[run_id]]
        _, ended_now = await end_run(run_id, "failed", code, message)
        if ended_now:
            marked += 1
            log.warning("run %s marked failed: its workflow ended without it (%s)", run_id, code)
    return marked
