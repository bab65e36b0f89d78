"""A run's apply history, paged oldest first, as the caller may see it (the same visibility as the run)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from groundwork.domain.errors import FieldError, InvalidRequest
from groundwork.domain.pagination import PageRequest, page_info, page_request
from groundwork.domain.tenancy.principals import Principal
from groundwork.persistence.repositories.enhancement import applies
from groundwork.services.enhancement.run_views import visible_run


def _after(page: PageRequest) -> tuple[datetime, str] | None:
    if page.after is None:
        return None
    at, apply_id = page.after.get("at"), page.after_text()
    try:
        if not isinstance(at, str) or apply_id is None:
            raise ValueError
        moment = datetime.fromisoformat(at)
        if moment.tzinfo is None:
            raise ValueError
    except ValueError:
        raise InvalidRequest("Invalid cursor.", [FieldError("cursor", "is not a cursor this API issued")]) from None
    return moment, apply_id


async def list_run_applies(
    principal: Principal, run_id: str, *, limit: int | None = None, cursor: str | None = None
) -> tuple[list[applies.ApplyRow], dict[str, Any]]:
    """Each apply of a visible run, oldest first: who, when, which drafts, the versions and values around it."""
    page = page_request(limit, cursor)
    await visible_run(principal, run_id)
    rows = await applies.list_applies(run_id, after=_after(page), limit=page.limit + 1)
    return page_info(rows, page.limit, lambda a: {"at": a.applied_at.isoformat(), "id": a.id})
