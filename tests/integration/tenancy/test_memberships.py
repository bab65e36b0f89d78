"""services/tenancy/memberships: grants are checked whole before anything is written, and replace an earlier role."""

from __future__ import annotations

import pytest

from groundwork.domain.errors import GroundworkError
from groundwork.services.tenancy import memberships, project_access
from groundwork.services.tenancy.api_keys import issue_key
from tests.conftest import Workspace


async def test_grants_by_project_key_or_id_are_planned_then_given(workspace: Workspace) -> None:
    planned = await memberships.planned_memberships(
        workspace.slug, ["ALPHA=viewer", f"{workspace.projects['BETA']}=contributor"]
    )
    assert [(m.project_key, m.role) for m in planned] == [("ALPHA", "viewer"), ("BETA", "contributor")]
    issued = await issue_key(workspace.slug, "erin", ["work-items:read"])
    await memberships.grant_memberships(issued.principal_id, planned)
    assert await project_access.principal_holds(issued.principal_id, workspace.projects["ALPHA"], "project:read")
    assert not await project_access.principal_holds(
        issued.principal_id, workspace.projects["ALPHA"], "work_items:write"
    )


async def test_a_later_grant_replaces_the_earlier_role_on_the_same_project(workspace: Workspace) -> None:
    issued = await issue_key(workspace.slug, "frank", ["work-items:read"])
    await memberships.grant_memberships(
        issued.principal_id, await memberships.planned_memberships(workspace.slug, ["ALPHA=viewer"])
    )
    await memberships.grant_memberships(
        issued.principal_id, await memberships.planned_memberships(workspace.slug, ["ALPHA=lead"])
    )
    assert await project_access.principal_holds(issued.principal_id, workspace.projects["ALPHA"], "work_items:write")


@pytest.mark.parametrize(
    ("grant", "says"),
    [
        ("ALPHA", "give PROJECT=ROLE"),
        ("ALPHA=owner", "give PROJECT=ROLE"),
        ("NOPE=viewer", "no project 'NOPE'"),
        ("prj_doesnotexist=viewer", "no project 'prj_doesnotexist'"),
    ],
)
async def test_a_bad_grant_is_refused_with_what_to_give_and_nothing_is_planned(
    workspace: Workspace, grant: str, says: str
) -> None:
    with pytest.raises(GroundworkError, match=says):
        await memberships.planned_memberships(workspace.slug, ["BETA=viewer", grant])


async def test_a_project_of_another_workspace_cannot_be_granted(workspace: Workspace) -> None:
    from groundwork.persistence.repositories.tenancy import workspaces as tenancy

    other = await tenancy.create_workspace(f"{workspace.slug}-x", "Other")
    with pytest.raises(GroundworkError, match="no project"):
        await memberships.planned_memberships(other.slug, [f"{workspace.projects['ALPHA']}=viewer"])
