"""services/tenancy/project_access: unseen is 404, seen but not allowed is 403, and a role change is heard at once."""

from __future__ import annotations

import pytest

from groundwork.domain.errors import NotFound, PermissionDenied
from groundwork.domain.tenancy.principals import Principal
from groundwork.persistence import change_feed
from groundwork.persistence.repositories.tenancy import workspaces as tenancy
from groundwork.services.tenancy import project_access
from groundwork.services.tenancy.api_keys import resolve_key
from tests.conftest import Workspace


async def _principal(workspace: Workspace, name: str, **kwargs: object) -> Principal:
    principal = await resolve_key(await workspace.key(name, ["work-items:read"], **kwargs))  # type: ignore[arg-type]
    assert principal is not None
    return principal


async def test_a_member_sees_its_project_and_a_stranger_gets_not_found(workspace: Workspace) -> None:
    viewer = await _principal(workspace, "vera", memberships={"ALPHA": "viewer"})
    assert await project_access.can_see_project(viewer, workspace.projects["ALPHA"])
    assert not await project_access.can_see_project(viewer, workspace.projects["BETA"])
    with pytest.raises(NotFound):
        await project_access.require_project_permission(viewer, workspace.projects["BETA"], "project:read", "reading")
    with pytest.raises(NotFound):
        await project_access.require_project_permission(viewer, "prj_absent", "project:read", "reading")


async def test_a_role_without_the_permission_is_refused_naming_what_it_does_not_allow(workspace: Workspace) -> None:
    viewer = await _principal(workspace, "vic", memberships={"ALPHA": "viewer"})
    with pytest.raises(PermissionDenied, match="does not allow editing work items"):
        await project_access.require_project_permission(
            viewer, workspace.projects["ALPHA"], "work_items:write", "editing work items"
        )


async def test_a_workspace_admin_holds_every_permission_without_a_membership(workspace: Workspace) -> None:
    admin = await _principal(workspace, "ada", admin=True)
    permissions = await project_access.project_permissions(admin, workspace.projects["BETA"])
    assert permissions is not None and {"project:read", "work_items:write", "context:read"} <= permissions


async def test_a_membership_removed_is_heard_by_the_cached_answer(workspace: Workspace) -> None:
    member = await _principal(workspace, "mo", memberships={"ALPHA": "lead"})
    assert await project_access.can_see_project(member, workspace.projects["ALPHA"])
    assert await project_access.principal_holds(member.id, workspace.projects["ALPHA"], "work_items:write")
    await tenancy.add_membership(member.id, workspace.projects["ALPHA"], "guest")
    await change_feed.caught_up()
    assert not await project_access.principal_holds(member.id, workspace.projects["ALPHA"], "work_items:write")
    permissions = await project_access.project_permissions(member, workspace.projects["ALPHA"])
    assert permissions == frozenset({"project:read"})
