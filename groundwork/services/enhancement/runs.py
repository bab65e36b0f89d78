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
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from temporalio.client import (
    Client,
    WorkflowExecutionStatus,
    WorkflowHandle,
    WorkflowUpdateFailedError,
    WorkflowUpdateHandle,
    WorkflowUpdateRPCTimeoutOrCancelledError,
    WorkflowUpdateStage,
)
from temporalio.common import WorkflowIDConflictPolicy, WorkflowIDReusePolicy
from temporalio.exceptions import ApplicationError, WorkflowAlreadyStartedError
from temporalio.service import RPCError, RPCStatusCode

from groundwork.domain.choices import check_choice
from groundwork.domain.enhancement.model import (
    ACTION_FIELDS,
    ACTIONS,
    ARTIFACT_TYPES,
    DRAFT_FIELDS,
    RUN_STATES,
    SCOPE_APPLY,
    SCOPE_CODE_CONTEXT,
    SCOPE_READ,
    SCOPE_RUN,
    AllowedAction,
    CallerRights,
    ConfirmationRequired,
    DraftNotEligible,
    FieldDiff,
    InvalidAction,
    RunNotReviewable,
    TargetVersionMismatch,
    allowed_actions,
    apply_ineligible_reason,
    check_confirm,
    check_new_action,
    derive_request_id,
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
from groundwork.domain.tenancy.connected_apps import check_field_authority
from groundwork.domain.tenancy.principals import Principal
from groundwork.domain.times import timestamp
from groundwork.domain.work_items import format_version, parse_version
from groundwork.persistence import db
from groundwork.persistence.repositories import work_items as work_item_repo
from groundwork.persistence.repositories.enhancement import outputs, run_actions, run_contents, runs
from groundwork.persistence.repositories.tenancy import workspaces as tenancy
from groundwork.platform.caches.recently_used import RecentlyUsed
from groundwork.platform.observability.logs import note_workflow
from groundwork.platform.temporal.client import current_connection
from groundwork.services.enhancement import heard_runs, run_waits
from groundwork.services.tenancy import project_access
from groundwork.workflows.enhancement import (
    ApplyOutcome,
    ApplyUpdate,
    EnhancementRunInput,
    EnhancementRunWorkflow,
    RunActionUpdate,
    search_attributes,
)

log = logging.getLogger(__name__)
MAX_WAIT_SECONDS = 30
DEFAULT_WAIT_SECONDS = 10
# An Update not accepted by the run's workflow within this long means no worker is polling: answer 202.
ACCEPT_SECONDS = 5.0
# How long an apply waits for its outcome before answering 202 with the operation.
APPLY_WAIT_SECONDS = 10.0
# Connecting to, and starting a workflow on, Temporal before a create answers 202 with a queued run.
START_SECONDS = 3.0
_POLL_SECONDS = 0.05
# With a listener, a lost notification costs at most this long.
_LISTENING_POLL_SECONDS = 1.0


@dataclass
class RunView:
    """A run with everything its resource shows, as one caller sees it."""

    run: runs.RunRow
    actions: list[run_actions.RunActionRow]
    drafts: list[outputs.DraftRow]
    artifacts: list[outputs.ArtifactRow]
    rights: CallerRights = field(default_factory=CallerRights.everything)
    eligible: dict[str, bool] = field(default_factory=dict)
    # Why each draft is not applyEligible (None when it is).
    ineligible_reasons: dict[str, str | None] = field(default_factory=dict)
    # A transport's encoding of this view, kept with it: a view is never changed once built, and `load_run`
    # hands out the same view while the run, the caller's rights and the review window are unchanged.
    renderings: dict[str, Any] = field(default_factory=dict, compare=False, repr=False)

    @property
    def expired(self) -> bool:
        return review_expired(self.run.state, self.run.review_expires_at, datetime.now(UTC))

    @property
    def finished(self) -> bool:
        """Whether the run has left queued/running (the API's `wait` ends there)."""
        return self.run.state not in ("queued", "running")

    def allowed_actions(self) -> list[AllowedAction]:
        """What this caller may do next, given the state and its scopes and role."""
        state = "expired" if self.expired else self.run.state
        return allowed_actions(state, any(self.eligible.values()), self.rights, len(self.actions))


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


async def _client() -> tuple[Client, str, int]:
    connection = current_connection()
    client = await connection.get(timeout=START_SECONDS)
    return client, connection.settings.temporal_task_queue, connection.settings.review_window_seconds


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


async def _visible_run(principal: Principal, run_id: str, *, heard: bool = False) -> tuple[runs.RunRow, frozenset[str]]:
    row_of = heard_runs.heard_run_row if heard else heard_runs.fresh_run_row
    run = await row_of(principal.workspace_id, run_id)
    if run is None:
        raise NotFound("No such enhancement run.")
    permissions = await project_access.project_permissions(principal, run.project_id)
    if not permissions or "project:read" not in permissions:
        raise NotFound("No such enhancement run.")
    return run, permissions


# The eight possible rights, made once: every read of a run needs one (it keys the reused view).
_RIGHTS = {(r, u, a): CallerRights(r, u, a) for r in (False, True) for u in (False, True) for a in (False, True)}


def _rights(principal: Principal, can_write: bool) -> CallerRights:
    return _RIGHTS[
        principal.has_scope(SCOPE_READ),
        principal.has_scope(SCOPE_RUN),
        principal.has_scope(SCOPE_APPLY) and can_write,
    ]


def _view(
    run: runs.RunRow,
    actions: list[run_actions.RunActionRow],
    drafts: list[outputs.DraftRow],
    artifacts: list[outputs.ArtifactRow],
    rights: CallerRights,
) -> RunView:
    view = RunView(run, actions, drafts, artifacts, rights)
    states = [d.state() for d in drafts]
    expired = view.expired
    for draft, state in zip(drafts, states, strict=True):
        reason = apply_ineligible_reason(state, states, run.state, expired)
        view.ineligible_reasons[draft.id] = reason
        view.eligible[draft.id] = reason is None
    return view


async def _views(runs_: list[runs.RunRow], rights: dict[str, CallerRights]) -> list[RunView]:
    """Views of many runs in a constant number of queries."""
    actions, drafts, artifacts = await run_contents.run_contents([r.id for r in runs_])
    return [_view(r, actions[r.id], drafts[r.id], artifacts[r.id], rights[r.project_id]) for r in runs_]


Contents = tuple[list[run_actions.RunActionRow], list[outputs.DraftRow], list[outputs.ArtifactRow]]
# A run's actions, drafts and artifacts by run id, with the `updated_at` they were read at. Every change of
# them bumps the run's `updated_at` in its transaction, so a reader that sees the same `updated_at` on the
# run row (read on every request) may reuse them; a process keeps the most recent few hundred runs.
_contents: RecentlyUsed[str, tuple[datetime, Contents]] = RecentlyUsed(256)


async def _contents_of(run: runs.RunRow) -> Contents:
    cached = _contents.get(run.id)
    if cached is not None and cached[0] == run.updated_at:
        return cached[1]
    found = await run_contents.get_run_with_contents(run.workspace_id, run.id)
    if found is None:
        raise NotFound("No such enhancement run.")
    fresh, actions, drafts, artifacts = found
    if fresh.updated_at == run.updated_at:  # unchanged in between: safe to keep
        _contents.put(run.id, (run.updated_at, (actions, drafts, artifacts)))
    return actions, drafts, artifacts


# The views last built, by run id and caller rights, with whether the review window had ended when built.
# The run row (read on every request, its `updated_at` bumped by every change of the run's contents and
# carrying its target's live version) must equal the one the view was built from for it to be reused.
_views_built: RecentlyUsed[tuple[str, CallerRights], tuple[bool, RunView]] = RecentlyUsed(256)


async def read_run(principal: Principal, run_id: str) -> RunView:
    """A run the caller can see, for a read: its row and view reused while no change to them was heard
    (no round trip when unchanged; a change from any process shows once PostgreSQL delivers its notification)."""
    return await load_run(principal, run_id, heard=True)


async def load_run(principal: Principal, run_id: str, *, heard: bool = False) -> RunView:
    """A run the caller can see, with its actions, drafts and artifacts (one round trip when unchanged).

    From its row as PostgreSQL has it now, unless `heard` (`read_run`): then as last read, if no change was
    heard since."""
    run, permissions = await _visible_run(principal, run_id, heard=heard)
    rights = _rights(principal, "work_items:write" in permissions)
    expired = review_expired(run.state, run.review_expires_at, datetime.now(UTC))
    key = (run.id, rights)
    cached = _views_built.get(key)
    if cached is not None and cached[0] == expired and (cached[1].run is run or cached[1].run == run):
        return cached[1]
    actions, drafts, artifacts = await _contents_of(run)
    view = _view(run, actions, drafts, artifacts, rights)
    kept = _contents.get(run.id)
    if kept is not None and kept[0] == run.updated_at:  # contents of this very run row: safe to hand out again
        _views_built.put(key, (expired, view))
    return view


async def _reload(principal: Principal, run: runs.RunRow) -> RunView:
    return await load_run(principal, run.id)


async def _wait_for_finish(run_id: str, seconds: float) -> runs.RunRow:
    """The run once it leaves queued/running, or as it stands after `seconds`."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + seconds
    waits = run_waits.current(current_connection().settings.database_url)
    if waits is None:
        while True:
            run = await runs.get_run_by_id(run_id)
            assert run is not None
            if run.state not in ("queued", "running") or loop.time() >= deadline:
                return run
            await asyncio.sleep(_POLL_SECONDS)
    with waits.watching(run_id) as changed:
        while True:
            changed.clear()
            run = await runs.get_run_by_id(run_id)
            assert run is not None
            remaining = deadline - loop.time()
            if run.state not in ("queued", "running") or remaining <= 0:
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
    rights = {item.project_id: _rights(principal, "work_items:write" in permissions)}
    try:
        client, task_queue, window = await _client()
        await asyncio.wait_for(start_run_workflow(client, task_queue, run, window), START_SECONDS)
    except (RPCError, OSError, TimeoutError, RuntimeError) as exc:
        # Stored and queued: the worker's sweep starts it with the same id once Temporal answers.
        log.warning("could not start the workflow of %s, the sweep will: %s", run.id, exc)
        return (await _views([run], rights))[0]
    return (await _views([await _wait_for_finish(run.id, seconds)], rights))[0]


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
    return f"chat-completions:{settings.llm_model}" if settings.llm_base_url else "extractive-v2"


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
    rights = {p: _rights(principal, p in writable) for p in project_ids}
    return await _views(rows, rights), info


_UPDATE_ERRORS: dict[str, type[GroundworkError]] = {
    "run_not_reviewable": RunNotReviewable,
    "invalid_action": InvalidAction,
    "validation_failed": ValidationFailed,
}


def _update_error(error: BaseException) -> GroundworkError:
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
    return _update_error(error)


async def _start_update(run_id: str, update: Any, arg: Any, update_id: str) -> WorkflowUpdateHandle[Any] | None:
    """Send an Update and wait until the run's workflow accepts it; None when that takes too long."""
    client, _, _ = await _client()
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


async def _result(update: WorkflowUpdateHandle[Any] | None, seconds: float) -> tuple[bool, Any]:
    """The Update's result if it comes within `seconds`; (False, None) when the deadline passes first."""
    if update is None:
        return False, None
    try:
        return True, await asyncio.wait_for(update.result(), timeout=max(seconds, _REFUSAL_GRACE_SECONDS))
    except (TimeoutError, WorkflowUpdateRPCTimeoutOrCancelledError):
        return False, None
    except (WorkflowUpdateFailedError, RPCError) as error:
        raise _temporal_error(error) from None


def _request_id(prefix: str, principal: Principal, idempotency_key: str | None, *parts: str) -> str:
    if idempotency_key:
        return derive_request_id(prefix, principal.api_key_id, idempotency_key, *parts)
    return new_id(prefix)


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
    _check_reviewable(view.run)
    request_id = _request_id("op", principal, idempotency_key, run_id, action, text)
    update = await _start_update(
        run_id, EnhancementRunWorkflow.run_action, RunActionUpdate(request_id, action, text), request_id
    )
    finished, _ = await _result(update, seconds)
    return await _reload(principal, view.run), finished


async def _apply_permission(principal: Principal, run: runs.RunRow) -> None:
    permissions = await project_access.project_permissions(principal, run.project_id) or frozenset()
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
    principal: Principal,
    run_id: str,
    draft_ids: Any,
    expected_target_version: Any,
    confirm: Any,
    idempotency_key: str | None = None,
) -> tuple[RunView, bool]:
    """Apply selected drafts after confirmation, guarded by the target version; (run, finished in time)."""
    ids = validate_draft_ids(draft_ids)
    view = await load_run(principal, run_id)
    if not view.rights.can_apply:
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
    apply_id = _request_id("apply", principal, idempotency_key, run_id, ",".join(ids), expected_target_version)
    update = await _start_update(
        run_id,
        EnhancementRunWorkflow.apply,
        ApplyUpdate(apply_id, ids, expected_target_version, principal.id),
        apply_id,
    )
    finished, outcome = await _result(update, APPLY_WAIT_SECONDS)
    if finished:
        _raise_for(outcome)
    return await _reload(principal, view.run), finished


def _raise_for(outcome: ApplyOutcome) -> None:
    if outcome.ok:
        return
    if outcome.code == "target_version_mismatch":
        raise TargetVersionMismatch(outcome.current_version or "")
    if outcome.code == "draft_not_eligible":
        raise DraftNotEligible(list(outcome.ineligible), outcome.ineligible)
    raise NotFound("The target work item no longer exists.")


async def list_drafts(
    principal: Principal,
    run_id: str,
    *,
    field: str | None = None,
    apply_eligible: bool | None = None,
    action: str | None = None,
    limit: int | None = None,
    cursor: str | None = None,
    after_id: str | None = None,
) -> tuple[RunView, list[outputs.DraftRow], dict[str, Any]]:
    """Drafts of a visible run, newest first, filtered by field, eligibility and action.

    Pages continue from an opaque `cursor`, or from `after_id` (the last draft id a caller holds: GraphQL
    answers a plain list, so its clients page by id).
    """
    check_choice(field, DRAFT_FIELDS, "field")
    check_choice(action, ACTIONS, "action")
    page = page_request(limit, cursor)
    view = await load_run(principal, run_id)
    after = page.after_text() or after_id
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
    after_id: str | None = None,
) -> tuple[list[outputs.ArtifactRow], dict[str, Any]]:
    """Artifacts of a visible run, newest first; pages continue from `cursor` or from `after_id`."""
    check_choice(type, ARTIFACT_TYPES, "type")
    page = page_request(limit, cursor)
    await _visible_run(principal, run_id)
    after = page.after_text() or after_id
    rows = await outputs.list_artifacts(run_id, type=type, after_id=after, limit=page.limit + 1)
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
        # The row is the truth of the run; a workflow that ended abnormally (terminated, timed out,
        # cancelled) while the row still says queued or running is what the operation reports.
        closed = _STATUS.get(description.status) if description.status is not None else None
        if run.state in ("queued", "running") and closed in ("failed", "cancelled"):
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
