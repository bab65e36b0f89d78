"""People of a workspace: principals and project members (admins), the caller itself, and whom it may address.

The directory shows id, name and kind of the principals who share a project with the caller (an admin,
who sees every project, sees every principal): never their activity, as the notifications contract rules
out surveillance. Internal providers are not people and are never listed.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from groundwork.domain.errors import FieldError, InsufficientScope, NotFound, ValidationFailed
from groundwork.domain.pagination import page_info, page_request
from groundwork.domain.tenancy.administration import (
    ADMINISTERED_KINDS,
    MAX_QUERY,
    ROLES,
    checked_choice,
    checked_name,
    require_workspace_admin,
)
from groundwork.domain.tenancy.principals import Principal
from groundwork.persistence import change_feed, db
from groundwork.persistence.repositories.tenancy import administration as repo
from groundwork.persistence.repositories.tenancy import workspaces as tenancy
from groundwork.persistence.repositories.tenancy.administration import DirectoryRow, MemberRow, ProjectRoleRow
from groundwork.persistence.repositories.tenancy.workspaces import PrincipalRow, WorkspaceRow
from groundwork.platform.idempotency import request_results

# Either lets a caller find whom to address: a thread's participants, or a run's reviewers.
DIRECTORY_SCOPES = ("notifications:read", "work-item-enhance:read")


@dataclass(frozen=True)
class Me:
    """The caller: its principal, workspace, the scopes its key carries and its roles on projects."""

    principal: Principal
    workspace: WorkspaceRow
    project_roles: list[ProjectRoleRow]


async def me(principal: Principal) -> Me:
    """Who the caller is, as its key resolves."""
    workspace = await repo.workspace_by_id(principal.workspace_id)
    assert workspace is not None  # a key's workspace exists while the key does
    return Me(principal, workspace, await repo.project_roles(principal.id))


async def create_principal(principal: Principal, name: str | None, kind: str | None) -> PrincipalRow:
    """Add a principal (no key, no membership) to the caller's workspace; names are unique in it."""
    require_workspace_admin(principal)
    checked = checked_name(name)
    checked_kind = checked_choice(kind, ADMINISTERED_KINDS, "kind")
    earlier = await request_results.earlier_result("principal")
    if earlier is not None and (found := await tenancy.get_principal(earlier)) is not None:
        return found
    async with db.transaction():
        if await tenancy.get_principal_by_name(principal.workspace_id, checked) is not None:
            raise ValidationFailed("Invalid name.", [FieldError("name", "is taken by another principal")])
        row = await tenancy.create_principal(principal.workspace_id, checked, kind=checked_kind)
        await request_results.record_result("principal", row.id)
    return row


async def _administered_project(principal: Principal, project_id: str) -> None:
    require_workspace_admin(principal)
    if await repo.admin_project(principal.workspace_id, project_id) is None:
        raise NotFound("No such project.")


async def _member_of_workspace(principal: Principal, principal_id: str) -> PrincipalRow:
    found = await tenancy.get_principal(principal_id)
    if found is None or found.workspace_id != principal.workspace_id:
        raise NotFound("No such principal.")
    return found


async def members(principal: Principal, project_id: str) -> list[MemberRow]:
    """A project's members with their roles."""
    await _administered_project(principal, project_id)
    return await repo.members(project_id)


async def set_member(principal: Principal, project_id: str, principal_id: str, role: str | None) -> MemberRow:
    """Give a principal of the workspace a role on a project (replacing its earlier role)."""
    await _administered_project(principal, project_id)
    checked_role = checked_choice(role, ROLES, "role")
    await _member_of_workspace(principal, principal_id)
    async with db.transaction():
        await tenancy.add_membership(principal_id, project_id, checked_role)
    await change_feed.caught_up()  # visibility follows the new role from this process's next request
    return next(m for m in await repo.members(project_id) if m.principal_id == principal_id)


async def remove_member(principal: Principal, project_id: str, principal_id: str) -> None:
    """Take a principal's role on a project away; 404 when it had none."""
    await _administered_project(principal, project_id)
    await _member_of_workspace(principal, principal_id)
    if not await repo.remove_membership(principal_id, project_id):
        raise NotFound("The principal is not a member of this project.")
    await change_feed.caught_up()


async def directory(
    principal: Principal,
    *,
    query: str | None,
    project_id: str | None,
    limit: int | None,
    cursor: str | None,
) -> tuple[list[DirectoryRow], dict[str, Any]]:
    """Principals the caller may address (sharing a project with it), by name."""
    if not any(principal.has_scope(s) for s in DIRECTORY_SCOPES):
        raise InsufficientScope(DIRECTORY_SCOPES[0])
    if query is not None and len(query) > MAX_QUERY:
        raise ValidationFailed("Invalid query.", [FieldError("query", f"must be at most {MAX_QUERY} characters")])
    if project_id is not None and await tenancy.project_permissions(principal, project_id) is None:
        raise NotFound("No such project.")
    page = page_request(limit, cursor)
    rows = await repo.directory(
        principal.workspace_id,
        principal.id,
        everyone=principal.is_admin,
        query=query or None,
        project_id=project_id,
        after_name=page.after_text("name"),
        limit=page.limit + 1,
    )
    return page_info(rows, page.limit, lambda p: {"name": p.name})
