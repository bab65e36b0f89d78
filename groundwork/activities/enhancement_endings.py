"""The activity that records a cancelled run (`services/enhancement/run_endings.py` holds the rule)."""

from __future__ import annotations

from temporalio import activity

from groundwork.services.enhancement.run_endings import CANCELLED_MESSAGE, end_run


@activity.defn(name="enhancement_cancel_run")
async def cancel_run(run_id: str) -> str:
    """Record a cancelled run: its pending actions fail as `cancelled`, one `failed` event (`error_code: cancelled`)."""
    state, _ = await end_run(run_id, "cancelled", "cancelled", CANCELLED_MESSAGE)
    return state
