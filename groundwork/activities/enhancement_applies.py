"""The apply activity of enhancement runs: the only write of a run to its work item, in one transaction.

The work item is locked, its version checked against the one the reviewer confirmed, the chosen drafts'
fields written with the work item's history, the drafts marked applied, the apply recorded and the run's
`applied` event appended, all in one commit. A retry after that commit finds the apply and answers it again.
"""

from __future__ import annotations

from datetime import UTC, datetime

from temporalio import activity

from groundwork.domain.enhancement.model import (
    REVIEWABLE_STATES,
    DraftState,
    draft_ineligibility,
    rejected_among,
    review_expired,
)
from groundwork.domain.times import format_timestamp
from groundwork.domain.work_items import parse_version
from groundwork.persistence import db
from groundwork.persistence.repositories import work_items as work_item_repo
from groundwork.persistence.repositories.enhancement import applies, outputs, runs
from groundwork.workflows.enhancement_contract import ApplyCommand, ApplyOutcome


@activity.defn(name="enhancement_apply_drafts")
async def apply_drafts(command: ApplyCommand) -> ApplyOutcome:
    """In one transaction: lock the work item, check the version, write the fields, record it all."""
    async with db.transaction():
        earlier = await applies.get_apply(command.apply_id)
        if earlier is not None:  # a retry after the commit
            return ApplyOutcome(
                True,
                target_version=format_timestamp(earlier.target_version),
                applied_draft_ids=list(earlier.draft_ids),
            )
        run = await runs.get_run_by_id(command.run_id, for_update=True)
        assert run is not None
        item = await work_item_repo.get_work_item(run.workspace_id, run.target_id, for_update=True)
        if item is None:
            return ApplyOutcome(False, code="not_found")
        if run.state not in REVIEWABLE_STATES:  # cancelled (or failed by the sweep) since the Update was accepted
            return ApplyOutcome(False, code="run_not_reviewable", current_version=format_timestamp(item.version))
        expired = review_expired(run.state, run.review_expires_at, datetime.now(UTC))
        # The version first: of two applies racing on one version, the loser always gets 409.
        if item.version != parse_version(command.expected_target_version):
            return ApplyOutcome(False, code="target_version_mismatch", current_version=format_timestamp(item.version))
        all_drafts = await outputs.list_drafts(command.run_id, for_update=True)
        states: dict[str, DraftState] = {d.id: d.state() for d in all_drafts}
        if rejected := rejected_among(command.draft_ids, states):
            return ApplyOutcome(
                False, code="draft_rejected", ineligible=rejected, current_version=format_timestamp(item.version)
            )
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
        await outputs.mark_drafts_applied(command.draft_ids, command.apply_id)
        await applies.insert_apply(
            apply_id=command.apply_id,
            run_id=run.id,
            work_item_id=item.id,
            draft_ids=command.draft_ids,
            expected_target_version=item.version,
            target_version=updated.version,
            actor_id=command.actor_id,
            changes=[applies.FieldChange(d.field, d.id, item.fields.get(d.field), d.proposed_value) for d in chosen],
        )
        await runs.set_run_state(run.id, "applied", from_states=("ready_for_review", "applied"))
        now = datetime.now(UTC)
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
        return ApplyOutcome(True, target_version=format_timestamp(updated.version), applied_draft_ids=command.draft_ids)
