"""Resolved keys are cached in each API process and dropped in every process the moment a key is revoked;
an unknown key costs one database query, not one per request."""

from __future__ import annotations

import httpx
import pytest

from groundwork.persistence import db
from groundwork.persistence.repositories.tenancy import api_keys as key_records
from groundwork.persistence.repositories.tenancy.api_keys import ActiveKeyRow
from groundwork.services.tenancy import api_keys
from tests.conftest import Workspace


async def test_a_revoked_key_is_refused_at_once_by_another_api_process_that_had_cached_it(
    workspace: Workspace, second_api_process: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    key = await workspace.key("admin", admin=True)
    [record] = await api_keys.list_keys(workspace.slug)
    async with httpx.AsyncClient(base_url=second_api_process, timeout=10) as other:
        for _ in range(3):  # the first resolves it in PostgreSQL, the others from that process's cache
            assert (await other.get("/api/v1/projects", headers=workspace.headers(key))).status_code == 200
        # Proof that the other process answers from its cache: a revoke it is not told about goes unseen.
        async with db.transaction():
            await db.execute("ALTER TABLE api_keys DISABLE TRIGGER api_keys_cache_update")
            await db.execute("UPDATE api_keys SET revoked_at = now() WHERE id = $1", record.id)
        assert (await other.get("/api/v1/projects", headers=workspace.headers(key))).status_code == 200
        async with db.transaction():
            await db.execute("UPDATE api_keys SET revoked_at = NULL WHERE id = $1", record.id)
            await db.execute("ALTER TABLE api_keys ENABLE TRIGGER api_keys_cache_update")

        # In this process (which returns once it has heard its own change): the other one only hears of
        # it, sent by PostgreSQL at the same commit (on a loaded machine its delivery is not instant).
        assert await api_keys.revoke_key(record.id)
        refused = await other.get("/api/v1/projects", headers=workspace.headers(key))
        assert refused.status_code == 401 and refused.json()["code"] == "unauthenticated"
        # And it stays refused (nothing re-caches the revoked key).
        assert (await other.get("/api/v1/projects", headers=workspace.headers(key))).status_code == 401


async def test_an_unknown_key_costs_one_query_and_a_new_key_works_at_once(
    client: httpx.AsyncClient, workspace: Workspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    lookups: list[str] = []
    original = key_records.find_active_by_hash

    async def counted(key_hash: str) -> ActiveKeyRow | None:
        lookups.append(key_hash)
        return await original(key_hash)

    monkeypatch.setattr(key_records, "find_active_by_hash", counted)
    unknown_hash = api_keys.hash_key("gw_never-issued-" + workspace.slug)
    unknown = workspace.headers("gw_never-issued-" + workspace.slug)
    # Tests running beside this one (other pytest workers, the same database) change keys too, and every
    # change drops this process's cache: one more lookup is expected for each drop seen meanwhile.
    before = api_keys.cached_keys_generation()
    for _ in range(5):
        answer = await client.get("/api/v1/projects", headers=unknown)
        assert answer.status_code == 401
    drops = api_keys.cached_keys_generation() - before
    assert lookups.count(unknown_hash) <= 1 + drops < 5  # the API process is this one: answered from memory
    unknown_lookups = lookups.count(unknown_hash)

    generation = api_keys.cached_keys_generation()
    key = await workspace.key("admin", admin=True)  # issuing a key drops what was cached as unknown
    assert api_keys.cached_keys_generation() > generation  # and issue_key returns once it has been dropped
    before = api_keys.cached_keys_generation()
    for _ in range(3):
        assert (await client.get("/api/v1/projects", headers=workspace.headers(key))).status_code == 200
    drops = api_keys.cached_keys_generation() - before
    assert 1 <= lookups.count(api_keys.hash_key(key)) <= 1 + drops  # one lookup of the new key, then from memory
    assert lookups.count(unknown_hash) == unknown_lookups  # the new key's requests never asked for the other
