"""services/tenancy/workspaces: a team's first run creates its workspace, first admin and key in one go, and refuses
a taken or malformed slug without writing anything."""

from __future__ import annotations

import uuid

import pytest

from groundwork.domain.errors import GroundworkError
from groundwork.services.tenancy import workspaces
from groundwork.services.tenancy.api_keys import resolve_key


async def test_a_new_workspace_has_its_admin_and_a_working_key_with_every_scope(database: str) -> None:
    slug = f"acme-{uuid.uuid4().hex[:8]}"
    created = await workspaces.create_workspace(slug, "Acme", "ada")
    admin = await resolve_key(created.key)
    assert admin is not None and admin.is_admin and admin.name == "ada"
    assert admin.workspace_id == created.workspace.id and "workspace:admin" in admin.scopes
    assert slug in [w.slug for w in await workspaces.list_workspaces()]


@pytest.mark.parametrize(
    ("slug", "name", "admin", "says"),
    [
        ("Acme", "Acme", "ada", "not a workspace slug"),
        ("-acme", "Acme", "ada", "not a workspace slug"),
        ("acme-ok", " ", "ada", "--name must be"),
        ("acme-ok", "Acme", "", "--admin must be"),
    ],
)
async def test_a_malformed_request_is_refused_and_creates_nothing(
    database: str, slug: str, name: str, admin: str, says: str
) -> None:
    before = await workspaces.list_workspaces()
    with pytest.raises(GroundworkError, match=says):
        await workspaces.create_workspace(slug, name, admin)
    assert await workspaces.list_workspaces() == before


async def test_a_taken_slug_is_refused(database: str) -> None:
    slug = f"taken-{uuid.uuid4().hex[:8]}"
    await workspaces.create_workspace(slug, "First", "ada")
    with pytest.raises(GroundworkError, match="exists already"):
        await workspaces.create_workspace(slug, "Second", "bob")
    assert [w.name for w in await workspaces.list_workspaces() if w.slug == slug] == ["First"]
