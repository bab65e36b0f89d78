"""Actions, states, limits and the value types of an enhancement run."""

from __future__ import annotations

import base64
import hashlib
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from groundwork.domain.errors import FieldError, GroundworkError, ValidationFailed
from groundwork.domain.work_items import FIELD_NAMES, validate_fields

# Action identifier -> the work item field its drafts propose a value for.
ACTION_FIELDS: dict[str, str] = {
    "requirements": "requirements",
    "description": "description",
    "design": "design_notes",
    "implementation_plan": "implementation_plan",
    "acceptance_criteria": "acceptance_criteria",
    "test_plan": "test_plan",
    "estimate": "estimate",
    "risk_check": "risks",
}
ACTIONS = tuple(ACTION_FIELDS)
DRAFT_FIELDS = tuple(dict.fromkeys(ACTION_FIELDS.values()))
ARTIFACT_TYPES = (
    "requirements_trace",
    "design_note",
    "plan_outline",
    "test_matrix",
    "estimate_rationale",
    "risk_report",
    "evidence_digest",
)

RUN_STATES = ("queued", "running", "ready_for_review", "applied", "failed", "expired", "cancelled")
REVIEWABLE_STATES = ("ready_for_review", "applied")
FINAL_STATES = ("failed", "expired", "cancelled")
# A run in one of these may be cancelled (queued and running ones stop their pending actions).
CANCELLABLE_STATES = ("queued", "running", "ready_for_review", "applied")

MAX_ACTIONS = 8
# Over its whole life (create and review-time actions together): bounds the run resource and its history.
MAX_ACTIONS_PER_RUN = 32
MAX_INSTRUCTIONS = 4000
MAX_APPLY_DRAFTS = 50
MAX_REJECTION_REASON = 500

# Every failure of an action or a run carries one of these codes (the `failed` event's `error_code`, the
# action's `errorCode`, the run's `error.code`). Anything else a worker raises is recorded as `internal_error`.
ACTION_ERROR_CODES: dict[str, str] = {
    "generation_failed": "the draft generator failed on every attempt (endpoint errors, unusable answers)",
    "generation_rejected": "the generation endpoint refused the request (4xx); retrying cannot help",
    "generation_timeout": "the action did not finish within its time limit on any attempt",
    "evidence_unavailable": "the run's evidence could not be gathered (search index or database unavailable)",
    "target_gone": "the target work item was deleted while the run was open",
    "workflow_closed": "the run's workflow closed before it ran (for example, terminated by an operator)",
    "workflow_terminated": "the run's workflow was terminated outside Groundwork (an operator, `temporal workflow "
    "terminate`)",
    "workflow_timed_out": "the run's workflow reached a Temporal timeout before it finished the run",
    "workflow_failed": "the run's workflow failed outside the code that records a run's failures",
    "cancelled": "a caller cancelled the run: its pending actions stopped and nothing can be applied",
    "internal_error": "an unexpected failure inside Groundwork; the worker log has the detail",
}

SCOPE_RUN = "work-item-enhance:run"
SCOPE_READ = "work-item-enhance:read"
SCOPE_APPLY = "work-item-enhance:apply"
SCOPE_CODE_CONTEXT = "work-item-enhance:code-context"


class ConfirmationRequired(GroundworkError):
    status = 422
    code = "confirmation_required"
    title = "Confirmation required"


class InvalidAction(GroundworkError):
    status = 422
    code = "invalid_action"
    title = "Invalid action"


class RunNotReviewable(GroundworkError):
    status = 409
    code = "run_not_reviewable"
    title = "Run not reviewable"


class _DraftsRefused(GroundworkError):
    """An apply refused for some of its drafts: which, and why each (`draft_ids`, `reasons`)."""

    status = 422
    lead = ""

    def __init__(self, draft_ids: list[str], reasons: dict[str, str]) -> None:
        super().__init__(
            self.lead + "; ".join(f"{d}: {reasons[d]}" for d in draft_ids),
            extra={"draft_ids": draft_ids, "reasons": reasons},
        )


class DraftNotEligible(_DraftsRefused):
    code = "draft_not_eligible"
    title = "Draft not eligible"
    lead = "Some drafts cannot be applied: "


class DraftRejected(_DraftsRefused):
    code = "draft_rejected"
    title = "Draft rejected"
    lead = "Rejected drafts are never applied: "


class DraftNotRejectable(GroundworkError):
    status = 409
    code = "draft_not_rejectable"
    title = "Draft not rejectable"


class RunNotCancellable(GroundworkError):
    status = 409
    code = "run_not_cancellable"
    title = "Run not cancellable"


class TargetVersionMismatch(GroundworkError):
    status = 409
    code = "target_version_mismatch"
    title = "Target version mismatch"

    def __init__(self, current_version: str) -> None:
        super().__init__(
            "The work item changed since you read it; review the drafts against the current version.",
            extra={"current_version": current_version},
        )


@dataclass(frozen=True)
class EvidenceRef:
    """A pointer to what a statement came from."""

    kind: str
    id: str

    def as_dict(self) -> dict[str, str]:
        """The wire form `{kind, id}`."""
        return {"kind": self.kind, "id": self.id}


@dataclass(frozen=True)
class DraftStatement:
    """One statement of a draft's proposed value, with the evidence it was taken from and its relevance (0-1)."""

    text: str
    evidence_refs: tuple[EvidenceRef, ...]
    relevance: float

    def as_dict(self) -> dict[str, Any]:
        """The wire form `{text, relevance, evidenceRefs}`."""
        return {
            "text": self.text,
            "relevance": self.relevance,
            "evidenceRefs": [r.as_dict() for r in self.evidence_refs],
        }


@dataclass(frozen=True)
class DraftProposal:
    """A proposed value for one field, with the evidence behind it, statement by statement."""

    field: str
    proposed_value: Any
    confidence: float
    evidence_refs: tuple[EvidenceRef, ...]
    statements: tuple[DraftStatement, ...] = ()


@dataclass(frozen=True)
class ArtifactProposal:
    """Review material: a titled summary with a Markdown body and its evidence."""

    type: str
    title: str
    summary: str
    body: str
    evidence_refs: tuple[EvidenceRef, ...]


@dataclass(frozen=True)
class ActionOutput:
    """Everything one action produced."""

    drafts: tuple[DraftProposal, ...]
    artifacts: tuple[ArtifactProposal, ...]


@dataclass(frozen=True)
class DraftState:
    """What eligibility needs to know of a draft."""

    id: str
    field: str
    applied: bool
    # Why the proposed value could not be written by a PATCH of the work item (None: it could).
    value_problem: str | None = None
    # The reason a reviewer gave when rejecting it (None: not rejected).
    rejection_reason: str | None = None


def action_error_code(kind: str | None) -> str:
    """The documented error code for a failure of this kind; anything unknown is `internal_error`."""
    return kind if kind in ACTION_ERROR_CODES else "internal_error"


def draft_value_problem(field: str, value: Any) -> str | None:
    """Why applying `value` to `field` would be refused by the work item rules (the same as PATCH), if it would."""
    if field not in FIELD_NAMES:
        return f"{field} is not a field of a work item"
    if value is None:
        return "the proposed value is empty"
    errors = validate_fields({field: value})
    return f"the proposed value {errors[0].message}" if errors else None


def derive_request_id(prefix: str, api_key_id: str, idempotency_key: str, *parts: str) -> str:
    """A stable id for what one idempotent request asks for, so a retried request names the same Update.

    Derived from the API key, the Idempotency-Key and the request itself (so a key reused for another
    request after its 24 h retention names a different one); shaped like the other ids (prefix + 26 chars).
    """
    digest = hashlib.sha256("\x1f".join((api_key_id, idempotency_key, *parts)).encode()).digest()
    return f"{prefix}_{base64.b32encode(digest).decode().rstrip('=')[:26]}"


def check_confirm(confirm: Any) -> None:
    """`confirm` must be exactly true on create, action and apply."""
    if confirm is not True:
        raise ConfirmationRequired("Set `confirm: true` to proceed.")


def validate_actions(actions: Any, path: str = "actions") -> list[str]:
    """1 to 8 known, distinct action identifiers."""
    if not isinstance(actions, list) or not actions:
        raise ValidationFailed("Name at least one action.", [FieldError(path, "must name at least one action")])
    errors: list[FieldError] = []
    for index, action in enumerate(actions):
        if action not in ACTION_FIELDS:
            errors.append(FieldError(f"{path}[{index}]", f"unknown action; allowed: {', '.join(ACTIONS)}"))
    if len(actions) > MAX_ACTIONS:
        errors.append(FieldError(path, f"at most {MAX_ACTIONS} actions"))
    if len(set(map(str, actions))) != len(actions):
        errors.append(FieldError(path, "must not repeat an action"))
    if errors:
        raise InvalidAction("The actions are not valid.", extra={"errors": [e.__dict__ for e in errors]})
    return [str(a) for a in actions]


def validate_instructions(instructions: Any) -> str:
    """Instructions are optional text of at most 4,000 characters."""
    if instructions is None:
        return ""
    if not isinstance(instructions, str) or len(instructions) > MAX_INSTRUCTIONS:
        raise ValidationFailed(
            "Invalid instructions.",
            [FieldError("instructions", f"must be a string of at most {MAX_INSTRUCTIONS} characters")],
        )
    return instructions


def review_expired(state: str, review_expires_at: datetime | None, now: datetime) -> bool:
    """Whether a run's review window has ended: its state says so, or its deadline has passed."""
    return state == "expired" or (review_expires_at is not None and review_expires_at <= now)


def not_reviewable_reason(state: str, expired: bool) -> str | None:
    """Why a run in `state` takes no review-time action or apply now; None when it does."""
    if expired:
        return "the run's review window has ended; its drafts can no longer be applied"
    if state not in REVIEWABLE_STATES:
        return f"the run is {state}; only a run ready for review takes actions and applies"
    return None


def state_after_action(has_applies: bool) -> str:
    """Where a run goes when an action settles: back to `applied` once anything was applied."""
    return "applied" if has_applies else "ready_for_review"


def validate_draft_ids(draft_ids: Any) -> list[str]:
    """1 to 50 distinct draft ids."""
    if not isinstance(draft_ids, list) or not draft_ids or not all(isinstance(d, str) for d in draft_ids):
        raise ValidationFailed(
            "Invalid draft ids.", [FieldError("draft_ids", f"must be an array of 1 to {MAX_APPLY_DRAFTS} draft ids")]
        )
    if len(draft_ids) > MAX_APPLY_DRAFTS:
        raise ValidationFailed("Too many drafts.", [FieldError("draft_ids", f"at most {MAX_APPLY_DRAFTS}")])
    if len(set(draft_ids)) != len(draft_ids):
        raise ValidationFailed("Repeated draft ids.", [FieldError("draft_ids", "must not repeat a draft")])
    return list(draft_ids)


def validate_rejection_reason(reason: Any) -> str:
    """A rejection's reason: 1 to 500 characters, not only spaces."""
    if not isinstance(reason, str) or not reason.strip() or len(reason) > MAX_REJECTION_REASON:
        raise ValidationFailed(
            "Invalid reason.", [FieldError("reason", f"must be text of 1 to {MAX_REJECTION_REASON} characters")]
        )
    return reason


def rejected_among(requested: list[str], drafts: dict[str, DraftState]) -> dict[str, str]:
    """The requested drafts a reviewer rejected, with why (an apply naming any of them is refused)."""
    return {
        d: f"rejected: {drafts[d].rejection_reason}"
        for d in requested
        if d in drafts and drafts[d].rejection_reason is not None
    }


def not_rejectable_reason(draft: DraftState) -> str | None:
    """Why a draft cannot be rejected (None when it can): an applied draft stays applied, a rejection stands."""
    if draft.applied:
        return "the draft was already applied; an applied draft cannot be rejected"
    if draft.rejection_reason is not None:
        return "the draft was already rejected"
    return None


def not_cancellable_reason(state: str, expired: bool) -> str | None:
    """Why a run in `state` cannot be cancelled (None when it can)."""
    if expired or state == "expired":
        return "the run's review window has ended; there is nothing left to cancel"
    if state not in CANCELLABLE_STATES:
        return f"the run is {state} already; only a queued, running or reviewable run can be cancelled"
    return None


def check_new_action(action: Any, pending: list[str], total: int) -> str:
    """A review-time action obeys the create rules over the run's life: known, not already pending, under the cap."""
    [checked] = validate_actions([action], path="action")
    if checked in pending:
        raise InvalidAction(
            f"{checked} is already pending on this run; wait for it to finish before asking again.",
            extra={"errors": [{"path": "action", "message": "is already pending on this run"}]},
        )
    if total >= MAX_ACTIONS_PER_RUN:
        raise InvalidAction(
            f"A run takes at most {MAX_ACTIONS_PER_RUN} actions over its life; start a new run.",
            extra={"errors": [{"path": "action", "message": f"the run already has {total} actions"}]},
        )
    return checked


def _ineligible_reason(draft: DraftState, applied_fields: set[str], state: str, expired: bool) -> str | None:
    if expired or state == "expired":
        return "the run's review window has ended"
    if draft.applied:
        return "already applied"
    if draft.rejection_reason is not None:
        return f"rejected: {draft.rejection_reason}"
    if draft.field in applied_fields:
        return f"another draft for {draft.field} was already applied"
    return draft.value_problem


def draft_ineligibility(
    requested: list[str], drafts: dict[str, DraftState], state: str, expired: bool
) -> dict[str, str]:
    """Why each requested draft cannot be applied (empty when all can)."""
    reasons: dict[str, str] = {}
    applied_fields = {d.field for d in drafts.values() if d.applied}
    fields_in_request: dict[str, str] = {}
    for draft_id in requested:
        draft = drafts.get(draft_id)
        if draft is None:
            reasons[draft_id] = "not a draft of this run"
        elif reason := _ineligible_reason(draft, applied_fields, state, expired):
            reasons[draft_id] = reason
        elif draft.field in fields_in_request:
            reasons[draft_id] = f"{fields_in_request[draft.field]} in this request also sets {draft.field}"
        else:
            fields_in_request[draft.field] = draft_id
    return reasons


def apply_ineligible_reason(draft: DraftState, drafts: list[DraftState], state: str, expired: bool) -> str | None:
    """Why a draft is not `applyEligible` now (None when it is)."""
    if not expired and state not in REVIEWABLE_STATES and state != "expired":
        return f"the run is {state}; drafts are applied once it is ready for review"
    return _ineligible_reason(draft, {d.field for d in drafts if d.applied}, state, expired)


def apply_eligible(draft: DraftState, drafts: list[DraftState], state: str, expired: bool) -> bool:
    """The `applyEligible` flag of DESIGN.md, plus: the proposed value is one a PATCH would accept."""
    return apply_ineligible_reason(draft, drafts, state, expired) is None


@dataclass(frozen=True)
class AllowedAction:
    id: str
    label: str
    required_scope: str


@dataclass(frozen=True)
class CallerRights:
    """What the caller's key and role allow on a run's project."""

    can_read: bool
    can_run: bool
    can_apply: bool  # the apply scope and a role that may write the project's work items

    @classmethod
    def everything(cls) -> CallerRights:
        return cls(True, True, True)


def allowed_actions(
    state: str, has_eligible_drafts: bool, rights: CallerRights | None = None, action_count: int = 0
) -> list[AllowedAction]:
    """What this caller may do next with a run in `state`, each with the scope it needs."""
    rights = rights or CallerRights.everything()
    allowed = []
    if rights.can_read:
        allowed.append(AllowedAction("read", "Read the run, its drafts and artifacts", SCOPE_READ))
    if state in REVIEWABLE_STATES:
        if rights.can_run and action_count < MAX_ACTIONS_PER_RUN:
            allowed.append(AllowedAction("run_action", "Run another enhancement action", SCOPE_RUN))
        if has_eligible_drafts and rights.can_apply:
            allowed.append(AllowedAction("apply", "Apply selected drafts to the work item", SCOPE_APPLY))
    return allowed


@dataclass
class FieldDiff:
    """One line of the confirmation diff: what apply would change."""

    field: str
    current_value: Any
    proposed_value: Any
    draft_id: str
