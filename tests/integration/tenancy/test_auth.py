"""Bearer authentication, the scope guard, workspace isolation and rate limiting."""

from __future__ import annotations

import httpx

from groundwork.api.rate_limit import TokenBuckets
from groundwork.persistence import change_feed, db
from groundwork.services.tenancy import api_keys
from tests.conftest import Workspace, idem


async def test_request_without_key_is_401_problem(client: httpx.AsyncClient) -> None:
    response = await client.get("/api/v1/work-items")
    assert response.status_code == 401
    assert response.headers["content-type"].startswith("application/problem+json")
    body = response.json()
    assert body["code"] == "unauthenticated" and body["status"] == 401 and body["title"] and body["detail"]


async def test_unknown_and_revoked_keys_are_401(client: httpx.AsyncClient, workspace: Workspace) -> None:
    key = await workspace.key("admin", admin=True)
    assert (await client.get("/api/v1/projects", headers=workspace.headers("gw_not-a-real-key"))).status_code == 401
    ok = await client.get("/api/v1/projects", headers=workspace.headers(key))
    assert ok.status_code == 200
    [record] = [k for k in await api_keys.list_keys(workspace.slug)]
    assert await api_keys.revoke_key(record.id)
    revoked = await client.get("/api/v1/projects", headers=workspace.headers(key))
    assert revoked.status_code == 401 and revoked.json()["code"] == "unauthenticated"


async def test_missing_scope_is_403_naming_the_required_scope(client: httpx.AsyncClient, workspace: Workspace) -> None:
    key = await workspace.key("reader", ["work-items:read"], admin=True)
    response = await client.post(
        "/api/v1/work-items",
        json={"project_id": workspace.projects["ALPHA"], "title": "x"},
        headers=workspace.headers(key, **idem()),
    )
    assert response.status_code == 403
    assert response.json()["code"] == "insufficient_scope"
    assert response.json()["required_scope"] == "work-items:write"
    listing = await client.get("/api/v1/work-items", headers=workspace.headers(key))
    assert listing.status_code == 200 and listing.json()["data"] == []


async def test_other_workspaces_work_item_is_404_never_403(client: httpx.AsyncClient, workspace: Workspace) -> None:
    owner = await workspace.key("admin", admin=True)
    created = await client.post(
        "/api/v1/work-items",
        json={"project_id": workspace.projects["ALPHA"], "title": "Secret item"},
        headers=workspace.headers(owner, **idem()),
    )
    assert created.status_code == 201
    item_id = created.json()["data"]["id"]

    from groundwork.persistence.repositories.tenancy import workspaces as tenancy

    other_ws = await tenancy.create_workspace(f"o-{workspace.slug}", "Other")
    outsider = Workspace(other_ws.id, other_ws.slug)
    outsider_key = await outsider.key("admin", admin=True)
    response = await client.get(f"/api/v1/work-items/{item_id}", headers=outsider.headers(outsider_key))
    assert response.status_code == 404 and response.json()["code"] == "not_found"
    patch = await client.patch(
        f"/api/v1/work-items/{item_id}",
        json={"expected_version": created.json()["data"]["version"], "title": "pwned"},
        headers=outsider.headers(outsider_key),
    )
    assert patch.status_code == 404
    again = await client.get(f"/api/v1/work-items/{item_id}", headers=workspace.headers(owner))
    assert again.json()["data"]["title"] == "Secret item"


async def test_non_member_sees_no_projects_and_gets_404_for_their_items(
    client: httpx.AsyncClient, workspace: Workspace
) -> None:
    admin = await workspace.key("admin", admin=True)
    created = await client.post(
        "/api/v1/work-items",
        json={"project_id": workspace.projects["BETA"], "title": "Beta only"},
        headers=workspace.headers(admin, **idem()),
    )
    member = await workspace.key("ana", memberships={"ALPHA": "viewer"})
    projects = await client.get("/api/v1/projects", headers=workspace.headers(member))
    assert [p["key"] for p in projects.json()["data"]] == ["ALPHA"]
    assert projects.json()["data"][0]["engagement"]["name"] == "Engagement"
    assert projects.json()["data"][0]["portfolio"]["name"] == "Portfolio"
    hidden = await client.get(f"/api/v1/work-items/{created.json()['data']['id']}", headers=workspace.headers(member))
    assert hidden.status_code == 404


async def test_viewer_cannot_write_even_with_the_scope(client: httpx.AsyncClient, workspace: Workspace) -> None:
    viewer = await workspace.key("vic", memberships={"ALPHA": "viewer"})
    response = await client.post(
        "/api/v1/work-items",
        json={"project_id": workspace.projects["ALPHA"], "title": "Nope"},
        headers=workspace.headers(viewer, **idem()),
    )
    assert response.status_code == 403 and response.json()["code"] == "permission_denied"


async def test_cached_project_permissions_follow_every_role_change_at_once(
    client: httpx.AsyncClient, workspace: Workspace
) -> None:
    admin = await workspace.key("admin", admin=True)
    created = await client.post(
        "/api/v1/work-items",
        json={"project_id": workspace.projects["ALPHA"], "title": "Alpha"},
        headers=workspace.headers(admin, **idem()),
    )
    item = f"/api/v1/work-items/{created.json()['data']['id']}"
    ana = await workspace.key("ana", memberships={"ALPHA": "viewer"})
    new_item = {"project_id": workspace.projects["ALPHA"], "title": "By Ana"}
    for _ in range(2):  # the second answer comes from this API process's cache of what ana may do on ALPHA
        assert (await client.get(item, headers=workspace.headers(ana))).status_code == 200
        refused = await client.post("/api/v1/work-items", json=new_item, headers=workspace.headers(ana, **idem()))
        assert refused.status_code == 403
    promoted = await db.execute(
        "UPDATE memberships SET role = 'contributor' WHERE principal_id = $1", ana_id := workspace.principals["ana"]
    )
    assert promoted == "UPDATE 1"
    await change_feed.caught_up()  # a change made by anyone reaches this process's cache through the feed
    allowed = await client.post("/api/v1/work-items", json=new_item, headers=workspace.headers(ana, **idem()))
    assert allowed.status_code == 201
    await db.execute("DELETE FROM memberships WHERE principal_id = $1", ana_id)
    await change_feed.caught_up()
    assert (await client.get(item, headers=workspace.headers(ana))).status_code == 404
    gone = await client.post("/api/v1/work-items", json=new_item, headers=workspace.headers(ana, **idem()))
    assert gone.status_code == 422 and gone.json()["code"] == "validation_failed"  # an unseen project is unknown
    titles = [r["title"] for r in await db.fetch("SELECT title FROM work_items WHERE workspace_id = $1", workspace.id)]
    assert sorted(titles) == ["Alpha", "By Ana"]  # exactly one item by Ana: the refused calls wrote nothing


def test_token_bucket_refuses_past_capacity_and_says_when_to_retry() -> None:
    buckets = TokenBuckets(per_minute=2)
    assert buckets.take("k", now=0.0) == 0 and buckets.take("k", now=0.0) == 0
    wait = buckets.take("k", now=0.0)
    assert 29 < wait <= 30
    assert buckets.take("other", now=0.0) == 0
    assert buckets.take("k", now=31.0) == 0


async def test_a_key_past_its_rate_limit_gets_429_with_retry_after(settings, workspace: Workspace) -> None:
    from dataclasses import replace

    from tests.conftest import serving

    key = await workspace.key("admin", admin=True)
    async with (
        serving(replace(settings, rate_limit_per_minute=3)) as url,
        httpx.AsyncClient(base_url=url) as limited,
    ):
        statuses = [(await limited.get("/api/v1/projects", headers=workspace.headers(key))) for _ in range(4)]
    assert [r.status_code for r in statuses] == [200, 200, 200, 429]
    assert statuses[-1].json()["code"] == "rate_limited"
    assert int(statuses[-1].headers["retry-after"]) >= 1
    # Every answer states the quota and what is left of it (IETF RateLimit fields), the refusal included.
    assert {r.headers["ratelimit-policy"] for r in statuses} == {'"per-key";q=3;w=60'}
    assert [r.headers["ratelimit"].split(";")[1] for r in statuses] == ["r=2", "r=1", "r=0", "r=0"]


async def test_requests_without_a_valid_key_are_rate_limited_per_client_address(settings, workspace: Workspace) -> None:
    from dataclasses import replace

    from tests.conftest import serving

    key = await workspace.key("admin", admin=True)
    async with (
        serving(replace(settings, anonymous_rate_limit_per_minute=4)) as url,
        httpx.AsyncClient(base_url=url) as http,
    ):
        # Requests with a valid key never spend the address's budget.
        for _ in range(6):
            assert (await http.get("/api/v1/projects", headers=workspace.headers(key))).status_code == 200
        attempts = [
            await http.get("/api/v1/projects"),  # no key
            await http.get("/api/v1/projects", headers=workspace.headers("gw_unknown")),  # unknown key
            await http.post("/graphql", json={"query": "{ viewer { name } }"}),  # keyless GraphQL
            await http.get("/api/v1/projects", headers=workspace.headers("gw_unknown-2")),
        ]
        assert [r.status_code for r in attempts] == [401, 401, 200, 401]
        limited = await http.get("/api/v1/projects")
        assert limited.status_code == 429 and limited.json()["code"] == "rate_limited"
        assert int(limited.headers["retry-after"]) >= 1
        assert (await http.post("/graphql", json={"query": "{ viewer { name } }"})).status_code == 429
        # An address that spent its budget on failures gets no key lookups until it refills, valid keys included.
        assert (await http.get("/api/v1/projects", headers=workspace.headers("gw_guess"))).status_code == 429
        assert (await http.get("/api/v1/projects", headers=workspace.headers(key))).status_code == 429
        # Probes and the API documents stay open.
        assert (await http.get("/health/live")).status_code == 200
        assert (await http.get("/schema/openapi.json")).status_code == 200


def test_address_buckets_forget_idle_addresses_past_the_limit() -> None:
    buckets = TokenBuckets(per_minute=60)
    buckets.PRUNE_ABOVE = 3
    for address in ("a", "b", "c"):
        buckets.take(address, now=0.0)
    assert buckets.take("d", now=120.0) == 0  # a, b and c refilled long ago: forgotten, d fits
    assert set(buckets._buckets) == {"d"}
