"""services/tenancy/api_keys: a key is shown once, stored only as a hash, resolves to its principal, and revokes at
once."""

from __future__ import annotations

import pytest

from groundwork.domain.errors import GroundworkError
from groundwork.persistence import db
from groundwork.services.tenancy import api_keys
from tests.conftest import Workspace


async def test_an_issued_key_resolves_to_its_principal_and_only_its_hash_is_stored(workspace: Workspace) -> None:
    issued = await api_keys.issue_key(workspace.slug, "kim", ["notifications:read"], kind="agent")
    assert issued.key.startswith("gw_") and issued.created_principal
    principal = await api_keys.resolve_key(issued.key)
    assert principal is not None
    assert (principal.id, principal.name, principal.kind, principal.scopes) == (
        issued.principal_id,
        "kim",
        "agent",
        frozenset({"notifications:read"}),
    )
    stored = await db.fetch("SELECT * FROM api_keys WHERE id = $1", issued.api_key_id)
    assert issued.key not in repr([dict(row) for row in stored])
    assert stored[0]["key_hash"] == api_keys.hash_key(issued.key)


async def test_a_second_key_for_the_same_name_reuses_the_principal(workspace: Workspace) -> None:
    first = await api_keys.issue_key(workspace.slug, "lee", None)
    second = await api_keys.issue_key(workspace.slug, "lee", None, admin=True)
    assert second.principal_id == first.principal_id and not second.created_principal
    principal = await api_keys.resolve_key(first.key)
    assert principal is not None and principal.is_admin


async def test_a_revoked_key_resolves_to_nothing_from_the_next_request(workspace: Workspace) -> None:
    issued = await api_keys.issue_key(workspace.slug, "max", None)
    assert await api_keys.resolve_key(issued.key) is not None  # cached as known
    assert await api_keys.revoke_key(issued.api_key_id)
    assert await api_keys.resolve_key(issued.key) is None
    assert not await api_keys.revoke_key(issued.api_key_id)  # already revoked
    listed = {row.id: row for row in await api_keys.list_keys(workspace.slug)}
    assert listed[issued.api_key_id].revoked_at is not None


async def test_an_unknown_key_resolves_to_nothing(workspace: Workspace) -> None:
    assert await api_keys.resolve_key("gw_" + "x" * 43) is None


@pytest.mark.parametrize(
    ("scopes", "kind", "says"),
    [
        ([], "user", "at least one scope"),
        (["notifications:fly"], "user", "Unknown scope"),
        (["notifications:read"], "robot", "Unknown principal kind"),
    ],
)
async def test_a_bad_key_request_is_refused_and_creates_no_principal(
    workspace: Workspace, scopes: list[str], kind: str, says: str
) -> None:
    with pytest.raises(GroundworkError, match=says):
        await api_keys.issue_key(workspace.slug, "nobody", scopes, kind=kind)
    found = await db.fetch("SELECT 1 FROM principals WHERE name = 'nobody' AND workspace_id = $1", workspace.id)
    assert found == []


async def test_a_key_for_an_unknown_workspace_is_refused(workspace: Workspace) -> None:
    with pytest.raises(GroundworkError, match="No workspace with the slug"):
        await api_keys.issue_key(f"{workspace.slug}-absent", "kim", None)
