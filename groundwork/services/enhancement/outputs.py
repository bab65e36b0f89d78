"""A run's drafts and artifacts, filtered and paged, as the caller may see them."""

from __future__ import annotations

from typing import Any

from groundwork.domain.choices import check_choice
from groundwork.domain.enhancement.model import (
    ACTIONS,
    ARTIFACT_TYPES,
    DRAFT_FIELDS,
)
from groundwork.domain.pagination import page_info, page_request
from groundwork.domain.tenancy.principals import Principal
from groundwork.persistence.repositories.enhancement import outputs
from groundwork.services.enhancement.run_views import RunView, load_run, visible_run


async def list_drafts(
    principal: Principal,
    run_id: str,
    *,
    field: str | None = None,
    apply_eligible: bool | None = None,
    action: str | None = None,
    limit: int | None = None,
    cursor: str | None = None,
    after_id: str | None = None,
) -> tuple[RunView, list[outputs.DraftRow], dict[str, Any]]:
    """Drafts of a visible run, newest first, filtered by field, eligibility and action.

    Pages continue from an opaque `cursor`, or from `after_id` (the last draft id a caller holds: GraphQL
    answers a plain list, so its clients page by id).
    """
    check_choice(field, DRAFT_FIELDS, "field")
    check_choice(action, ACTIONS, "action")
    page = page_request(limit, cursor)
    view = await load_run(principal, run_id)
    after = page.after_text() or after_id
    drafts = [
        d
        for d in view.drafts
        if (field is None or d.field == field)
        and (action is None or d.action == action)
        and (apply_eligible is None or view.eligible[d.id] == apply_eligible)
        and (after is None or d.id < after)
    ]
    drafts, info = page_info(drafts[: page.limit + 1], page.limit, lambda d: {"id": d.id})
    return view, drafts, info


async def list_artifacts(
    principal: Principal,
    run_id: str,
    *,
    type: str | None = None,
    limit: int | None = None,
    cursor: str | None = None,
    after_id: str | None = None,
) -> tuple[list[outputs.ArtifactRow], dict[str, Any]]:
    """Artifacts of a visible run, newest first; pages continue from `cursor` or from `after_id`."""
    check_choice(type, ARTIFACT_TYPES, "type")
    page = page_request(limit, cursor)
    await visible_run(principal, run_id)
    after = page.after_text() or after_id
    rows = await outputs.list_artifacts(run_id, type=type, after_id=after, limit=page.limit + 1)
    return page_info(rows, page.limit, lambda a: {"id": a.id})
