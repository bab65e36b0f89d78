"""A workspace's structure over the API, for workspace admins: portfolios, engagements and projects.

Canonical links stay the only subject mapping: an engagement names its portfolio, a project its engagement.
"""

from __future__ import annotations

from typing import Any

from groundwork.domain.errors import FieldError, NotFound, ValidationFailed
from groundwork.domain.pagination import page_info, page_request
from groundwork.domain.tenancy.administration import checked_name, checked_project_key, require_workspace_admin
from groundwork.domain.tenancy.principals import Principal
from groundwork.persistence import change_feed, db
from groundwork.persistence.repositories.tenancy import administration as repo
from groundwork.persistence.repositories.tenancy import workspaces as tenancy
from groundwork.persistence.repositories.tenancy.administration import AdminProjectRow
from groundwork.persistence.repositories.tenancy.workspaces import EngagementRow, PortfolioRow
from groundwork.platform.idempotency import request_results


async def create_portfolio(principal: Principal, name: str | None) -> PortfolioRow:
    """Add a portfolio to the caller's workspace."""
    require_workspace_admin(principal)
    checked = checked_name(name)
    earlier = await request_results.earlier_result("portfolio")
    if earlier is not None and (found := await repo.portfolio(principal.workspace_id, earlier)) is not None:
        return found
    async with db.transaction():
        row = await tenancy.create_portfolio(principal.workspace_id, checked)
        await request_results.record_result("portfolio", row.id)
    return row


async def list_portfolios(
    principal: Principal, *, limit: int | None, cursor: str | None
) -> tuple[list[PortfolioRow], dict[str, Any]]:
    """The workspace's portfolios, newest first."""
    require_workspace_admin(principal)
    page = page_request(limit, cursor)
    rows = await repo.list_portfolios(principal.workspace_id, after_id=page.after_text(), limit=page.limit + 1)
    return page_info(rows, page.limit, lambda p: {"id": p.id})


async def create_engagement(principal: Principal, name: str | None, portfolio_id: str | None) -> EngagementRow:
    """Add an engagement under a portfolio of the caller's workspace."""
    require_workspace_admin(principal)
    checked = checked_name(name)
    if portfolio_id is None or not await repo.portfolio_in(principal.workspace_id, portfolio_id):
        raise ValidationFailed(
            "Invalid portfolio.", [FieldError("portfolio_id", "is not a portfolio of this workspace")]
        )
    earlier = await request_results.earlier_result("engagement")
    if earlier is not None and (found := await repo.engagement(principal.workspace_id, earlier)) is not None:
        return found
    async with db.transaction():
        row = await tenancy.create_engagement(principal.workspace_id, portfolio_id, checked)
        await request_results.record_result("engagement", row.id)
    return row


async def list_engagements(
    principal: Principal, *, portfolio_id: str | None, limit: int | None, cursor: str | None
) -> tuple[list[EngagementRow], dict[str, Any]]:
    """The workspace's engagements (of one portfolio when given), newest first."""
    require_workspace_admin(principal)
    page = page_request(limit, cursor)
    rows = await repo.list_engagements(
        principal.workspace_id, portfolio_id, after_id=page.after_text(), limit=page.limit + 1
    )
    return page_info(rows, page.limit, lambda e: {"id": e.id})


async def project(principal: Principal, project_id: str) -> AdminProjectRow:
    """A project of the caller's workspace, as its admins see it."""
    row = await repo.admin_project(principal.workspace_id, project_id)
    if row is None:
        raise NotFound("No such project.")
    return row


async def create_project(
    principal: Principal, key: str | None, name: str | None, engagement_id: str | None
) -> AdminProjectRow:
    """Add a project under an engagement; its key is unique in the workspace and prefixes its work items' keys."""
    require_workspace_admin(principal)
    checked_key = checked_project_key(key)
    checked = checked_name(name)
    if engagement_id is None or not await repo.engagement_in(principal.workspace_id, engagement_id):
        raise ValidationFailed(
            "Invalid engagement.", [FieldError("engagement_id", "is not an engagement of this workspace")]
        )
    if (earlier := await request_results.earlier_result("project")) is not None:
        return await project(principal, earlier)
    async with db.transaction():
        if await repo.project_key_taken(principal.workspace_id, checked_key):
            raise ValidationFailed("Invalid project key.", [FieldError("key", "is taken by another project")])
        row = await tenancy.create_project(principal.workspace_id, engagement_id, checked_key, checked)
        await request_results.record_result("project", row.id)
    await change_feed.caught_up()  # the admins' visibility caches include the project from their next request
    return await project(principal, row.id)


async def update_project(
    principal: Principal, project_id: str, name: str | None, archived: bool | None
) -> AdminProjectRow:
    """Rename a project, or archive it (no new work items or imports) or restore it."""
    require_workspace_admin(principal)
    checked = checked_name(name) if name is not None else None
    async with db.transaction():
        await project(principal, project_id)
        await repo.update_project(project_id, checked, archived)
    await change_feed.caught_up()
    return await project(principal, project_id)
