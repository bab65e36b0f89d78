"""Creating a workspace with its first admin (the first run of a team's own Groundwork), and listing them."""

from __future__ import annotations

import re
import secrets
from dataclasses import dataclass

from groundwork.domain.errors import GroundworkError
from groundwork.domain.tenancy.scopes import ALL_SCOPES
from groundwork.persistence import change_feed, db
from groundwork.persistence.repositories.tenancy import api_keys
from groundwork.persistence.repositories.tenancy import workspaces as tenancy
from groundwork.persistence.repositories.tenancy.workspaces import WorkspaceRow
from groundwork.services.tenancy.api_keys import hash_key

SLUG = re.compile(r"^[a-z0-9][a-z0-9-]{0,62}$")
MAX_NAME = 200


@dataclass(frozen=True)
class CreatedWorkspace:
    """A new workspace, its first admin, and that admin's key (shown once)."""

    workspace: WorkspaceRow
    admin_id: str
    api_key_id: str
    key: str


def _checked(slug: str, name: str, admin_name: str) -> None:
    if not SLUG.match(slug):
        raise GroundworkError(
            f"{slug!r} is not a workspace slug: lowercase letters, digits and '-', starting with a letter or digit, "
            "at most 63 characters."
        )
    for label, value in (("--name", name), ("--admin", admin_name)):
        if not value.strip() or len(value) > MAX_NAME:
            raise GroundworkError(f"{label} must be 1 to {MAX_NAME} characters.")


async def create_workspace(slug: str, name: str, admin_name: str) -> CreatedWorkspace:
    """Create the workspace, its first admin (a user) and a key for it with every scope, in one transaction."""
    _checked(slug, name, admin_name)
    key = "gw_" + secrets.token_urlsafe(32)
    async with db.transaction():
        if await tenancy.get_workspace_by_slug(slug) is not None:
            raise GroundworkError(f"A workspace with the slug {slug!r} exists already.")
        workspace = await tenancy.create_workspace(slug, name)
        admin = await tenancy.create_principal(workspace.id, admin_name, kind="user", is_admin=True)
        record = await api_keys.create_api_key(workspace.id, admin.id, hash_key(key), key[:10], list(ALL_SCOPES))
    await change_feed.caught_up()  # a key this process had cached as unknown works from its next request on
    return CreatedWorkspace(workspace, admin.id, record.id, key)


async def list_workspaces() -> list[WorkspaceRow]:
    """Every workspace, by slug."""
    return await tenancy.all_workspaces()
