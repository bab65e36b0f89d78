"""The work item enhancement application service, shared by REST, GraphQL and MCP.

Creating a run commits the run row and its `queued` event first, then starts the run's workflow
(id = run id); if that start fails (Temporal unreachable), the row stays `queued`, the caller gets
202, and the worker's sweep starts it later. Review-time actions and applies are Temporal Updates on
the run's workflow, so they are serialised with the run and validated by it; their ids derive from
the caller's API key and Idempotency-Key, so a retried request names the same Update. No call waits
unbounded: each answers 202 with the operation once its deadline passes.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from temporalio.client import (
    Client,
    WorkflowExecutionStatus,
)
from temporalio.common import WorkflowIDConflictPolicy, WorkflowIDReusePolicy
from temporalio.exceptions import WorkflowAlreadyStartedError
from temporalio.service import RPCError

from groundwork.domain.choices import check_choice
from groundwork.domain.enhancement.model import (
    ACTION_FIELDS,
    ACTIONS,
    CANCELLABLE_STATES,
    RUN_STATES,
    SCOPE_CODE_CONTEXT,
    check_confirm,
    check_new_action,
    derive_request_id,
    validate_actions,
    validate_instructions,
)
from groundwork.domain.errors import (
    FieldError,
    NotFound,
    ValidationFailed,
)
from groundwork.domain.ids import new_id
from groundwork.domain.pagination import page_info, page_request
from groundwork.domain.tenancy.connected_apps import check_field_authority
from groundwork.domain.tenancy.principals import Principal
from groundwork.domain.times import timestamp
from groundwork.domain.work_items import format_version
from groundwork.persistence import db
from groundwork.persistence.repositories import work_items as work_item_repo
from groundwork.persistence.repositories.enhancement import runs
from groundwork.persistence.repositories.tenancy import workspaces as tenancy
from groundwork.platform.observability.logs import note_workflow
from groundwork.platform.temporal.client import current_connection
from groundwork.services.enhancement import run_waits
from groundwork.services.enhancement.run_updates import (
    START_SECONDS,
    start_update,
    temporal_client,
    update_id_for,
    update_result,
)
from groundwork.services.enhancement.run_views import (
    RunView,
    caller_rights,
    check_reviewable,
    load_run,
    reload_run,
    views_of,
)
from groundwork.services.tenancy import project_access
from groundwork.workflows.enhancement import EnhancementRunWorkflow
from groundwork.workflows.enhancement_contract import EnhancementRunInput, RunActionUpdate, search_attributes

log = logging.getLogger(__name__)
MAX_WAIT_SECONDS = 30
DEFAULT_WAIT_SECONDS = 10
_POLL_SECONDS = 0.05
# With a listener, a lost notification costs at most this long.
_LISTENING_POLL_SECONDS = 1.0


@dataclass
class CreateRun:
    target_type: Any
    target_id: Any
    actions: Any
    instructions: Any
    confirm: Any


def check_wait(wait: Any) -> float:
    """`wait` seconds: default 10, 0 answers at once, at most 30 (the same rule for every transport)."""
    if wait is None:
        return DEFAULT_WAIT_SECONDS
    if isinstance(wait, bool) or not isinstance(wait, int) or not 0 <= wait <= MAX_WAIT_SECONDS:
        raise ValidationFailed(
            "Invalid wait.", [FieldError("wait", f"must be a whole number of seconds from 0 to {MAX_WAIT_SECONDS}")]
        )
    return float(wait)


async def start_run_workflow(client: Client, task_queue: str, run: runs.RunRow, review_window_seconds: int) -> bool:
    """Start the run's workflow once; False when its id belongs to a workflow that has already closed."""
    note_workflow(run.id)  # the request's log lines name the workflow from here on
    try:
        await client.start_workflow(
            EnhancementRunWorkflow.run,
            EnhancementRunInput(run.id, run.workspace_id, run.target_id, review_window_seconds),
            id=run.id,
            task_queue=task_queue,
            id_conflict_policy=WorkflowIDConflictPolicy.USE_EXISTING,
            id_reuse_policy=WorkflowIDReusePolicy.REJECT_DUPLICATE,
            search_attributes=search_attributes(run.workspace_id, run.target_id, "queued"),
        )
    except WorkflowAlreadyStartedError:
        return False  # USE_EXISTING answers a running one; only a closed one is refused
    return True


def _finished(state: str) -> bool:
    return state not in ("queued", "running")


async def wait_for_run(run_id: str, seconds: float, until: Callable[[str], bool] = _finished) -> runs.RunRow:
    """The run once its state satisfies `until` (by default: it left queued/running), or as it stands after
    `seconds`; woken by the run-state NOTIFY where this process listens, else by polling."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + seconds
    waits = run_waits.current(current_connection().settings.database_url)
    if waits is None:
        while True:
            run = await runs.get_run_by_id(run_id)
            assert run is not None
            if until(run.state) or loop.time() >= deadline:
                return run
            await asyncio.sleep(_POLL_SECONDS)
    with waits.watching(run_id) as changed:
        while True:
            changed.clear()
            run = await runs.get_run_by_id(run_id)
            assert run is not None
            remaining = deadline - loop.time()
            if until(run.state) or remaining <= 0:
                return run
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(changed.wait(), min(remaining, _LISTENING_POLL_SECONDS))


async def create_run(
    principal: Principal, request: CreateRun, wait: Any, *, idempotency_key: str | None = None
) -> RunView:
    """Validate, commit the queued run with its event, start its workflow, and wait up to `wait` s.
    Under an `idempotency_key`, a retry of the same request answers the run its first attempt committed."""
    seconds = check_wait(wait)
    if request.target_type != "work_item":
        raise ValidationFailed("Invalid target.", [FieldError("target.type", 'must be "work_item"')])
    if not isinstance(request.target_id, str) or not request.target_id:
        raise ValidationFailed("Invalid target.", [FieldError("target.id", "must be a work item id")])
    actions = validate_actions(request.actions)
    instructions = validate_instructions(request.instructions)
    check_confirm(request.confirm)
    check_field_authority(principal, [ACTION_FIELDS[a] for a in actions])
    item = await work_item_repo.get_work_item(principal.workspace_id, request.target_id)
    permissions = await project_access.project_permissions(principal, item.project_id) if item else None
    if item is None or not permissions or "project:read" not in permissions:
        raise NotFound("No such work item.")
    # The same request retried (its first attempt's process died after the commit) finds its run.
    request_key = (
        derive_request_id("req", principal.api_key_id, idempotency_key, item.id, *actions, instructions)
        if idempotency_key
        else None
    )
    earlier = await runs.run_for_request(principal.workspace_id, request_key) if request_key else None
    if earlier is not None:
        run = earlier
    else:
        run = await _insert_queued_run(principal, item, actions, instructions, request_key)
    rights = {item.project_id: caller_rights(principal, "work_items:write" in permissions)}
    try:
        client, task_queue, window = await temporal_client()
        await asyncio.wait_for(start_run_workflow(client, task_queue, run, window), START_SECONDS)
    except (RPCError, OSError, TimeoutError, RuntimeError) as exc:
        # Stored and queued: the worker's sweep starts it with the same id once Temporal answers.
        log.warning("could not start the workflow of %s, the sweep will: %s", run.id, exc)
        return (await views_of([run], rights))[0]
    return (await views_of([await wait_for_run(run.id, seconds)], rights))[0]


async def _insert_queued_run(
    principal: Principal, item: Any, actions: list[str], instructions: str, request_key: str | None
) -> runs.RunRow:
    run_id = new_id("wie")
    async with db.transaction():
        await runs.insert_run(
            run_id=run_id,
            workspace_id=principal.workspace_id,
            project_id=item.project_id,
            target_id=item.id,
            actions=actions,
            instructions=instructions,
            requested_by=principal.id,
            code_context=principal.has_scope(SCOPE_CODE_CONTEXT),
            generator=_generator_name(),
            request_key=request_key,
        )
        run = await runs.get_run_by_id(run_id)
        assert run is not None
        now = datetime.now(UTC)
        payload = {
            "target_type": "work_item",
            "target_id": item.id,
            "requested_actions": actions,
            "queued_at": format_version(now),
        }
        await runs.append_run_event(run, "queued", payload, now, actor_id=principal.id)
    return run


def _generator_name() -> str:
    settings = current_connection().settings
    return f"chat-completions:{settings.llm_model}" if settings.llm_base_url else "extractive-v5"


async def list_runs(
    principal: Principal,
    *,
    state: str | None = None,
    target_id: str | None = None,
    action: str | None = None,
    limit: int | None = None,
    cursor: str | None = None,
) -> tuple[list[RunView], dict[str, Any]]:
    """Runs of the caller's visible projects, newest first (a constant number of queries per page)."""
    check_choice(state, RUN_STATES, "state")
    check_choice(action, ACTIONS, "action")
    page = page_request(limit, cursor)
    project_ids = await tenancy.visible_project_ids(principal)
    writable = set(await tenancy.visible_project_ids(principal, "work_items:write"))
    after = page.after_text()
    rows = await runs.list_runs(
        principal.workspace_id,
        project_ids,
        state=state,
        target_id=target_id,
        action=action,
        after_id=after,
        limit=page.limit + 1,
    )
    rows, info = page_info(rows, page.limit, lambda r: {"id": r.id})
    rights = {p: caller_rights(principal, p in writable) for p in project_ids}
    return await views_of(rows, rights), info


async def run_action(
    principal: Principal,
    run_id: str,
    action: Any,
    instructions: Any,
    confirm: Any,
    wait: Any,
    idempotency_key: str | None = None,
) -> tuple[RunView, bool]:
    """Perform one more action on a reviewable run; returns the run and whether it finished in time."""
    seconds = check_wait(wait)
    validate_actions([action], path="action")
    text = validate_instructions(instructions)
    check_confirm(confirm)
    check_field_authority(principal, [ACTION_FIELDS[action]])
    view = await load_run(principal, run_id)
    # The create rules hold over the run's whole life: no repeat of a pending action, and a cap per run. They
    # come first, as in the run's Update validator: a repeat sent while its twin keeps the run `running` is
    # refused as the repeat (422), not as a run that is busy (409).
    check_new_action(action, [a.action for a in view.actions if a.state == "pending"], len(view.actions))
    check_reviewable(view.run)
    request_id = update_id_for("op", principal, idempotency_key, run_id, action, text)
    update = await start_update(
        run_id, EnhancementRunWorkflow.run_action, RunActionUpdate(request_id, action, text), request_id
    )
    finished, _ = await update_result(update, seconds)
    return await reload_run(principal, view.run), finished


_STATUS = {
    WorkflowExecutionStatus.COMPLETED: "succeeded",
    WorkflowExecutionStatus.CONTINUED_AS_NEW: "running",
    WorkflowExecutionStatus.FAILED: "failed",
    WorkflowExecutionStatus.TERMINATED: "failed",
    WorkflowExecutionStatus.TIMED_OUT: "failed",
    WorkflowExecutionStatus.CANCELED: "cancelled",
}


async def operation_status(principal: Principal, run_id: str) -> dict[str, Any]:
    """The run's operation, read live from Temporal (falling back to PostgreSQL once Temporal forgot it)."""
    view = await load_run(principal, run_id)
    run = view.run
    pending = [a.action for a in view.actions if a.state == "pending"]
    temporal: dict[str, Any] = {"workflowId": run.id, "runId": None}
    status = _status_from_state(run.state)
    try:
        client, _, _ = await temporal_client()
        description = await client.get_workflow_handle(run.id).describe()
        temporal["runId"] = description.run_id
        # The row is the truth of the run; a workflow that ended abnormally (terminated, timed out,
        # cancelled) while the row still says queued or running is what the operation reports.
        closed = _STATUS.get(description.status) if description.status is not None else None
        if run.state in CANCELLABLE_STATES and closed in ("failed", "cancelled"):
            # Ended without finishing the run (the sweep marks the run within a minute): say so already.
            status = closed
    except (RPCError, OSError, TimeoutError, RuntimeError):
        pass  # no workflow (yet, or no longer), or Temporal out of reach: the row tells
    error = {"code": run.error_code, "message": run.error_message} if run.error_code else None
    return {
        "id": run.id,
        "kind": "work_item_enhancement",
        "status": status,
        "runState": run.state,
        "startedAt": timestamp(run.created_at),
        "updatedAt": timestamp(run.updated_at),
        "completedAt": timestamp(run.completed_at),
        "pendingActions": pending,
        "error": error,
        "temporal": temporal,
    }


def _status_from_state(state: str) -> str:
    return {"queued": "queued", "running": "running", "failed": "failed", "cancelled": "cancelled"}.get(
        state, "succeeded"
    )


async def sweep_queued_runs(
    client: Client, task_queue: str, review_window_seconds: int, older_than_seconds: float = 30.0
) -> int:
    """Start the workflow of every run still queued after a while (its start may have failed)."""
    started = 0
    for run_id in await runs.queued_runs_older_than(older_than_seconds):
        run = await runs.get_run_by_id(run_id)
        if run is None:
            continue
        if await start_run_workflow(client, task_queue, run, review_window_seconds):
            started += 1
        else:
            await _fail_lost_run(run)
    return started


async def _fail_lost_run(run: runs.RunRow) -> None:
    """A queued run whose workflow closed before it ran (e.g. terminated by an operator) can never proceed."""
    async with db.transaction():
        if await runs.set_run_state(
            run.id,
            "failed",
            from_states=("queued",),
            error_code="workflow_closed",
            error_message="The run's workflow closed before it started.",
            completed=True,
        ):
            now = datetime.now(UTC)
            await runs.append_run_event(
                run,
                "failed",
                {"action": None, "error_code": "workflow_closed", "failed_at": format_version(now)},
                now,
                actor_id=run.requested_by,
            )
