"""The one rule for acting on a project by id: unseen is 404, seen but not allowed is 403.

What a caller may do on a project is read on nearly every request, and changes rarely: long-running
processes keep it in memory while the change feed is live, and drop all of it when any membership, role,
project or principal changes (the `visibility` topic, serving_caches.py).
"""

from __future__ import annotations

from groundwork.domain.errors import NotFound, PermissionDenied
from groundwork.domain.tenancy.principals import Principal
from groundwork.persistence.repositories.tenancy import workspaces as tenancy
from groundwork.platform.caches.invalidated_cache import InvalidatedCache
from groundwork.platform.caches.serving import forget_on

# Contributing to a project's corpus or context through the internal provider API.
CONTEXT_WRITE = "context:write"

# The TTL only bounds memory of idle entries: correctness comes from the change feed's invalidation.
_permissions: InvalidatedCache[tuple[str, str, bool, str], frozenset[str] | None] = InvalidatedCache(ttl_seconds=60.0)
_holds: InvalidatedCache[tuple[str, str, str], bool] = InvalidatedCache(ttl_seconds=60.0)


def forget_cached_permissions() -> None:
    """Drop cached permissions (the change feed calls this when memberships, roles or projects change)."""
    _permissions.invalidate()
    _holds.invalidate()


forget_on(("visibility",), lambda _topic: forget_cached_permissions())


async def principal_holds(principal_id: str, project_id: str, permission: str) -> bool:
    """Whether a principal known by id only (a run's requester) holds `permission` on a project, cached."""
    return await _holds.load(
        (principal_id, project_id, permission), lambda: tenancy.principal_holds(principal_id, project_id, permission)
    )


async def project_permissions(principal: Principal, project_id: str) -> frozenset[str] | None:
    """The caller's permissions on a project of its workspace; None when it cannot see the project."""
    key = (principal.id, principal.workspace_id, principal.is_admin, project_id)
    cached, permissions = _permissions.get(key)
    if cached:  # every request asks: answer from memory without building a loader
        return permissions

    async def load() -> frozenset[str] | None:
        found = await tenancy.project_permissions(principal, project_id)
        return None if found is None else frozenset(found)

    return await _permissions.load(key, load)


async def can_see_project(principal: Principal, project_id: str) -> bool:
    """Whether the caller sees the project (a workspace admin, or a member whose role grants `project:read`)."""
    permissions = await project_permissions(principal, project_id)
    return bool(permissions) and "project:read" in (permissions or set())


async def require_project_permission(principal: Principal, project_id: str, permission: str, what: str) -> None:
    """Refuse unless the caller holds `permission` on the project: 404 when it cannot see the project
    (absent, another workspace, no role there), 403 `permission_denied` when its role does not allow `what`."""
    permissions = await project_permissions(principal, project_id)
    if not permissions or "project:read" not in permissions:
        raise NotFound("No such project.")
    if permission not in permissions:
        raise PermissionDenied(f"Your role on this project does not allow {what}.", permission)
