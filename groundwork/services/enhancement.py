"""The work item enhancement application service, shared by REST, GraphQL and MCP.

Creating a run commits the run row and its `queued` event first, then starts the run's workflow
(id = run id); if that start fails, the row stays `queued` and the worker's sweep starts it later.
Review-time actions and applies are Temporal Updates on the run's workflow, so they are serialised
with the run and validated by it.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from temporalio.client import (
    Client,
    WorkflowExecutionStatus,
    WorkflowHandle,
    WorkflowUpdateFailedError,
    WorkflowUpdateStage,
)
from temporalio.common import WorkflowIDConflictPolicy, WorkflowIDReusePolicy
from temporalio.exceptions import ApplicationError, WorkflowAlreadyStartedError
from temporalio.service import RPCError, RPCStatusCode

from groundwork.domain.connected_apps import check_field_authority
from groundwork.domain.enhancement.model import (
    ACTION_FIELDS,
    SCOPE_CODE_CONTEXT,
    ConfirmationRequired,
    DraftNotEligible,
    FieldDiff,
    RunNotReviewable,
    TargetVersionMismatch,
    apply_eligible,
    check_confirm,
    draft_ineligibility,
    not_reviewable_reason,
    review_expired,
    validate_actions,
    validate_draft_ids,
    validate_instructions,
)
from groundwork.domain.errors import (
    FieldError,
    GroundworkError,
    NotFound,
    PermissionDenied,
    ServiceUnavailable,
    ValidationFailed,
)
from groundwork.domain.ids import new_id
from groundwork.domain.pagination import page_info, page_request
from groundwork.domain.principals import Principal
from groundwork.domain.times import timestamp
from groundwork.domain.work_items import format_version, parse_version
from groundwork.persistence import db
from groundwork.persistence.repositories import enhancement as runs
from groundwork.persistence.repositories import tenancy
from groundwork.persistence.repositories import work_items as work_item_repo
from groundwork.services.temporal import current_connection
from groundwork.workflows.enhancement import (
    ApplyOutcome,
    ApplyUpdate,
    EnhancementRunInput,
    EnhancementRunWorkflow,
    RunActionUpdate,
    search_attributes,
)

MAX_WAIT_SECONDS = 30
DEFAULT_WAIT_SECONDS = 10
_POLL_SECONDS = 0.05


@dataclass
class RunView:
    """A run with everything its resource shows."""

    run: runs.RunRow
    actions: list[runs.RunActionRow]
    drafts: list[runs.DraftRow]
    artifacts: list[runs.ArtifactRow]
    eligible: dict[str, bool] = field(default_factory=dict)

    @property
    def expired(self) -> bool:
        return review_expired(self.run.state, self.run.review_expires_at, datetime.now(UTC))

    @property
    def finished(self) -> bool:
        """Whether the run has left queued/running (the API's `wait` ends there)."""
        return self.run.state not in ("queued", "running")


@dataclass
class CreateRun:
    target_type: Any
    target_id: Any
    actions: Any
    instructions: Any
    confirm: Any


def check_wait(wait: int | None) -> float:
    """`?wait=` seconds: default 10, 0 answers at once, at most 30."""
    if wait is None:
        return DEFAULT_WAIT_SECONDS
    if not 0 <= wait <= MAX_WAIT_SECONDS:
        raise ValidationFailed("Invalid wait.", [FieldError("wait", f"must be between 0 and {MAX_WAIT_SECONDS}")])
    return float(wait)


async def _client() -> tuple[Client, str, int]:
    connection = current_connection()
    client = await connection.get()
    return client, connection.settings.temporal_task_queue, connection.settings.review_window_seconds


async def start_run_workflow(client: Client, task_queue: str, run: runs.RunRow, review_window_seconds: int) -> bool:
    """Start the run's workflow once; False when its id belongs to a workflow that has already closed."""
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


async def _visible_run(principal: Principal, run_id: str) -> runs.RunRow:
    run = await runs.get_run(principal.workspace_id, run_id)
    if run is None:
        raise NotFound("No such enhancement run.")
    permissions = await tenancy.project_permissions(principal, run.project_id)
    if not permissions or "project:read" not in permissions:
        raise NotFound("No such enhancement run.")
    return run


async def load_run(principal: Principal, run_id: str) -> RunView:
    """A run the caller can see, with its actions, drafts and artifacts."""
    return await _view(await _visible_run(principal, run_id))


async def _view(run: runs.RunRow) -> RunView:
    view = RunView(
        run, await runs.list_run_actions(run.id), await runs.list_drafts(run.id), await runs.list_artifacts(run.id)
    )
    states = [d.state() for d in view.drafts]
    view.eligible = {d.id: apply_eligible(d.state(), states, run.state, view.expired) for d in view.drafts}
    return view


async def _wait_for_finish(run_id: str, seconds: float) -> runs.RunRow:
    deadline = asyncio.get_running_loop().time() + seconds
    while True:
        run = await runs.get_run_by_id(run_id)
        assert run is not None
        if run.state not in ("queued", "running") or asyncio.get_running_loop().time() >= deadline:
            return run
        await asyncio.sleep(_POLL_SECONDS)


async def create_run(principal: Principal, request: CreateRun, wait: int | None) -> RunView:
    """Validate, commit the queued run with its event, start its workflow, and wait up to `wait` s."""
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
    permissions = await tenancy.project_permissions(principal, item.project_id) if item else None
    if item is None or not permissions or "project:read" not in permissions:
        raise NotFound("No such work item.")
    client, task_queue, window = await _client()
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
    try:
        await start_run_workflow(client, task_queue, run, window)
    except RPCError:
        return await _view(run)  # still queued: the worker's sweep starts it
    return await _view(await _wait_for_finish(run_id, seconds))


def _generator_name() -> str:
    settings = current_connection().settings
    return f"chat-completions:{settings.llm_model}" if settings.llm_base_url else "extractive-v1"


async def list_runs(
    principal: Principal,
    *,
    state: str | None = None,
    target_id: str | None = None,
    action: str | None = None,
    limit: int | None = None,
    cursor: str | None = None,
) -> tuple[list[RunView], dict[str, Any]]:
    """Runs of the caller's visible projects, newest first."""
    page = page_request(limit, cursor)
    project_ids = await tenancy.visible_project_ids(principal)
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
    return [await _view(r) for r in rows], info


def _update_error(error: BaseException) -> GroundworkError:
    """Map a rejected or failed Update to the error a caller should see."""
    cause: BaseException | None = error
    while cause is not None:
        message = str(cause)
        if isinstance(cause, ApplicationError) and cause.type == "run_not_reviewable":
            return RunNotReviewable(message)
        for code, kind in (
            ("run_not_reviewable", RunNotReviewable),
            ("invalid_action", None),
            ("validation_failed", None),
        ):
            if message.startswith(code + ":"):
                detail = message.split(":", 1)[1].strip()
                if kind is not None:
                    return kind(detail)
                return ValidationFailed(detail) if code == "validation_failed" else GroundworkError(detail)
        cause = cause.__cause__ or getattr(cause, "cause", None)
    return RunNotReviewable("The run cannot take this request now.")


async def _handle(client: Client, run_id: str) -> WorkflowHandle[Any, Any]:
    return client.get_workflow_handle(run_id)


async def run_action(
    principal: Principal, run_id: str, action: Any, instructions: Any, confirm: Any, wait: int | None
) -> tuple[RunView, bool]:
    """Perform one more action on a reviewable run; returns the run and whether it finished in time."""
    seconds = check_wait(wait)
    if not isinstance(action, str) or action not in ACTION_FIELDS:
        validate_actions([action], path="action")
    text = validate_instructions(instructions)
    check_confirm(confirm)
    check_field_authority(principal, [ACTION_FIELDS[action]])
    _check_reviewable(await _visible_run(principal, run_id))
    client, _, _ = await _client()
    handle = await _handle(client, run_id)
    try:
        update = await handle.start_update(
            EnhancementRunWorkflow.run_action,
            RunActionUpdate(new_id("op"), action, text),
            wait_for_stage=WorkflowUpdateStage.ACCEPTED,
        )
    except (WorkflowUpdateFailedError, RPCError) as error:
        raise _temporal_error(error) from None
    finished = False
    if seconds > 0:
        try:
            await asyncio.wait_for(update.result(), timeout=seconds)
            finished = True  # the Update's own completion decides, not a state read that may race it
        except TimeoutError:
            pass
        except WorkflowUpdateFailedError as error:
            raise _update_error(error) from None
    return await _view(await _visible_run(principal, run_id)), finished


def _temporal_error(error: BaseException) -> GroundworkError:
    """A rejected Update, a closed workflow (409), or Temporal out of reach (503)."""
    if isinstance(error, RPCError) and error.status != RPCStatusCode.NOT_FOUND:
        return ServiceUnavailable("The workflow service cannot be reached; retry shortly.")
    return _update_error(error)


async def _apply_permission(principal: Principal, run: runs.RunRow) -> None:
    permissions = await tenancy.project_permissions(principal, run.project_id) or set()
    if "work_items:write" not in permissions:
        raise PermissionDenied("Your role on this project does not allow changing its work items.", "work_items:write")


async def prepare_apply(principal: Principal, run_id: str, draft_ids: Any) -> tuple[list[FieldDiff], str]:
    """The field-level diff an apply of `draft_ids` would make, and the version to confirm against."""
    ids = validate_draft_ids(draft_ids)
    view = await load_run(principal, run_id)
    _check_reviewable(view.run)
    states = {d.id: d.state() for d in view.drafts}
    reasons = draft_ineligibility(ids, states, view.run.state, view.expired)
    if reasons:
        raise DraftNotEligible(list(reasons), reasons)
    item = await work_item_repo.get_work_item(principal.workspace_id, view.run.target_id)
    assert item is not None
    by_id = {d.id: d for d in view.drafts}
    diff = [FieldDiff(by_id[i].field, item.fields.get(by_id[i].field), by_id[i].proposed_value, i) for i in ids]
    return diff, format_version(item.version)


def _check_reviewable(run: runs.RunRow) -> None:
    expired = review_expired(run.state, run.review_expires_at, datetime.now(UTC))
    if reason := not_reviewable_reason(run.state, expired):
        raise RunNotReviewable(reason[0].upper() + reason[1:] + ".")


def diff_resource(diff: list[FieldDiff], version: str) -> dict[str, Any]:
    """The confirmation body: what would change, and the version to send back."""
    return {
        "diff": [
            {
                "field": d.field,
                "current_value": d.current_value,
                "proposed_value": d.proposed_value,
                "draft_id": d.draft_id,
            }
            for d in diff
        ],
        "current_version": version,
    }


async def apply_drafts(
    principal: Principal, run_id: str, draft_ids: Any, expected_target_version: Any, confirm: Any
) -> RunView:
    """Apply selected drafts after confirmation, guarded by the target version."""
    ids = validate_draft_ids(draft_ids)
    view = await load_run(principal, run_id)
    await _apply_permission(principal, view.run)
    _check_reviewable(view.run)
    if confirm is not True:
        diff, version = await prepare_apply(principal, run_id, ids)
        raise ConfirmationRequired(
            "Review the changes below, then send the same request with `confirm: true` and "
            "`expected_target_version` set to `current_version`.",
            extra=diff_resource(diff, version),
        )
    if not isinstance(expected_target_version, str):
        raise ValidationFailed("Invalid version.", [FieldError("expected_target_version", "is required")])
    try:
        parse_version(expected_target_version)
    except ValueError as exc:
        raise ValidationFailed("Invalid version.", [FieldError("expected_target_version", str(exc))]) from None
    client, _, _ = await _client()
    handle = await _handle(client, run_id)
    apply_id = new_id("apply")
    try:
        outcome: ApplyOutcome = await handle.execute_update(
            EnhancementRunWorkflow.apply,
            ApplyUpdate(apply_id, ids, expected_target_version, principal.id),
            id=apply_id,
        )
    except (WorkflowUpdateFailedError, RPCError) as error:
        raise _temporal_error(error) from None
    if not outcome.ok:
        if outcome.code == "target_version_mismatch":
            raise TargetVersionMismatch(outcome.current_version or "")
        if outcome.code == "draft_not_eligible":
            raise DraftNotEligible(list(outcome.ineligible), outcome.ineligible)
        raise NotFound("The target work item no longer exists.")
    return await load_run(principal, run_id)


async def list_drafts(
    principal: Principal,
    run_id: str,
    *,
    field: str | None = None,
    apply_eligible: bool | None = None,
    action: str | None = None,
    limit: int | None = None,
    cursor: str | None = None,
) -> tuple[RunView, list[runs.DraftRow], dict[str, Any]]:
    """Drafts of a visible run, newest first, filtered by field, eligibility and action."""
    page = page_request(limit, cursor)
    view = await load_run(principal, run_id)
    after = page.after_text()
    drafts = [
        d
        for d in view.drafts
        if (field is None or d.field == field)
        and (action is None or d.action == action)
        and (apply_eligible is None or view.eligible[d.id] == apply_eligible)
        and (after is None or d.id < after)
    ]
    drafts, info = page_info(drafts[: page.limit + 1], page.limit, lambda d: {"id": d.id})
    return view, drafts, info


async def list_artifacts(
    principal: Principal,
    run_id: str,
    *,
    type: str | None = None,
    limit: int | None = None,
    cursor: str | None = None,
) -> tuple[list[runs.ArtifactRow], dict[str, Any]]:
    """Artifacts of a visible run, newest first."""
    page = page_request(limit, cursor)
    await _visible_run(principal, run_id)
    after = page.after_text()
    rows = await runs.list_artifacts(run_id, type=type, after_id=after, limit=page.limit + 1)
    return page_info(rows, page.limit, lambda a: {"id": a.id})


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
        client, _, _ = await _client()
        description = await client.get_workflow_handle(run.id).describe()
        temporal["runId"] = description.run_id
        if description.status == WorkflowExecutionStatus.RUNNING:
            status = "running" if run.state in ("queued", "running") else "succeeded"
            if run.state == "queued":
                status = "queued"
        elif description.status is not None:
            status = _STATUS.get(description.status, status)
            if run.state == "failed":
                status = "failed"
    except RPCError:
        pass  # no workflow (yet, or no longer): the row tells
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
    return {"queued": "queued", "running": "running", "failed": "failed"}.get(state, "succeeded")


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
