"""Activities of enhancement runs: each a thin, idempotent step over domain and persistence.

Every activity may run more than once (Temporal retries it after a crash or timeout), so each one
checks what is already done before doing it, and writes its change and its outbox events in one
transaction. A failure leaves as an `ApplicationError` whose type is one of the documented error
codes (`ACTION_ERROR_CODES`); anything unforeseen is recorded by the workflow as `internal_error`.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any, TypeVar

from temporalio import activity
from temporalio.exceptions import ApplicationError

from groundwork.activities.enhancement_applies import apply_drafts
from groundwork.activities.enhancement_endings import cancel_run
from groundwork.domain.enhancement.enhancer import EnhancementContext, EnhancementFailure, Enhancer
from groundwork.domain.enhancement.extractive import work_item_evidence
from groundwork.domain.enhancement.model import (
    FINAL_STATES,
    REVIEWABLE_STATES,
    ActionOutput,
    state_after_action,
)
from groundwork.domain.times import format_timestamp
from groundwork.domain.work_items import WorkItem
from groundwork.persistence import db
from groundwork.persistence.repositories import work_items as work_item_repo
from groundwork.persistence.repositories.enhancement import applies, outputs, run_actions, runs
from groundwork.services.enhancement.run_evidence import EvidenceSource, GatheredEvidence, RunEvidence
from groundwork.workflows.enhancement_contract import (
    ActionRequest,
    ActionResult,
    ActionsRequest,
    NewActionRequest,
    PreparedRun,
    RunFailure,
)

log = logging.getLogger(__name__)
HEARTBEAT_EVERY_SECONDS = 1.0
# How long the first step (a local activity: no heartbeat, 30 s to finish) may spend performing a run's
# actions before it hands them to their own activity, whose limit is minutes and which heartbeats.
FIRST_STEP_ACTIONS_SECONDS = 10.0
T = TypeVar("T")
NO_CONNECTOR = "no authorized code-context connector exists for this workspace."
NO_SCOPE = "the run was created without the work-item-enhance:code-context scope."


async def _with_heartbeats(work: Awaitable[T]) -> T:
    """Heartbeat while `work` runs, so a dead worker's attempt is retried within the heartbeat timeout; a cancelled
    activity cancels `work`."""
    task = asyncio.ensure_future(work)
    try:
        while True:
            done, _ = await asyncio.wait({task}, timeout=HEARTBEAT_EVERY_SECONDS)
            if done:
                return task.result()
            activity.heartbeat()
    except asyncio.CancelledError:
        # Temporal cancelled the activity (its run was cancelled): the work stops too, it does not run on unseen.
        task.cancel()
        raise


def _now() -> datetime:
    return datetime.now(UTC)


def _coded(failure: EnhancementFailure) -> ApplicationError:
    return ApplicationError(str(failure), type=failure.code, non_retryable=not failure.retryable)


@dataclass(frozen=True)
class _RunInputs:
    """What every action of a run reads before it generates: loaded once per activity."""

    run: runs.RunRow
    item: WorkItem
    gathered: GatheredEvidence


class EnhancementActivities:
    """The activities, bound to the generator the worker was configured with."""

    def __init__(self, enhancer: Enhancer, evidence: EvidenceSource) -> None:
        self.enhancer = enhancer
        self.evidence = RunEvidence(evidence)

    async def _gathered(self, run: runs.RunRow, item: WorkItem | None = None) -> GatheredEvidence:
        if item is None:
            item = await work_item_repo.get_work_item(run.workspace_id, run.target_id)
        if item is None:
            raise ApplicationError(
                "The run's work item was deleted while the run was open; nothing was changed.",
                non_retryable=True,
                type="target_gone",
            )
        try:
            return await self.evidence.for_run(run, item)
        except Exception as exc:  # retried; after the last attempt the run fails with this code
            log.warning("gathering evidence for %s failed: %s", run.id, exc)
            raise ApplicationError(
                "The run's evidence could not be gathered: the search index or the database did not answer. "
                "Create the run again once they are back.",
                type="evidence_unavailable",
            ) from exc

    @activity.defn(name="enhancement_prepare_run")
    async def prepare_run(self, run_id: str, review_window_seconds: int | None = None) -> PreparedRun:
        """queued -> running, and the run's evidence gathered once for all its actions (a local activity).

        Given the run's review window and an in-process generator, it also performs the pending actions
        once, as `enhancement_perform_actions` would: a run then costs the server no activity task at all.
        When that attempt fails or takes longer than `FIRST_STEP_ACTIONS_SECONDS`, what was committed is
        kept and the workflow hands the rest to `enhancement_perform_actions`, whose retries, heartbeats and
        error codes decide the outcome.
        """
        found = await runs.start_run(run_id)
        if found is None:
            raise ApplicationError(f"unknown run {run_id}", non_retryable=True, type="not_found")
        pending = [a.request_id for a in found.actions if a.state == "pending"]
        prepared = PreparedRun(pending, len(found.actions))
        if not pending:
            return prepared
        inputs = await self._inputs(run_id, found)
        # A generator that does not say it runs in process is treated as remote.
        if review_window_seconds is None or not getattr(self.enhancer, "in_process", False):
            return prepared
        request = ActionsRequest(run_id, pending, review_window_seconds)
        try:
            prepared.performed = await asyncio.wait_for(
                self._perform_all(request, inputs, found), FIRST_STEP_ACTIONS_SECONDS
            )
        except Exception:  # a timeout included; retried by the actions' own activity, which codes what still fails
            log.warning("run %s: the first step could not perform its actions; handing them on", run_id, exc_info=True)
        return prepared

    @activity.defn(name="enhancement_start_run")
    async def start_run(self, run_id: str) -> list[str]:
        """queued -> running; returns the request ids of the actions still to perform (runs before the patch)."""
        await runs.set_run_state(run_id, "running", from_states=("queued",))
        return [a.request_id for a in await run_actions.list_run_actions(run_id) if a.state == "pending"]

    @activity.defn(name="enhancement_begin_action")
    async def begin_action(self, request: NewActionRequest) -> None:
        """Record an action asked for on a reviewable run and move the run to running (runs before the patch)."""
        async with db.transaction():
            await run_actions.insert_run_action(
                request.run_id, request.request_id, request.action, request.instructions
            )
            await runs.set_run_state(request.run_id, "running", from_states=REVIEWABLE_STATES)

    @activity.defn(name="enhancement_perform_action")
    async def perform_action(self, request: ActionRequest) -> ActionResult:
        """Generate one action's drafts and artifacts and store them with their events (once).

        A review-time action is recorded first (once per request id). The commit that completes the
        last pending action of the run also moves it to review with the `completed` event. It
        heartbeats throughout, so waiting for a database connection or the run's lock under load is
        never mistaken for a dead worker.
        """
        return await _with_heartbeats(self._perform(request))

    @activity.defn(name="enhancement_perform_actions")
    async def perform_actions(self, request: ActionsRequest) -> list[ActionResult]:
        """Perform a run's pending initial actions concurrently and commit what they produced together (once).

        One activity task for all of them: a run with eight actions costs the server what a run with one
        does. A retry performs only what is still pending (the rest answer what they stored). When an
        action fails, the others' output is still committed; the error raised names the failing request in
        its details.
        """
        return await _with_heartbeats(self._perform_all(request))

    async def _perform_all(
        self, request: ActionsRequest, inputs: _RunInputs | None = None, found: runs.RunInputs | None = None
    ) -> list[ActionResult]:
        # The run, its work item and its action rows (one statement) and its evidence are read once for all
        # the actions (or handed over by the first step, which has just read them).
        if found is None:
            found = await runs.run_inputs(request.run_id)
        requested = {a.request_id: a for a in found.actions} if found is not None else {}
        if inputs is None and any(
            r is None or r.state != "completed" for r in (requested.get(i) for i in request.request_ids)
        ):
            try:
                inputs = await self._inputs(request.run_id, found)
            except ApplicationError as refused:
                # Every action would have failed alike: name the first, as a failure of each would.
                raise ApplicationError(
                    refused.message, request.request_ids[0], type=refused.type, non_retryable=refused.non_retryable
                ) from refused
        outcomes: list[ActionResult | ActionOutput | BaseException] = await asyncio.gather(
            *(self._outcome(request.run_id, rid, requested.get(rid), inputs) for rid in request.request_ids),
            return_exceptions=True,
        )
        # What the actions produced is stored in one transaction: eight commits queued on the run's row lock
        # cost an eight-action run about twice the time of a one-action run.
        produced = [
            (requested[rid], o)
            for rid, o in zip(request.request_ids, outcomes, strict=True)
            if isinstance(o, ActionOutput)
        ]
        committed: dict[str, ActionResult] = {}
        if produced:
            assert inputs is not None
            committed = await self._commit(inputs.run, produced, request.review_window_seconds)
        failures = [
            (rid, o) for rid, o in zip(request.request_ids, outcomes, strict=True) if isinstance(o, BaseException)
        ]
        if failures:
            # A failure retrying cannot help decides the run's outcome; otherwise Temporal retries the rest.
            final = [(rid, e) for rid, e in failures if isinstance(e, ApplicationError) and e.non_retryable]
            request_id, error = (final or failures)[0]
            if isinstance(error, ApplicationError):
                raise ApplicationError(
                    error.message, request_id, type=error.type, non_retryable=error.non_retryable
                ) from error
            raise error
        return [
            committed[rid] if isinstance(o, ActionOutput) else o
            for rid, o in zip(request.request_ids, outcomes, strict=True)
            if isinstance(o, ActionOutput | ActionResult)
        ]

    async def _outcome(
        self, run_id: str, request_id: str, run_action: run_actions.RunActionRow | None, inputs: _RunInputs | None
    ) -> ActionResult | ActionOutput:
        """A new output for a pending action, or what a completed one stored (a retry after its commit)."""
        if run_action is None:
            raise ApplicationError(
                f"unknown action request {request_id} of {run_id}", non_retryable=True, type="not_found"
            )
        if run_action.state == "completed":
            return await self._stored(run_action)
        assert inputs is not None
        return await self._generate(run_action, inputs)

    async def _inputs(self, run_id: str, found: runs.RunInputs | None = None) -> _RunInputs:
        """The run, its work item as it is now, and the run's evidence (gathered and stored if not yet)."""
        if found is None:
            found = await runs.run_inputs(run_id)
        if found is None:
            raise ApplicationError(f"unknown run {run_id}", non_retryable=True, type="not_found")
        return _RunInputs(found.run, found.item, await self._gathered(found.run, found.item))

    async def _perform(self, request: ActionRequest) -> ActionResult:
        if request.action is not None:
            async with db.transaction():
                await run_actions.insert_run_action(
                    request.run_id, request.request_id, request.action, request.instructions
                )
                await runs.set_run_state(request.run_id, "running", from_states=REVIEWABLE_STATES)
        # The action row comes with the run and its work item (one statement), as in `_perform_all`.
        found = await runs.run_inputs(request.run_id)
        actions = found.actions if found is not None else []
        run_action = next((a for a in actions if a.request_id == request.request_id), None)
        if run_action is None or run_action.state == "completed":  # unknown, or a retry after the commit
            outcome = await self._outcome(request.run_id, request.request_id, run_action, None)
            assert isinstance(outcome, ActionResult)
            return outcome
        inputs = await self._inputs(request.run_id, found)
        output = await self._generate(run_action, inputs)
        committed = await self._commit(inputs.run, [(run_action, output)], request.review_window_seconds)
        return committed[run_action.request_id]

    async def _generate(self, run_action: run_actions.RunActionRow, inputs: _RunInputs) -> ActionOutput:
        """One action's drafts and artifacts from the run's work item and evidence (nothing stored)."""
        run, item, gathered = inputs.run, inputs.item, inputs.gathered
        try:
            return await self.enhancer.enhance(
                EnhancementContext(
                    action=run_action.action,
                    work_item_id=item.id,
                    work_item_key=item.key,
                    title=item.title,
                    fields=dict(item.fields),
                    evidence=tuple(work_item_evidence(item.id, item.title, item.fields)) + gathered.evidence,
                    instructions=run_action.instructions,
                    code_context_unavailable_reason=NO_CONNECTOR if run.code_context else NO_SCOPE,
                    reference_items=gathered.reference_items,
                    rarity=gathered.rarity,
                )
            )
        except EnhancementFailure as failure:
            raise _coded(failure) from failure

    async def _commit(
        self,
        run: runs.RunRow,
        produced: list[tuple[run_actions.RunActionRow, ActionOutput]],
        review_window_seconds: int | None,
    ) -> dict[str, ActionResult]:
        """Store actions' drafts, artifacts and events in one transaction; by request id, what each stored.

        The commit that leaves nothing pending also moves the run to review with the `completed` event. An
        action an overlapping attempt committed first answers what that attempt stored."""
        results: dict[str, ActionResult] = {}
        stored: list[tuple[run_actions.RunActionRow, list[str], list[str]]] = []
        async with db.transaction():
            states = await run_actions.lock_run_actions(run.id, [a.request_id for a, _ in produced])
            now = _now()
            events: list[tuple[str, dict[str, Any]]] = []
            fresh = []
            for run_action, output in produced:
                if states.get(run_action.request_id) == "completed":
                    results[run_action.request_id] = await self._stored(run_action)
                elif states.get(run_action.request_id) == "failed":
                    # Ended while it was generating (its run was cancelled): what it produced is not kept.
                    results[run_action.request_id] = ActionResult(run_action.action, [], [], run.state)
                else:
                    fresh.append((run_action, output))
            recorded = await outputs.record_actions_output(fresh) if fresh else []
            for (run_action, _), (drafts, artifact_ids) in zip(fresh, recorded, strict=True):
                events.extend(
                    (
                        "draft_created",
                        {
                            "draft_id": draft.id,
                            "field": draft.field,
                            "target_id": run.target_id,
                            "created_at": format_timestamp(draft.created_at),
                        },
                    )
                    for draft in drafts
                )
                draft_ids = [d.id for d in drafts]
                events.append(
                    (
                        "action_completed",
                        {
                            "action": run_action.action,
                            "draft_ids": draft_ids,
                            "artifact_ids": artifact_ids,
                            "completed_at": format_timestamp(now),
                        },
                    )
                )
                stored.append((run_action, draft_ids, artifact_ids))
            # Readers keyed on `updated_at` see the new drafts at once.
            state = run.state
            if not stored:  # an overlapping attempt committed every one of them
                pass
            elif review_window_seconds is None:
                await runs.append_run_events(run, events, now, actor_id=run.requested_by)
                await runs.touch_run(run.id)
            else:
                # The run row last, held only for the check: concurrent commits of one run (review-time
                # actions, runs recorded before one commit per activity) queue here, and under READ COMMITTED
                # each sees the others' committed completions once it holds the lock (the check is a statement
                # of its own, after the lock), so exactly the last one finds nothing pending and finishes the
                # run. Its events and the run's `completed` are one insert.
                locked_run = await runs.touch_and_lock_run(run.id)
                assert locked_run is not None
                state, finished = await self._settle(locked_run, review_window_seconds, now)
                if finished is not None:
                    events.append(("completed", finished))
                await runs.append_run_events(run, events, now, actor_id=run.requested_by)
        for run_action, draft_ids, artifact_ids in stored:
            results[run_action.request_id] = ActionResult(run_action.action, draft_ids, artifact_ids, state)
        return results

    async def _stored(self, run_action: run_actions.RunActionRow, state: str | None = None) -> ActionResult:
        drafts, artifacts = await outputs.outputs_of_action(run_action.id)
        if state is None:
            run = await runs.get_run_by_id(run_action.run_id)
            state = run.state if run is not None else "running"
        return ActionResult(run_action.action, [d.id for d in drafts], [a.id for a in artifacts], state)

    async def _complete(self, run: runs.RunRow, review_window_seconds: int) -> str:
        """running -> ready_for_review (or back to applied) with the `completed` event, unless an action is
        still pending; call in a transaction holding the run's row lock. Returns the run's state."""
        now = _now()
        state, finished = await self._settle(run, review_window_seconds, now)
        if finished is not None:
            await runs.append_run_event(run, "completed", finished, now, actor_id=run.requested_by)
        return state

    async def _settle(
        self, run: runs.RunRow, review_window_seconds: int, now: datetime
    ) -> tuple[str, dict[str, Any] | None]:
        """The run's state once nothing is pending, and the payload of its `completed` event when this call
        finished it (the caller appends the event); call in a transaction holding the run's row lock."""
        facts = await runs.completion_facts(run.id)
        if run.state != "running" or facts.pending:
            return run.state, None
        next_state = state_after_action(facts.has_applies)
        expires = run.review_expires_at or now + timedelta(seconds=review_window_seconds)
        await runs.set_run_state(
            run.id, next_state, from_states=("running",), review_expires_at=expires, completed=True
        )
        finished = {
            "target_id": run.target_id,
            "draft_count": facts.drafts,
            "artifact_count": facts.artifacts,
            "completed_at": format_timestamp(now),
        }
        return next_state, finished

    @activity.defn(name="enhancement_finish_run")
    async def finish_run(self, run_id: str, review_window_seconds: int) -> str:
        """running -> ready_for_review (or back to applied) with the `completed` event; returns the state."""
        async with db.transaction():
            run = await runs.get_run_by_id(run_id, for_update=True)
            assert run is not None
            return await self._complete(run, review_window_seconds)

    @activity.defn(name="enhancement_fail")
    async def fail(self, failure: RunFailure) -> str:
        """Record a failed run or action with its durable error code and the `failed` event."""
        async with db.transaction():
            run = await runs.get_run_by_id(failure.run_id, for_update=True)
            assert run is not None
            # A retry after the commit finds the run already settled: no second `failed` event.
            if run.state in FINAL_STATES or (not failure.fail_run and run.state != "running"):
                return run.state
            action = None
            for requested in await run_actions.list_run_actions(failure.run_id):
                if requested.request_id == failure.request_id:
                    action = requested.action
                # A failed run fails everything still pending; a failed review-time action only itself.
                if requested.state == "pending" and (failure.fail_run or requested.request_id == failure.request_id):
                    await run_actions.fail_run_action(requested.id, failure.error_code)
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
            elif await run_actions.pending_actions(failure.run_id):
                next_state = run.state  # other actions still run; the last of them settles the run
                await runs.touch_run(failure.run_id)
            else:
                next_state = state_after_action(bool(await applies.list_applies(failure.run_id)))
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

    @activity.defn(name="enhancement_queued_runs")
    async def queued_runs(self, older_than_seconds: float) -> list[str]:
        """Runs still queued after a while: their workflow may never have started."""
        return await runs.queued_runs_older_than(older_than_seconds)

    def all(self) -> list[Callable[..., Any]]:
        """Every activity of this class, for the worker."""
        return [
            self.prepare_run,
            self.start_run,
            self.begin_action,
            self.perform_action,
            self.perform_actions,
            self.finish_run,
            self.fail,
            self.expire_run,
            apply_drafts,
            cancel_run,
            self.queued_runs,
        ]
