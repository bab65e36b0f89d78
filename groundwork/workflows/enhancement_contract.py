"""The data contract of enhancement runs: the workflow's input, its Updates, and its activities' requests and results.

Dataclasses only (and the run's search attributes): the API, the activities and the workflow import them from here,
so none of them loads another's code, and the payloads a history holds are defined in one place.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

from temporalio.common import SearchAttributePair, TypedSearchAttributes

from groundwork.workflows.search_attributes import STATE, TARGET, WORKSPACE

# Past this many handled updates, a run continues as new so its history stays small.
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
    # Actions requested on the run so far (carried across continue-as-new for the per-run cap).
    action_count: int = 0
    updates_before_continue_as_new: int = UPDATES_BEFORE_CONTINUE_AS_NEW


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
class PreparedRun:
    """A run moved to running with its evidence stored: the action requests still to perform."""

    pending: list[str]
    action_count: int
    # What the pending actions produced when the first step performed them too (an in-process generator);
    # None leaves them to `enhancement_perform_actions`, as in every history recorded before this field.
    performed: list[ActionResult] | None = None


@dataclass
class ActionRequest:
    """One action of a run to perform (identified by the request that asked for it)."""

    run_id: str
    request_id: str
    # Set for a review-time action: the activity records the request (once) before performing it.
    action: str | None = None
    instructions: str = ""
    # Set by runs with the patch: the commit that completes the last pending action finishes the run.
    review_window_seconds: int | None = None


@dataclass
class ActionsRequest:
    """The initial actions of a run, performed together in one activity (runs with `ONE_ACTIVITY_PATCH`)."""

    run_id: str
    request_ids: list[str]
    review_window_seconds: int


@dataclass
class ActionResult:
    action: str
    draft_ids: list[str]
    artifact_ids: list[str]
    # The run's state after the commit: `ready_for_review`/`applied` once the last pending action completed.
    run_state: str = "running"


@dataclass
class NewActionRequest:
    """An action asked for on a reviewable run (the earlier, three-activity path)."""

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
    """An apply confirmed by the caller, as the run workflow hands it to its apply activity."""

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
