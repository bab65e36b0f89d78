"""services/tenancy/workspace_keys: a key for yourself carries only scopes you hold; only an admin issues keys for
others; a key revoked is refused at once; a refused request issues nothing."""

from __future__ import annotations

import pytest

from groundwork.domain.errors import NotFound, ValidationFailed
from groundwork.domain.tenancy.principals import Principal
from groundwork.services.tenancy import workspace_keys
from groundwork.services.tenancy.api_keys import resolve_key
from tests.conftest import Workspace


async def _as(workspace: Workspace, name: str, scopes: list[str] | None, *, admin: bool = False) -> Principal:
    principal = await resolve_key(await workspace.key(name, scopes, admin=admin))
    assert principal is not None
    return principal


async def test_a_key_for_yourself_works_with_the_scopes_you_chose(workspace: Workspace) -> None:
    me = await _as(workspace, "mia", ["notifications:read", "work-items:read"])
    made = await workspace_keys.create_key(me, me.id, ["notifications:read"], None)
    assert made.secret.startswith("gw_") and made.record.principal_id == me.id
    used = await resolve_key(made.secret)
    assert used is not None and used.scopes == frozenset({"notifications:read"})


async def test_a_scope_you_do_not_hold_or_another_principal_is_refused_and_nothing_is_issued(
    workspace: Workspace,
) -> None:
    me = await _as(workspace, "mia", ["notifications:read"])
    other = await _as(workspace, "otto", ["notifications:read"])
    before, _ = await workspace_keys.list_keys(me, limit=100, cursor=None)
    refusals = [
        (me.id, ["work-items:read"], None, "not held by your key"),
        (other.id, ["notifications:read"], None, "must be your own"),
        (me.id, ["notifications:read"], "2020-01-01T00:00:00Z", "must be in the future"),
        (me.id, [], None, "at least one scope"),
    ]
    for principal_id, scopes, expires_at, says in refusals:
        with pytest.raises(ValidationFailed) as refused:
            await workspace_keys.create_key(me, principal_id, scopes, expires_at)
        assert says in " ".join(e.message for e in refused.value.errors)
    after, _ = await workspace_keys.list_keys(me, limit=100, cursor=None)
    assert [k.id for k in after] == [k.id for k in before]


async def test_an_admin_issues_and_revokes_a_colleague_s_key(workspace: Workspace) -> None:
    admin = await _as(workspace, "ada", None, admin=True)
    colleague = await _as(workspace, "cole", ["notifications:read"])
    made = await workspace_keys.create_key(admin, colleague.id, ["notifications:read"], None)
    listed, _ = await workspace_keys.list_keys(admin, limit=100, cursor=None)
    assert made.record.id in [k.id for k in listed]
    with pytest.raises(ValidationFailed, match="Invalid key"):  # workspace:admin only for admins
        await workspace_keys.create_key(admin, colleague.id, ["workspace:admin"], None)
    with pytest.raises(NotFound):  # a colleague cannot revoke a key that is not theirs
        await workspace_keys.revoke(colleague, admin.api_key_id)
    assert await resolve_key(made.secret) is not None
    await workspace_keys.revoke(admin, made.record.id)
    assert await resolve_key(made.secret) is None
