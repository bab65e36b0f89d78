"""Project memberships granted by operators (`groundwork keys create --member PROJECT=ROLE`)."""

from __future__ import annotations

from dataclasses import dataclass

from groundwork.domain.errors import GroundworkError
from groundwork.persistence import change_feed, db
from groundwork.persistence.repositories.tenancy import workspaces as tenancy


@dataclass(frozen=True)
class Membership:
    """A role to give on one project."""

    project_id: str
    project_key: str
    role: str


async def planned_memberships(workspace_slug: str, grants: list[str]) -> list[Membership]:
    """Each `PROJECT=ROLE` (a project key or id of the workspace) checked, before anything is written."""
    roles = await tenancy.role_names()
    workspace = await tenancy.get_workspace_by_slug(workspace_slug)
    planned = []
    for grant in grants:
        project_ref, sep, role = grant.partition("=")
        if not sep or role not in roles:
            raise GroundworkError(f"{grant!r}: give PROJECT=ROLE with a role of {', '.join(sorted(roles))}")
        project = (
            await tenancy.project_by_id(project_ref)
            if project_ref.startswith("prj_")
            else await tenancy.project_by_key(workspace_slug, project_ref)
        )
        if project is None or workspace is None or project.workspace_id != workspace.id:
            raise GroundworkError(f"{grant!r}: no project {project_ref!r} in the workspace {workspace_slug!r}")
        planned.append(Membership(project.id, project.key, role))
    return planned


async def grant_memberships(principal_id: str, planned: list[Membership]) -> None:
    """Give the principal every planned role (replacing an earlier role on the same project)."""
    async with db.transaction():
        for membership in planned:
            await tenancy.add_membership(principal_id, membership.project_id, membership.role)
    await change_feed.caught_up()  # this process's visibility caches follow from its next request on
