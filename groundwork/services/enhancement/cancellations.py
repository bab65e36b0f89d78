"""Cancelling a run: Temporal cancels its workflow, whose pending actions stop and which records the cancelled run.

A run whose workflow never started (stored `queued` while Temporal was out of reach) or has already closed is
recorded cancelled here, by the same transaction the workflow's activity runs. The call waits a few seconds for
the cancelled state; past that it answers 202 and the cancellation carries on.
"""

from __future__ import annotations

import asyncio
from typing import Any

from temporalio.service import RPCError, RPCStatusCode

from groundwork.domain.enhancement.model import RunNotCancellable, check_confirm, not_cancellable_reason
from groundwork.domain.errors import ServiceUnavailable
from groundwork.domain.tenancy.principals import Principal
from groundwork.services.enhancement.run_endings import CANCELLED_MESSAGE, end_run
from groundwork.services.enhancement.run_updates import START_SECONDS, temporal_client
from groundwork.services.enhancement.run_views import RunView, load_run, reload_run
from groundwork.services.enhancement.runs import wait_for_run

# How long a cancel waits for the workflow to record the cancelled run before answering 202.
CANCEL_WAIT_SECONDS = 10.0
# The states that end a run being cancelled (a run that failed or expired meanwhile is over too).
ENDED = ("cancelled", "failed", "expired")


async def cancel_run(principal: Principal, run_id: str, confirm: Any) -> tuple[RunView, bool]:
    """Cancel a queued, running or reviewable run; (the run, whether it is recorded cancelled already)."""
    check_confirm(confirm)
    view = await load_run(principal, run_id)
    if reason := not_cancellable_reason(view.run.state, view.expired):
        raise RunNotCancellable(reason[0].upper() + reason[1:] + ".")
    try:
        client, _, _ = await temporal_client()
        await asyncio.wait_for(client.get_workflow_handle(view.run.id).cancel(), START_SECONDS)
    except RPCError as error:
        if error.status != RPCStatusCode.NOT_FOUND:
            raise ServiceUnavailable("The workflow service cannot be reached right now; retry shortly.") from None
        # No open workflow: never started (the sweep has not started it yet) or already closed.
        await end_run(view.run.id, "cancelled", "cancelled", CANCELLED_MESSAGE)
    except (OSError, TimeoutError, RuntimeError):
        if view.run.state != "queued":
            raise ServiceUnavailable("The workflow service cannot be reached right now; retry shortly.") from None
        # Stored queued and never started: cancelled here, so the sweep never starts it.
        await end_run(view.run.id, "cancelled", "cancelled", CANCELLED_MESSAGE)
    ended = await wait_for_run(view.run.id, CANCEL_WAIT_SECONDS, until=lambda state: state in ENDED)
    return await reload_run(principal, view.run), ended.state in ENDED
