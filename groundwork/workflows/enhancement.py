"""Enhancement run workflows: one run per workflow (id = run id).

`EnhancementRunWorkflow` prepares the run (a local activity: queued -> running, the run's evidence
gathered once and stored for all its actions), has the requested actions performed concurrently (in
that local activity or in one activity of their own, see below; their output committed together, which
moves the run to `ready_for_review`), then
stays open for the review window and serves two Updates, `run_action` and `apply`, whose validators
reject what is not allowed without touching history. Actions and applies on a reviewable run run one at a time. At the
end of the window it expires the run; after many Updates it continues as new with the same deadline.

Runs started before this version (no `enhancement-depth` patch marker in their history) replay the
earlier, sequential path; `ApplyDraftsWorkflow` stays registered for their applies. Runs without the
`initial-actions-in-one-activity` marker replay one `enhancement_perform_action` activity per action.

With an in-process generator (the extractive default) the local activity performs the actions itself
and returns what they produced: no activity task at all. With a remote one, or when that attempt fails
or runs out of time, `enhancement_perform_actions` performs what is still pending. The result recorded
in the local activity's marker chooses the path, so histories recorded before this replay on this code
with no patch (not the reverse: docs/decisions.md).
"""

from __future__ import annotations

import asyncio
from datetime import timedelta
from typing import Any

from temporalio import workflow
from temporalio.common import RetryPolicy
from temporalio.exceptions import ActivityError, ApplicationError, CancelledError
from temporalio.exceptions import TimeoutError as ActivityTimeout

from groundwork.workflows.enhancement_contract import (
    ActionRequest,
    ActionResult,
    ActionsRequest,
    ApplyCommand,
    ApplyOutcome,
    ApplyUpdate,
    EnhancementRunInput,
    NewActionRequest,
    PreparedRun,
    RunActionUpdate,
    RunFailure,
)
from groundwork.workflows.search_attributes import STATE, workspace_attributes

with workflow.unsafe.imports_passed_through():
    from groundwork.domain.enhancement.model import (
        ACTIONS,
        FINAL_STATES,
        MAX_ACTIONS_PER_RUN,
        action_error_code,
        not_reviewable_reason,
        validate_draft_ids,
    )
    from groundwork.domain.errors import ValidationFailed


# Histories with this marker run actions concurrently and apply through an activity of the Update.
PATCH = "enhancement-depth"
# Histories with this marker perform the initial actions in one activity (one task through the server
# for any number of actions); earlier ones ran one activity per action.
ONE_ACTIVITY_PATCH = "initial-actions-in-one-activity"
ACTION_RETRY = RetryPolicy(
    initial_interval=timedelta(seconds=1),
    maximum_attempts=4,
    non_retryable_error_types=["not_found", "target_gone", "generation_rejected"],
)
STEP_RETRY = RetryPolicy(initial_interval=timedelta(milliseconds=200), maximum_interval=timedelta(seconds=10))
# Preparing gathers evidence: after about a minute of failures the run fails as `evidence_unavailable`.
PREPARE_RETRY = RetryPolicy(
    initial_interval=timedelta(milliseconds=200), maximum_interval=timedelta(seconds=10), maximum_attempts=10
)
ACTION_TIMEOUT = timedelta(minutes=5)
CANCELLED_MESSAGE = "the run was cancelled; nothing more can be applied"
INTERNAL_ERROR_MESSAGE = "An unexpected error stopped the action; the worker log has the detail."


def cancelled(error: BaseException) -> bool:
    """Whether an error is this workflow's own cancellation reaching it (directly or through an activity)."""
    return isinstance(error, asyncio.CancelledError) or (
        isinstance(error, ActivityError) and isinstance(error.cause, CancelledError)
    )


def failure_of(error: ActivityError) -> tuple[str, str]:
    """The documented error code and a message fit for callers, for a failed activity."""
    cause = error.cause
    if isinstance(cause, ActivityTimeout):
        return "generation_timeout", "The action did not finish within its time limit on any attempt."
    kind = cause.type if isinstance(cause, ApplicationError) else None
    code = action_error_code(kind)
    if code == "internal_error":
        return code, INTERNAL_ERROR_MESSAGE
    return code, str(cause.message if isinstance(cause, ApplicationError) else error)


# Outside the sandbox: the sandbox re-executes this module (a dozen dataclasses) for every run, which cost
# the worker more CPU per run than the run's own activities. The workflow stays deterministic by
# construction (workflow.now, patched, activities by name; it imports only pure domain modules), and the
# replay tests run its histories, old and new, through `Replayer`.
@workflow.defn(name="EnhancementRunWorkflow", sandboxed=False)
class EnhancementRunWorkflow:
    """Runs the requested actions, then serves review-time actions and applies until the window ends."""

    @workflow.init
    def __init__(self, input: EnhancementRunInput) -> None:
        self.input = input
        self.state = input.state
        self.expired = False
        self.handled = 0
        self.initial_done = input.review_deadline is not None
        self.action_count = input.action_count
        # Review-time actions accepted and not finished: update id -> action identifier.
        self.reserved: dict[str, str] = {}
        # One change at a time once the run is reviewable: review-time actions and applies never interleave.
        self.lock = asyncio.Lock()
        # Set once the run's cancellation arrived: the actions in flight (of the run or of Update handlers) are
        # cancelled through these handles, in the order they started (a list: a set's order would differ on replay),
        # and handlers record nothing more.
        self.cancelling = False
        self.in_flight: list[workflow.ActivityHandle[Any]] = []

    @workflow.run
    async def run(self, input: EnhancementRunInput) -> str:
        try:
            return await self._run(input)
        except (asyncio.CancelledError, ActivityError) as error:
            if not cancelled(error):
                raise
            await self._cancel()
            raise asyncio.CancelledError() from None  # the workflow ends as cancelled, its state recorded

    async def _cancel(self) -> None:
        """Stop what is in flight, record the cancelled run (once: the activity is idempotent), answer handlers."""
        self.cancelling = True
        self.initial_done = True  # an Update waiting for the initial actions is answered, never left hanging
        self.state = "cancelled"  # validators refuse new Updates from here on
        for handle in list(self.in_flight):
            handle.cancel()
        state = await workflow.execute_activity(
            "enhancement_cancel_run",
            self.input.run_id,
            result_type=str,
            start_to_close_timeout=timedelta(seconds=30),
            retry_policy=STEP_RETRY,
        )
        await self._set_state(state)
        await workflow.wait_condition(workflow.all_handlers_finished)

    async def _run(self, input: EnhancementRunInput) -> str:
        deadline = input.review_deadline
        if deadline is None:
            settled = await (self._initial_actions() if workflow.patched(PATCH) else self._initial_actions_v1())
            self.initial_done = True
            if not settled:
                # An Update accepted meanwhile is answered (run_not_reviewable), never abandoned.
                await workflow.wait_condition(workflow.all_handlers_finished)
                return self.state
            deadline = workflow.now() + timedelta(seconds=input.review_window_seconds)
        remaining = (deadline - workflow.now()).total_seconds()
        try:
            await workflow.wait_condition(
                lambda: (
                    self.handled >= input.updates_before_continue_as_new
                    or workflow.info().is_continue_as_new_suggested()
                ),
                timeout=max(remaining, 0.001),
            )
        except TimeoutError:
            self.expired = True  # validators refuse new updates from here on
            await workflow.wait_condition(workflow.all_handlers_finished)
            await workflow.execute_activity(
                "enhancement_expire_run",
                input.run_id,
                start_to_close_timeout=timedelta(seconds=30),
                retry_policy=STEP_RETRY,
            )
            await self._set_state("expired")
            return self.state
        await workflow.wait_condition(workflow.all_handlers_finished)
        workflow.continue_as_new(
            EnhancementRunInput(
                input.run_id,
                input.workspace_id,
                input.target_id,
                input.review_window_seconds,
                deadline,
                self.state,
                self.action_count,
                input.updates_before_continue_as_new,
            )
        )

    async def _initial_actions(self) -> bool:
        """Prepare once, then every requested action concurrently; False when the run failed."""
        self._set_transient("running")
        # Asked before preparing, so its marker travels with the first workflow task's commands.
        in_one_activity = workflow.patched(ONE_ACTIVITY_PATCH)
        try:
            prepared: PreparedRun = await workflow.execute_local_activity(
                "enhancement_prepare_run",
                args=[self.input.run_id, self.input.review_window_seconds],
                result_type=PreparedRun,
                start_to_close_timeout=timedelta(seconds=30),
                retry_policy=PREPARE_RETRY,
                # Longer backoffs wait on a timer, so a worker asked to stop is not held by the retries.
                local_retry_threshold=timedelta(seconds=2),
            )
        except ActivityError as error:
            if cancelled(error):
                raise
            code, message = failure_of(error)
            await self._fail(RunFailure(self.input.run_id, "", code, message, True))
            return False
        self.action_count = prepared.action_count
        results: list[ActionResult | RunFailure]
        if not prepared.pending:
            results = []
        elif prepared.performed is not None:  # the result recorded in the marker decides, so replay agrees
            results = list(prepared.performed)
        elif in_one_activity:
            results = await self._perform_all(prepared.pending)
        else:
            results = list(
                await asyncio.gather(*(self._perform(self._request(request_id)) for request_id in prepared.pending))
            )
        failures = [r for r in results if isinstance(r, RunFailure)]
        if failures:
            await self._fail(failures[0])
            return False
        settled = [r.run_state for r in results if isinstance(r, ActionResult) and r.run_state != "running"]
        if settled:
            await self._set_state(settled[-1])
        else:  # nothing was pending (a restarted run), or its last commit was not this attempt's
            await self._finish()
        return True

    async def _initial_actions_v1(self) -> bool:
        """The earlier path, kept for histories recorded before the patch: one action after another."""
        await self._set_state("running")
        pending = await workflow.execute_activity(
            "enhancement_start_run",
            self.input.run_id,
            result_type=list[str],
            start_to_close_timeout=timedelta(seconds=30),
            retry_policy=STEP_RETRY,
        )
        async with self.lock:
            for request_id in pending:
                result = await self._perform(ActionRequest(self.input.run_id, request_id))
                if isinstance(result, RunFailure):
                    await self._fail(result)
                    return False
            await self._finish()
        return True

    def _request(self, request_id: str, update: RunActionUpdate | None = None) -> ActionRequest:
        return ActionRequest(
            self.input.run_id,
            request_id,
            action=update.action if update else None,
            instructions=update.instructions if update else "",
            review_window_seconds=self.input.review_window_seconds,
        )

    @workflow.update
    async def run_action(self, update: RunActionUpdate) -> str:
        """Perform one more action on the reviewable run; returns the run's state afterwards."""
        self.handled += 1
        update_id = self._update_id(update)
        if refusal := self._refusal(update.action, update_id):  # the validator's check, for a replay without it
            raise ApplicationError(refusal, type="invalid_action", non_retryable=True)
        self.reserved[update_id] = update.action
        performed = False
        try:
            await workflow.wait_condition(lambda: self.initial_done)
            async with self.lock:
                if reason := not_reviewable_reason(self.state, self.expired):
                    raise ApplicationError(reason, type="run_not_reviewable", non_retryable=True)
                performed = True
                if workflow.patched(PATCH):
                    self._set_transient("running")
                    result = await self._perform(self._request(update.request_id, update))
                    if self.cancelling:  # the cancellation recorded the run and its pending actions
                        raise ApplicationError(CANCELLED_MESSAGE, type="run_not_reviewable", non_retryable=True)
                    if isinstance(result, RunFailure):
                        result.fail_run = False
                        await self._fail(result)
                    elif result.run_state != "running":
                        await self._set_state(result.run_state)
                    else:
                        await self._finish()
                else:
                    await workflow.execute_activity(
                        "enhancement_begin_action",
                        NewActionRequest(self.input.run_id, update.request_id, update.action, update.instructions),
                        start_to_close_timeout=timedelta(seconds=30),
                        retry_policy=STEP_RETRY,
                    )
                    await self._set_state("running")
                    failure = await self._perform(ActionRequest(self.input.run_id, update.request_id))
                    if isinstance(failure, RunFailure):
                        failure.fail_run = False
                        await self._fail(failure)
                    else:
                        await self._finish()
        finally:
            del self.reserved[update_id]
            if performed:
                self.action_count += 1
        return self.state

    @run_action.validator
    def validate_run_action(self, update: RunActionUpdate) -> None:
        # A run still `running` is accepted: the handler waits for it to settle. Only a final or expired
        # run is refused here (an Update can arrive before the workflow has seen its last activity result).
        if update.action not in ACTIONS:
            raise ApplicationError(f"unknown action {update.action!r}", type="invalid_action")
        update_id = self._update_id(update)
        if refusal := self._refusal(update.action, update_id):
            raise ApplicationError(refusal, type="invalid_action")
        if self.expired or self.state in FINAL_STATES:
            raise ApplicationError(f"the run is {'expired' if self.expired else self.state}", type="run_not_reviewable")
        # Reserved here, not only in the handler: the validators of Updates arriving in one activation run
        # before any of their handlers. Replay runs no validators; the handler reserves the same entry then.
        self.reserved[update_id] = update.action

    def _update_id(self, update: RunActionUpdate) -> str:
        info = workflow.current_update_info()
        return info.id if info is not None else update.request_id

    def _refusal(self, action: str, update_id: str) -> str | None:
        """Why another review-time action cannot be accepted now (the create rules over the run's life)."""
        others = [a for key, a in self.reserved.items() if key != update_id]
        if action in others:
            return f"{action} is already pending on this run"
        if self.action_count + len(others) >= MAX_ACTIONS_PER_RUN:
            return f"a run takes at most {MAX_ACTIONS_PER_RUN} actions over its life"
        return None

    @workflow.update
    async def apply(self, update: ApplyUpdate) -> ApplyOutcome:
        """Apply selected drafts in one transactional activity; returns what it did or why not."""
        self.handled += 1
        await workflow.wait_condition(lambda: self.initial_done)
        async with self.lock:
            if reason := not_reviewable_reason(self.state, self.expired):
                raise ApplicationError(reason, type="run_not_reviewable", non_retryable=True)
            command = ApplyCommand(
                update.apply_id, self.input.run_id, update.draft_ids, update.expected_target_version, update.actor_id
            )
            if workflow.patched(PATCH):
                outcome: ApplyOutcome = await workflow.execute_activity(
                    "enhancement_apply_drafts",
                    command,
                    result_type=ApplyOutcome,
                    start_to_close_timeout=timedelta(seconds=30),
                    retry_policy=STEP_RETRY,
                )
            else:
                outcome = await workflow.execute_child_workflow(
                    ApplyDraftsWorkflow.run,
                    command,
                    id=update.apply_id,
                    search_attributes=workspace_attributes(self.input.workspace_id),
                )
            if outcome.ok and self.state == "ready_for_review":
                await self._set_state("applied")
        return outcome

    @apply.validator
    def validate_apply(self, update: ApplyUpdate) -> None:
        if self.expired or self.state in FINAL_STATES:
            raise ApplicationError(f"the run is {'expired' if self.expired else self.state}", type="run_not_reviewable")
        try:
            validate_draft_ids(update.draft_ids)
        except ValidationFailed as error:
            raise ApplicationError(error.detail, type="validation_failed") from None

    @workflow.query
    def current_state(self) -> str:
        """The state as this workflow knows it."""
        return self.state

    async def _perform(self, request: ActionRequest) -> ActionResult | RunFailure:
        handle = workflow.start_activity(
            "enhancement_perform_action",
            request,
            result_type=ActionResult,
            start_to_close_timeout=ACTION_TIMEOUT,
            heartbeat_timeout=timedelta(seconds=5),
            retry_policy=ACTION_RETRY,
        )
        self.in_flight.append(handle)
        try:
            result: ActionResult = await handle
            return result
        except ActivityError as error:
            if cancelled(error) and not self.cancelling:
                raise  # the run's own task was cancelled while it waited here
            code, message = failure_of(error)
            return RunFailure(self.input.run_id, request.request_id, code, message)
        finally:
            self.in_flight.remove(handle)

    async def _perform_all(self, request_ids: list[str]) -> list[ActionResult | RunFailure]:
        handle = workflow.start_activity(
            "enhancement_perform_actions",
            ActionsRequest(self.input.run_id, request_ids, self.input.review_window_seconds),
            result_type=list[ActionResult],
            start_to_close_timeout=ACTION_TIMEOUT,
            heartbeat_timeout=timedelta(seconds=5),
            retry_policy=ACTION_RETRY,
        )
        self.in_flight.append(handle)
        try:
            performed: list[ActionResult] = await handle
            return list(performed)
        except ActivityError as error:
            if cancelled(error):
                raise  # only the run's cancellation cancels its initial actions
            code, message = failure_of(error)
            cause = error.cause
            # The activity names the request that failed in its details (absent on a timeout).
            details = cause.details if isinstance(cause, ApplicationError) else ()
            request_id = str(details[0]) if details else ""
            return [RunFailure(self.input.run_id, request_id, code, message)]
        finally:
            self.in_flight.remove(handle)

    async def _fail(self, failure: RunFailure) -> None:
        state = await workflow.execute_activity(
            "enhancement_fail",
            failure,
            result_type=str,
            start_to_close_timeout=timedelta(seconds=30),
            retry_policy=STEP_RETRY,
        )
        await self._set_state(state)

    async def _finish(self) -> None:
        state = await workflow.execute_activity(
            "enhancement_finish_run",
            args=[self.input.run_id, self.input.review_window_seconds],
            result_type=str,
            start_to_close_timeout=timedelta(seconds=30),
            retry_policy=STEP_RETRY,
        )
        await self._set_state(state)

    async def _set_state(self, state: str) -> None:
        self.state = state
        workflow.upsert_search_attributes([STATE.value_set(state)])

    def _set_transient(self, state: str) -> None:
        # `GroundworkState` records settled states only: each upsert is a visibility write, and `running`
        # lasts a fraction of a second (the run resource and its operation show it).
        self.state = state


@workflow.defn(name="ApplyDraftsWorkflow", sandboxed=False)
class ApplyDraftsWorkflow:
    """One confirmed apply of a run recorded before the patch: a single activity, a single transaction."""

    @workflow.run
    async def run(self, command: ApplyCommand) -> ApplyOutcome:
        return await workflow.execute_activity(
            "enhancement_apply_drafts",
            command,
            result_type=ApplyOutcome,
            start_to_close_timeout=timedelta(seconds=30),
            retry_policy=STEP_RETRY,
        )
