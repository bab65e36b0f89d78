"""Rejecting a draft: it is never applied afterwards, shows who rejected it, when and why, and is counted.

A rejection is one transaction on PostgreSQL (no Update of the run's workflow): it holds the run's row lock, as the
apply activity does, so of a rejection and an apply of the same draft exactly one happens first and the other sees it.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from groundwork.domain.enhancement.model import (
    DraftNotRejectable,
    check_confirm,
    not_rejectable_reason,
    validate_rejection_reason,
)
from groundwork.domain.errors import NotFound
from groundwork.domain.tenancy.principals import Principal
from groundwork.domain.times import format_timestamp
from groundwork.persistence import db
from groundwork.persistence.repositories.enhancement import outputs, runs
from groundwork.platform.observability.metrics import ENHANCEMENT_DRAFT_REJECTIONS
from groundwork.services.enhancement.applies import check_apply_permission
from groundwork.services.enhancement.run_views import RunView, load_run, reload_run


async def reject_draft(principal: Principal, run_id: str, draft_id: str, reason: Any, confirm: Any) -> RunView:
    """Reject one unapplied draft of a visible run with a reason; returns the run as it stands afterwards."""
    text = validate_rejection_reason(reason)
    check_confirm(confirm)
    view = await load_run(principal, run_id)
    if not view.rights.can_apply:
        await check_apply_permission(principal, view.run)
    async with db.transaction():
        run = await runs.get_run_by_id(view.run.id, for_update=True)  # the apply activity's lock order
        draft = await outputs.get_draft(view.run.id, draft_id, for_update=True)
        if run is None or draft is None:
            raise NotFound("No such draft in this run.")
        if refusal := not_rejectable_reason(draft.state()):
            raise DraftNotRejectable(refusal[0].upper() + refusal[1:] + ".")
        rejected = await outputs.reject_draft(run.id, draft.id, principal.id, text)
        assert rejected is not None and rejected.rejected_at is not None
        await runs.touch_run(run.id)  # readers keyed on the run's `updated_at` see the rejection at once
        now = datetime.now(UTC)
        await runs.append_run_event(
            run,
            "draft_rejected",
            {
                "draft_id": draft.id,
                "action": draft.action,
                "field": draft.field,
                "target_id": run.target_id,
                "reason": text,
                "rejected_by": principal.id,
                "rejected_at": format_timestamp(rejected.rejected_at),
            },
            now,
            actor_id=principal.id,
        )
    ENHANCEMENT_DRAFT_REJECTIONS.labels(action=draft.action, field=draft.field).inc()
    return await reload_run(principal, view.run)
