"""Enhancement run workflows: one run per workflow (id = run id), applies as child workflows.

`EnhancementRunWorkflow` performs the requested actions, then stays open for the review window and
serves two Updates, `run_action` and `apply`, whose validators reject what is not allowed without
touching history. At the end of the window it expires the run. `ApplyDraftsWorkflow` (id = the
apply id) runs the one transactional apply activity.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from temporalio import workflow
from temporalio.common import RetryPolicy, SearchAttributeKey, SearchAttributePair, TypedSearchAttributes
from temporalio.exceptions import ActivityError, ApplicationError

with workflow.unsafe.imports_passed_through():
    from groundwork.domain.enhancement.model import (
        ACTIONS,
        FINAL_STATES,
        not_reviewable_reason,
        validate_draft_ids,
    )
    from groundwork.domain.errors import ValidationFailed

WORKSPACE = SearchAttributeKey.for_keyword("GroundworkWorkspace")
TARGET = SearchAttributeKey.for_keyword("GroundworkTarget")
STATE = SearchAttributeKey.for_keyword("GroundworkState")

ACTION_RETRY = RetryPolicy(
    initial_interval=timedelta(seconds=1),
    maximum_attempts=4,
    non_retryable_error_types=["not_found", "target_gone", "generation_rejected"],
)
STEP_RETRY = RetryPolicy(initial_interval=timedelta(milliseconds=200), maximum_interval=timedelta(seconds=10))
# Past this many handled updates, continue as new so the history stays small.
UPDATES_BEFORE_CONTINUE_AS_NEW = 200


def search_attributes(workspace_id: str, target_id: str, state: str) -> TypedSearchAttributes:
    """The attributes operators filter runs by in the Temporal UI and `temporal workflow list`."""
    return TypedSearchAttributes(
        [
            SearchAttributePair(WORKSPACE, workspace_id),
            SearchAttributePair(TARGET, target_id),
            SearchAttributePair(STATE, state),
        ]
    )


@dataclass
class EnhancementRunInput:
    run_id: str
    workspace_id: str
    target_id: str
    review_window_seconds: int
    # Set when the workflow continues as new: the initial actions are done and the window has an end.
    review_deadline: datetime | None = None
    state: str = "queued"


@dataclass
class RunActionUpdate:
    request_id: str
    action: str
    instructions: str


@dataclass
class ApplyUpdate:
    apply_id: str
    draft_ids: list[str]
    expected_target_version: str
    actor_id: str


# The activities' inputs and outputs: the workflow calls its activities by name, and they import these.


@dataclass
class ActionRequest:
    """One action of a run to perform (identified by the request that asked for it)."""

    run_id: str
    request_id: str


@dataclass
class ActionResult:
    action: str
    draft_ids: list[str]
    artifact_ids: list[str]


@dataclass
class NewActionRequest:
    """An action asked for on a reviewable run."""

    run_id: str
    request_id: str
    action: str
    instructions: str


@dataclass
class RunFailure:
    run_id: str
    request_id: str
    error_code: str
    message: str
    # A failed extra action leaves a reviewable run reviewable; a failed initial action fails the run.
    fail_run: bool = True


@dataclass
class ApplyCommand:
    """An apply confirmed by the caller, as the run workflow hands it to `ApplyDraftsWorkflow`."""

    apply_id: str
    run_id: str
    draft_ids: list[str]
    expected_target_version: str
    actor_id: str


@dataclass
class ApplyOutcome:
    """What an apply did, or why it changed nothing (the result of the `apply` Update)."""

    ok: bool
    code: str | None = None
    current_version: str | None = None
    target_version: str | None = None
    applied_draft_ids: list[str] = field(default_factory=list)
    ineligible: dict[str, str] = field(default_factory=dict)


def _action_error_code(error: ActivityError) -> str:
    cause = error.cause
    if isinstance(cause, ApplicationError) and cause.type:
        return cause.type
    return "generation_failed"


@workflow.defn(name="EnhancementRunWorkflow")
class EnhancementRunWorkflow:
    """Runs the requested actions, then serves review-time actions and applies until the window ends."""

    @workflow.init
    def __init__(self, input: EnhancementRunInput) -> None:
        self.input = input
        self.state = input.state
        self.expired = False
        self.handled = 0
        # One action at a time: the initial actions and review-time actions never interleave.
        self.lock = asyncio.Lock()

    @workflow.run
    async def run(self, input: EnhancementRunInput) -> str:
        deadline = input.review_deadline
        if deadline is None:
            await self._set_state("running")
            pending = await workflow.execute_activity(
                "enhancement_start_run",
                input.run_id,
                result_type=list[str],
                start_to_close_timeout=timedelta(seconds=30),
                retry_policy=STEP_RETRY,
            )
            async with self.lock:
                for request_id in pending:
                    if not await self._perform(request_id, fail_run=True):
                        return self.state
                await self._finish()
            deadline = workflow.now() + timedelta(seconds=input.review_window_seconds)
        remaining = (deadline - workflow.now()).total_seconds()
        try:
            await workflow.wait_condition(
                lambda: (
                    self.handled >= UPDATES_BEFORE_CONTINUE_AS_NEW or workflow.info().is_continue_as_new_suggested()
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
            )
        )

    @workflow.update
    async def run_action(self, update: RunActionUpdate) -> str:
        """Perform one more action on the reviewable run; returns the run's state afterwards."""
        self.handled += 1
        async with self.lock:
            if reason := not_reviewable_reason(self.state, self.expired):
                raise ApplicationError(reason, type="run_not_reviewable")
            await workflow.execute_activity(
                "enhancement_begin_action",
                NewActionRequest(self.input.run_id, update.request_id, update.action, update.instructions),
                start_to_close_timeout=timedelta(seconds=30),
                retry_policy=STEP_RETRY,
            )
            await self._set_state("running")
            if await self._perform(update.request_id, fail_run=False):
                await self._finish()
        return self.state

    @run_action.validator
    def validate_run_action(self, update: RunActionUpdate) -> None:
        # A run still `running` is accepted: the handler waits for it to settle. Only a final or expired
        # run is refused here (an Update can arrive before the workflow has seen its last activity result).
        if update.action not in ACTIONS:
            raise ValueError(f"invalid_action: unknown action {update.action!r}")
        if self.expired or self.state in FINAL_STATES:
            raise ValueError(f"run_not_reviewable: the run is {self.state}")

    @workflow.update
    async def apply(self, update: ApplyUpdate) -> ApplyOutcome:
        """Apply selected drafts through `ApplyDraftsWorkflow`; returns what it did or why not."""
        self.handled += 1
        await workflow.wait_condition(lambda: self.state not in ("queued", "running"))
        if reason := not_reviewable_reason(self.state, self.expired):
            raise ApplicationError(reason, type="run_not_reviewable")
        outcome: ApplyOutcome = await workflow.execute_child_workflow(
            ApplyDraftsWorkflow.run,
            ApplyCommand(
                update.apply_id, self.input.run_id, update.draft_ids, update.expected_target_version, update.actor_id
            ),
            id=update.apply_id,
        )
        if outcome.ok and self.state == "ready_for_review":
            await self._set_state("applied")
        return outcome

    @apply.validator
    def validate_apply(self, update: ApplyUpdate) -> None:
        if self.expired or self.state in FINAL_STATES:
            raise ValueError(f"run_not_reviewable: the run is {self.state}")
        try:
            validate_draft_ids(update.draft_ids)
        except ValidationFailed as error:
            raise ValueError(f"validation_failed: {error.detail}") from None

    @workflow.query
    def current_state(self) -> str:
        """The state as this workflow knows it."""
        return self.state

    async def _perform(self, request_id: str, *, fail_run: bool) -> bool:
        try:
            await workflow.execute_activity(
                "enhancement_perform_action",
                ActionRequest(self.input.run_id, request_id),
                start_to_close_timeout=timedelta(minutes=5),
                heartbeat_timeout=timedelta(seconds=5),
                retry_policy=ACTION_RETRY,
            )
            return True
        except ActivityError as error:
            state = await workflow.execute_activity(
                "enhancement_fail",
                RunFailure(
                    self.input.run_id, request_id, _action_error_code(error), str(error.cause or error), fail_run
                ),
                result_type=str,
                start_to_close_timeout=timedelta(seconds=30),
                retry_policy=STEP_RETRY,
            )
            await self._set_state(state)
            return False

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


@workflow.defn(name="ApplyDraftsWorkflow")
class ApplyDraftsWorkflow:
    """One confirmed apply: a single activity, a single PostgreSQL transaction."""

    @workflow.run
    async def run(self, command: ApplyCommand) -> ApplyOutcome:
        return await workflow.execute_activity(
            "enhancement_apply_drafts",
            command,
            result_type=ApplyOutcome,
            start_to_close_timeout=timedelta(seconds=30),
            retry_policy=STEP_RETRY,
        )
