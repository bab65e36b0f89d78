"""Applying drafts: the diff to confirm, then the confirmed apply, guarded by the target version (an Update of
the run's workflow)."""

from __future__ import annotations

from typing import Any

from groundwork.domain.enhancement.model import (
    ConfirmationRequired,
    DraftNotEligible,
    DraftRejected,
    FieldDiff,
    RunNotReviewable,
    TargetVersionMismatch,
    draft_ineligibility,
    rejected_among,
    validate_draft_ids,
)
from groundwork.domain.errors import (
    FieldError,
    NotFound,
    PermissionDenied,
    ValidationFailed,
)
from groundwork.domain.tenancy.principals import Principal
from groundwork.domain.work_items import format_version, parse_version
from groundwork.persistence.repositories import work_items as work_item_repo
from groundwork.persistence.repositories.enhancement import runs
from groundwork.services.enhancement.run_updates import start_update, update_id_for, update_result
from groundwork.services.enhancement.run_views import RunView, check_reviewable, load_run, reload_run
from groundwork.services.tenancy import project_access
from groundwork.workflows.enhancement import EnhancementRunWorkflow
from groundwork.workflows.enhancement_contract import ApplyOutcome, ApplyUpdate

# How long an apply waits for its outcome before answering 202 with the operation.
APPLY_WAIT_SECONDS = 10.0


async def check_apply_permission(principal: Principal, run: runs.RunRow) -> None:
    """Refuse (403) unless the caller's role may write the run's project's work items."""
    permissions = await project_access.project_permissions(principal, run.project_id) or frozenset()
    if "work_items:write" not in permissions:
        raise PermissionDenied("Your role on this project does not allow changing its work items.", "work_items:write")


async def prepare_apply(principal: Principal, run_id: str, draft_ids: Any) -> tuple[list[FieldDiff], str]:
    """The field-level diff an apply of `draft_ids` would make, and the version to confirm against."""
    ids = validate_draft_ids(draft_ids)
    view = await load_run(principal, run_id)
    check_reviewable(view.run)
    states = {d.id: d.state() for d in view.drafts}
    if rejected := rejected_among(ids, states):
        raise DraftRejected(list(rejected), rejected)
    reasons = draft_ineligibility(ids, states, view.run.state, view.expired)
    if reasons:
        raise DraftNotEligible(list(reasons), reasons)
    item = await work_item_repo.get_work_item(principal.workspace_id, view.run.target_id)
    assert item is not None
    by_id = {d.id: d for d in view.drafts}
    diff = [FieldDiff(by_id[i].field, item.fields.get(by_id[i].field), by_id[i].proposed_value, i) for i in ids]
    return diff, format_version(item.version)


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
        await check_apply_permission(principal, view.run)
    check_reviewable(view.run)
    if rejected := rejected_among(ids, {d.id: d.state() for d in view.drafts}):
        raise DraftRejected(list(rejected), rejected)
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
    apply_id = update_id_for("apply", principal, idempotency_key, run_id, ",".join(ids), expected_target_version)
    update = await start_update(
        run_id,
        EnhancementRunWorkflow.apply,
        ApplyUpdate(apply_id, ids, expected_target_version, principal.id),
        apply_id,
    )
    finished, outcome = await update_result(update, APPLY_WAIT_SECONDS)
    if finished:
        _raise_for(outcome)
    return await reload_run(principal, view.run), finished


def _raise_for(outcome: ApplyOutcome) -> None:
    if outcome.ok:
        return
    if outcome.code == "target_version_mismatch":
        raise TargetVersionMismatch(outcome.current_version or "")
    if outcome.code == "draft_rejected":
        raise DraftRejected(list(outcome.ineligible), outcome.ineligible)
    if outcome.code == "run_not_reviewable":
        raise RunNotReviewable("The run was cancelled or failed before the apply ran; nothing was applied.")
    if outcome.code == "draft_not_eligible":
        raise DraftNotEligible(list(outcome.ineligible), outcome.ineligible)
    raise NotFound("The target work item no longer exists.")
