"""How a run ends outside its own actions: cancelled by a caller, or failed because its workflow ended without it.

Both are one transaction that moves an open run to its final state, fails its pending actions with the same code
and appends the one `failed` event; a run already final is left as it is, so a retry, a second sweep or a second
worker changes nothing and sends nothing.
"""

from __future__ import annotations

from datetime import UTC, datetime

from groundwork.domain.enhancement.model import CANCELLABLE_STATES
from groundwork.domain.times import format_timestamp
from groundwork.persistence import db
from groundwork.persistence.repositories.enhancement import run_actions, runs

CANCELLED_MESSAGE = "A caller cancelled the run; its pending actions stopped and nothing can be applied."


async def end_run(run_id: str, state: str, error_code: str, message: str) -> tuple[str, bool]:
    """Move an open run to `state` ("cancelled" or "failed") with `error_code` and its one `failed` event;
    returns the run's state afterwards and whether this call ended it (False when it was final already)."""
    async with db.transaction():
        run = await runs.get_run_by_id(run_id, for_update=True)
        if run is None:
            return "gone", False
        if run.state not in CANCELLABLE_STATES:
            return run.state, False
        for pending in await run_actions.pending_actions(run_id):
            await run_actions.fail_run_action(pending.id, error_code)
        await runs.set_run_state(
            run_id,
            state,
            from_states=CANCELLABLE_STATES,
            error_code=error_code,
            error_message=message,
            completed=True,
        )
        now = datetime.now(UTC)
        await runs.append_run_event(
            run,
            "failed",
            {"action": None, "error_code": error_code, "failed_at": format_timestamp(now)},
            now,
            actor_id=run.requested_by,
        )
        return state, True
