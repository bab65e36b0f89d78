"""Review-time actions and applies as Temporal Updates on the run's workflow.

An Update's id derives from the caller's API key and Idempotency-Key, so a retried request names the same
Update; no call waits unbounded: an Update not accepted in time answers 202, and Temporal out of reach 503.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from temporalio.client import (
    Client,
    WorkflowHandle,
    WorkflowUpdateFailedError,
    WorkflowUpdateHandle,
    WorkflowUpdateRPCTimeoutOrCancelledError,
    WorkflowUpdateStage,
)
from temporalio.exceptions import ApplicationError
from temporalio.service import RPCError, RPCStatusCode

from groundwork.domain.enhancement.model import (
    InvalidAction,
    RunNotReviewable,
    derive_request_id,
)
from groundwork.domain.errors import (
    GroundworkError,
    ServiceUnavailable,
    ValidationFailed,
)
from groundwork.domain.ids import new_id
from groundwork.domain.tenancy.principals import Principal
from groundwork.platform.temporal.client import current_connection

log = logging.getLogger(__name__)

# An Update not accepted by the run's workflow within this long means no worker is polling: answer 202.
ACCEPT_SECONDS = 5.0
# Connecting to, and starting a workflow on, Temporal before a create answers 202 with a queued run.
START_SECONDS = 3.0


async def temporal_client() -> tuple[Client, str, int]:
    """The Temporal client of this process, its task queue and the review window (connecting if need be)."""
    connection = current_connection()
    client = await connection.get(timeout=START_SECONDS)
    return client, connection.settings.temporal_task_queue, connection.settings.review_window_seconds


_UPDATE_ERRORS: dict[str, type[GroundworkError]] = {
    "run_not_reviewable": RunNotReviewable,
    "invalid_action": InvalidAction,
    "validation_failed": ValidationFailed,
}


def update_error(error: BaseException) -> GroundworkError:
    """Map a rejected or failed Update to the error a caller should see (422 `invalid_action`, 409, ...)."""
    cause: BaseException | None = error
    while cause is not None:
        if isinstance(cause, ApplicationError) and cause.type in _UPDATE_ERRORS:
            return _UPDATE_ERRORS[cause.type](str(cause.message)[:500])
        message = str(cause)
        for code, kind in _UPDATE_ERRORS.items():  # validators of runs started before this version
            if message.startswith(code + ":"):
                return kind(message.split(":", 1)[1].strip())
        cause = cause.__cause__ or getattr(cause, "cause", None)
    return RunNotReviewable("The run cannot take this request now.")


def _temporal_error(error: BaseException) -> GroundworkError:
    """A rejected Update, a closed workflow (409), or Temporal out of reach (503)."""
    if isinstance(error, RPCError) and error.status != RPCStatusCode.NOT_FOUND:
        return ServiceUnavailable("The workflow service cannot be reached; retry shortly.")
    return update_error(error)


async def start_update(run_id: str, update: Any, arg: Any, update_id: str) -> WorkflowUpdateHandle[Any] | None:
    """Send an Update and wait until the run's workflow accepts it; None when that takes too long."""
    client, _, _ = await temporal_client()
    handle: WorkflowHandle[Any, Any] = client.get_workflow_handle(run_id)
    sending = asyncio.ensure_future(
        handle.start_update(update, arg, id=update_id, wait_for_stage=WorkflowUpdateStage.ACCEPTED)
    )
    try:
        # Shielded: cancelling the call before the run accepts the Update would withdraw it from Temporal.
        return await asyncio.wait_for(asyncio.shield(sending), ACCEPT_SECONDS)
    except TimeoutError:
        if not await _answers(client):
            # Temporal itself is out of reach: the Update cannot arrive, so the caller must not be told 202.
            # A retry with the same Idempotency-Key names the same Update, so it is never applied twice.
            sending.cancel()
            raise ServiceUnavailable("The workflow service cannot be reached right now; retry shortly.") from None
        # Not accepted yet (the worker is busy or absent): the request answers 202, the call carries on here.
        _in_flight.add(sending)
        sending.add_done_callback(_settled_in_background)
        return None
    except WorkflowUpdateRPCTimeoutOrCancelledError:
        return None
    except (WorkflowUpdateFailedError, RPCError) as error:
        raise _temporal_error(error) from None


async def _answers(client: Client) -> bool:
    """Whether the Temporal frontend answers a health check now."""
    try:
        return bool(await asyncio.wait_for(client.service_client.check_health(), 2.0))
    except Exception:
        return False


# Updates still being delivered after their request answered 202 (kept referenced until they settle).
_in_flight: set[asyncio.Future[Any]] = set()


def _settled_in_background(sending: asyncio.Future[Any]) -> None:
    _in_flight.discard(sending)
    if not sending.cancelled() and sending.exception() is not None:
        log.warning("an Update answered 202 was not accepted: %s", sending.exception())


# A validator's refusal comes back with the start of the Update: even `wait=0` looks at it this long.
_REFUSAL_GRACE_SECONDS = 0.05


async def update_result(update: WorkflowUpdateHandle[Any] | None, seconds: float) -> tuple[bool, Any]:
    """The Update's result if it comes within `seconds`; (False, None) when the deadline passes first."""
    if update is None:
        return False, None
    try:
        return True, await asyncio.wait_for(update.result(), timeout=max(seconds, _REFUSAL_GRACE_SECONDS))
    except (TimeoutError, WorkflowUpdateRPCTimeoutOrCancelledError):
        return False, None
    except (WorkflowUpdateFailedError, RPCError) as error:
        raise _temporal_error(error) from None


def update_id_for(prefix: str, principal: Principal, idempotency_key: str | None, *parts: str) -> str:
    """An Update's id: derived from the caller's key and Idempotency-Key (a retry names the same Update), else new."""
    if idempotency_key:
        return derive_request_id(prefix, principal.api_key_id, idempotency_key, *parts)
    return new_id(prefix)
