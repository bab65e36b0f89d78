"""Activities of enhancement runs: each a thin, idempotent step over domain and persistence.

Every activity may run more than once (Temporal retries it after a crash or timeout), so each one
checks what is already done before doing it, and writes its change and its outbox events in one
transaction.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime, timedelta
from typing import Any, Protocol, TypeVar

from temporalio import activity
from temporalio.exceptions import ApplicationError

from groundwork.domain.enhancement.enhancer import EnhancementContext, Enhancer, Evidence
from groundwork.domain.enhancement.extractive import work_item_evidence
from groundwork.domain.enhancement.model import (
    REVIEWABLE_STATES,
    ActionOutput,
    DraftState,
    draft_ineligibility,
    review_expired,
    state_after_action,
)
from groundwork.domain.times import format_timestamp
from groundwork.domain.work_items import parse_version
from groundwork.persistence import db
from groundwork.persistence.repositories import enhancement as runs
from groundwork.persistence.repositories import work_items as work_item_repo
from groundwork.workflows.enhancement import (
    ActionRequest,
    ActionResult,
    ApplyCommand,
    ApplyOutcome,
    NewActionRequest,
    RunFailure,
)

HEARTBEAT_EVERY_SECONDS = 1.0
T = TypeVar("T")
NO_CONNECTOR = "no authorized code-context connector exists for this workspace."
NO_SCOPE = "the run was created without the work-item-enhance:code-context scope."


async def _with_heartbeats(work: Awaitable[T]) -> T:
    """Heartbeat while `work` runs, so a dead worker's attempt is retried within the heartbeat timeout."""
    task = asyncio.ensure_future(work)
    while True:
        done, _ = await asyncio.wait({task}, timeout=HEARTBEAT_EVERY_SECONDS)
        if done:
            return task.result()
        activity.heartbeat()


def _now() -> datetime:
    return datetime.now(UTC)


class EnhancementActivities:
    """The activities, bound to the generator the worker was configured with."""

    def __init__(self, enhancer: Enhancer, evidence: EvidenceSource) -> None:
        self.enhancer = enhancer
        self.evidence = evidence

    @activity.defn(name="enhancement_start_run")
    async def start_run(self, run_id: str) -> list[str]:
        """queued → running; returns the request ids of the actions still to perform."""
        await runs.set_run_state(run_id, "running", from_states=("queued",))
        return [a.request_id for a in await runs.list_run_actions(run_id) if a.state == "pending"]

    @activity.defn(name="enhancement_begin_action")
    async def begin_action(self, request: NewActionRequest) -> None:
        """Record an action asked for on a reviewable run and move the run to running."""
        async with db.transaction():
            await runs.insert_run_action(request.run_id, request.request_id, request.action, request.instructions)
            await runs.set_run_state(request.run_id, "running", from_states=REVIEWABLE_STATES)

    @activity.defn(name="enhancement_perform_action")
    async def perform_action(self, request: ActionRequest) -> ActionResult:
        """Generate one action's drafts and artifacts and store them with their events (once)."""
        run_action = await runs.get_run_action(request.run_id, request.request_id)
        run = await runs.get_run_by_id(request.run_id)
        if run_action is None or run is None:
            raise ApplicationError(f"unknown action request {request}", non_retryable=True, type="not_found")
        if run_action.state == "completed":  # a retry after the commit: answer what was stored
            drafts, artifacts = await runs.outputs_of_action(run_action.id)
            return ActionResult(run_action.action, [d.id for d in drafts], [a.id for a in artifacts])
        item = await work_item_repo.get_work_item(run.workspace_id, run.target_id)
        if item is None:
            raise ApplicationError("the target work item no longer exists", non_retryable=True, type="target_gone")

        async def generate() -> ActionOutput:
            evidence = work_item_evidence(item.id, item.title, item.fields)
            evidence += await self.evidence.passages(
                run.workspace_id, run.project_id, run.requested_by, item.title, item.fields
            )
            evidence += await self.evidence.packages(
                run.workspace_id, run.project_id, run.requested_by, item.title, item.fields
            )
            return await self.enhancer.enhance(
                EnhancementContext(
                    action=run_action.action,
                    work_item_id=item.id,
                    work_item_key=item.key,
                    title=item.title,
                    fields=dict(item.fields),
                    evidence=tuple(evidence),
                    instructions=run_action.instructions,
                    code_context_unavailable_reason=NO_CONNECTOR if run.code_context else NO_SCOPE,
                )
            )

        output = await _with_heartbeats(generate())
        async with db.transaction():
            locked = await runs.get_run_action(request.run_id, request.request_id, for_update=True)
            if locked is not None and locked.state == "completed":  # an overlapping attempt committed first
                drafts, artifacts = await runs.outputs_of_action(run_action.id)
                return ActionResult(run_action.action, [d.id for d in drafts], [a.id for a in artifacts])
            drafts, artifacts = await runs.record_action_output(run_action, output)
            now = _now()
            for draft in drafts:
                await runs.append_run_event(
                    run,
                    "draft_created",
                    {
                        "draft_id": draft.id,
                        "field": draft.field,
                        "target_id": run.target_id,
                        "created_at": format_timestamp(draft.created_at),
                    },
                    now,
                    actor_id=run.requested_by,
                )
            await runs.append_run_event(
                run,
                "action_completed",
                {
                    "action": run_action.action,
                    "draft_ids": [d.id for d in drafts],
                    "artifact_ids": [a.id for a in artifacts],
                    "completed_at": format_timestamp(now),
                },
                now,
                actor_id=run.requested_by,
            )
        return ActionResult(run_action.action, [d.id for d in drafts], [a.id for a in artifacts])

    @activity.defn(name="enhancement_finish_run")
    async def finish_run(self, run_id: str, review_window_seconds: int) -> str:
        """running → ready_for_review (or back to applied) with the `completed` event; returns the state."""
        async with db.transaction():
            run = await runs.get_run_by_id(run_id, for_update=True)
            assert run is not None
            if run.state != "running":
                return run.state
            next_state = state_after_action(bool(await runs.list_applies(run_id)))
            expires = run.review_expires_at or _now() + timedelta(seconds=review_window_seconds)
            await runs.set_run_state(
                run_id, next_state, from_states=("running",), review_expires_at=expires, completed=True
            )
            drafts = await runs.list_drafts(run_id)
            artifacts = await runs.list_artifacts(run_id)
            now = _now()
            await runs.append_run_event(
                run,
                "completed",
                {
                    "target_id": run.target_id,
                    "draft_count": len(drafts),
                    "artifact_count": len(artifacts),
                    "completed_at": format_timestamp(now),
                },
                now,
                actor_id=run.requested_by,
            )
            return next_state

    @activity.defn(name="enhancement_fail")
    async def fail(self, failure: RunFailure) -> str:
        """Record a failed run or action with its durable error code and the `failed` event."""
        async with db.transaction():
            run = await runs.get_run_by_id(failure.run_id, for_update=True)
            assert run is not None
            # A retry after the commit finds the run already settled: no second `failed` event.
            if run.state in ("failed", "expired") or (not failure.fail_run and run.state != "running"):
                return run.state
            action = None
            for pending in await runs.list_run_actions(failure.run_id):
                if pending.request_id == failure.request_id:
                    action = pending.action
                if pending.state == "pending":
                    await runs.fail_run_action(pending.id, failure.error_code)
            if failure.fail_run:
                next_state = "failed"
                await runs.set_run_state(
                    failure.run_id,
                    "failed",
                    from_states=(run.state,),
                    error_code=failure.error_code,
                    error_message=failure.message,
                    completed=True,
                )
            else:
                next_state = state_after_action(bool(await runs.list_applies(failure.run_id)))
                await runs.set_run_state(failure.run_id, next_state, from_states=("running",))
            now = _now()
            await runs.append_run_event(
                run,
                "failed",
                {"action": action, "error_code": failure.error_code, "failed_at": format_timestamp(now)},
                now,
                actor_id=run.requested_by,
            )
            return next_state

    @activity.defn(name="enhancement_expire_run")
    async def expire_run(self, run_id: str) -> None:
        """End the review window: the run's drafts are no longer eligible."""
        await runs.set_run_state(run_id, "expired", from_states=REVIEWABLE_STATES)

    @activity.defn(name="enhancement_apply_drafts")
    async def apply_drafts(self, command: ApplyCommand) -> ApplyOutcome:
        """In one transaction: lock the work item, check the version, write the fields, record it all."""
        async with db.transaction():
            earlier = await runs.get_apply(command.apply_id)
            if earlier is not None:  # a retry after the commit
                return ApplyOutcome(
                    True,
                    target_version=format_timestamp(earlier["target_version"]),
                    applied_draft_ids=list(earlier["draft_ids"]),
                )
            run = await runs.get_run_by_id(command.run_id, for_update=True)
            assert run is not None
            item = await work_item_repo.get_work_item(run.workspace_id, run.target_id, for_update=True)
            if item is None:
                return ApplyOutcome(False, code="not_found")
            expired = review_expired(run.state, run.review_expires_at, _now())
            # The version first: of two applies racing on one version, the loser always gets 409.
            if item.version != parse_version(command.expected_target_version):
                return ApplyOutcome(
                    False, code="target_version_mismatch", current_version=format_timestamp(item.version)
                )
            all_drafts = await runs.list_drafts(command.run_id, for_update=True)
            states: dict[str, DraftState] = {d.id: d.state() for d in all_drafts}
            reasons = draft_ineligibility(command.draft_ids, states, run.state, expired)
            if reasons:
                return ApplyOutcome(
                    False, code="draft_not_eligible", ineligible=reasons, current_version=format_timestamp(item.version)
                )
            chosen = [d for d in all_drafts if d.id in set(command.draft_ids)]
            fields = {**item.fields, **{d.field: d.proposed_value for d in chosen}}
            changes = {
                d.field: {"from": item.fields.get(d.field), "to": d.proposed_value, "draft_id": d.id} for d in chosen
            }
            updated = await work_item_repo.update_work_item(
                item,
                title=item.title,
                status=item.status,
                sprint=item.sprint,
                watchers=list(item.watchers),
                fields=fields,
                changes=changes,
                actor_id=command.actor_id,
                source="apply",
            )
            await runs.mark_drafts_applied(command.draft_ids, command.apply_id)
            await runs.insert_apply(
                apply_id=command.apply_id,
                run_id=run.id,
                work_item_id=item.id,
                draft_ids=command.draft_ids,
                expected_target_version=item.version,
                target_version=updated.version,
                actor_id=command.actor_id,
            )
            await runs.set_run_state(run.id, "applied", from_states=("ready_for_review", "applied"))
            now = _now()
            await runs.append_run_event(
                run,
                "applied",
                {
                    "target_id": item.id,
                    "applied_draft_ids": command.draft_ids,
                    "target_version": format_timestamp(updated.version),
                    "applied_at": format_timestamp(now),
                },
                now,
                actor_id=command.actor_id,
            )
            return ApplyOutcome(
                True, target_version=format_timestamp(updated.version), applied_draft_ids=command.draft_ids
            )

    @activity.defn(name="enhancement_queued_runs")
    async def queued_runs(self, older_than_seconds: float) -> list[str]:
        """Runs still queued after a while: their workflow may never have started."""
        return await runs.queued_runs_older_than(older_than_seconds)

    def all(self) -> list[Callable[..., Any]]:
        """Every activity of this class, for the worker."""
        return [
            self.start_run,
            self.begin_action,
            self.perform_action,
            self.finish_run,
            self.fail,
            self.expire_run,
            self.apply_drafts,
            self.queued_runs,
        ]


class EvidenceSource(Protocol):
    """Where evidence for a work item comes from (evidence search and context packages: `enhancers.evidence`)."""

    async def passages(
        self, workspace_id: str, project_id: str, requested_by: str, title: str, fields: dict[str, object]
    ) -> list[Evidence]:
        """Passages of the project's corpus relevant to the work item that `requested_by` may read."""
        ...

    async def packages(
        self, workspace_id: str, project_id: str, requested_by: str, title: str, fields: dict[str, object]
    ) -> list[Evidence]:
        """Ready context packages of the project relevant to the work item that `requested_by` may read."""
        ...
