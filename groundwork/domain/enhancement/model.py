"""Actions, states, limits and the value types of an enhancement run."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from groundwork.domain.errors import FieldError, GroundworkError, ValidationFailed

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
ARTIFACT_TYPES = (
    "requirements_trace",
    "design_note",
    "plan_outline",
    "test_matrix",
    "estimate_rationale",
    "risk_report",
    "evidence_digest",
)

REVIEWABLE_STATES = ("ready_for_review", "applied")
FINAL_STATES = ("failed", "expired")

MAX_ACTIONS = 8
MAX_INSTRUCTIONS = 4000
MAX_APPLY_DRAFTS = 50

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


class DraftNotEligible(GroundworkError):
    status = 422
    code = "draft_not_eligible"
    title = "Draft not eligible"

    def __init__(self, draft_ids: list[str], reasons: dict[str, str]) -> None:
        super().__init__(
            "Some drafts cannot be applied: " + "; ".join(f"{d}: {reasons[d]}" for d in draft_ids),
            extra={"draft_ids": draft_ids, "reasons": reasons},
        )


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
class DraftProposal:
    """A proposed value for one field, with the evidence behind it."""

    field: str
    proposed_value: Any
    confidence: float
    evidence_refs: tuple[EvidenceRef, ...]


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


def check_confirm(confirm: Any) -> None:
    """`confirm` must be exactly true on create, action and apply."""
    if confirm is not True:
        raise ConfirmationRequired("Set `confirm: true` to proceed.")


def validate_actions(actions: Any, path: str = "actions") -> list[str]:
    """1 to 8 known, distinct action identifiers."""
    if not isinstance(actions, list) or not actions:
        raise ValidationFailed("Name at least one action.", [FieldError(path, "must be a non-empty list")])
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
        raise ValidationFailed("Invalid draft ids.", [FieldError("draft_ids", "must be a non-empty list of ids")])
    if len(draft_ids) > MAX_APPLY_DRAFTS:
        raise ValidationFailed("Too many drafts.", [FieldError("draft_ids", f"at most {MAX_APPLY_DRAFTS}")])
    if len(set(draft_ids)) != len(draft_ids):
        raise ValidationFailed("Repeated draft ids.", [FieldError("draft_ids", "must not repeat a draft")])
    return list(draft_ids)


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
        elif expired or state == "expired":
            reasons[draft_id] = "the run's review window has ended"
        elif draft.applied:
            reasons[draft_id] = "already applied"
        elif draft.field in applied_fields:
            reasons[draft_id] = f"another draft for {draft.field} was already applied"
        elif draft.field in fields_in_request:
            reasons[draft_id] = f"{fields_in_request[draft.field]} in this request also sets {draft.field}"
        else:
            fields_in_request[draft.field] = draft_id
    return reasons


def apply_eligible(draft: DraftState, drafts: list[DraftState], state: str, expired: bool) -> bool:
    """The `applyEligible` flag of DESIGN.md."""
    if expired or state not in REVIEWABLE_STATES or draft.applied:
        return False
    return not any(d.applied and d.field == draft.field for d in drafts)


@dataclass(frozen=True)
class AllowedAction:
    id: str
    label: str
    required_scope: str


def allowed_actions(state: str, has_eligible_drafts: bool) -> list[AllowedAction]:
    """What a caller may do next with a run in `state`, each with the scope it needs."""
    allowed = [AllowedAction("read", "Read the run, its drafts and artifacts", SCOPE_READ)]
    if state in REVIEWABLE_STATES:
        allowed.append(AllowedAction("run_action", "Run another enhancement action", SCOPE_RUN))
        if has_eligible_drafts:
            allowed.append(AllowedAction("apply", "Apply selected drafts to the work item", SCOPE_APPLY))
    return allowed


@dataclass
class FieldDiff:
    """One line of the confirmation diff: what apply would change."""

    field: str
    current_value: Any
    proposed_value: Any
    draft_id: str
