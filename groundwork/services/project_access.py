"""The one rule for acting on a project by id: unseen is 404, seen but not allowed is 403."""

from __future__ import annotations

from groundwork.domain.errors import NotFound, PermissionDenied
from groundwork.domain.principals import Principal
from groundwork.persistence.repositories import tenancy

# Contributing to a project's corpus or context through the internal provider API.
CONTEXT_WRITE = "context:write"


async def can_see_project(principal: Principal, project_id: str) -> bool:
    """Whether the caller sees the project (a workspace admin, or a member whose role grants `project:read`)."""
    permissions = await tenancy.project_permissions(principal, project_id)
    return bool(permissions) and "project:read" in (permissions or set())


async def require_project_permission(principal: Principal, project_id: str, permission: str, what: str) -> None:
    """Refuse unless the caller holds `permission` on the project: 404 when it cannot see the project
    (absent, another workspace, no role there), 403 `permission_denied` when its role does not allow `what`."""
    permissions = await tenancy.project_permissions(principal, project_id)
    if not permissions or "project:read" not in permissions:
        raise NotFound("No such project.")
    if permission not in permissions:
        raise PermissionDenied(f"Your role on this project does not allow {what}.", permission)
