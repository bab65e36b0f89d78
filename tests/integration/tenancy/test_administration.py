"""Administration over REST (issue 33): a workspace admin builds portfolios, engagements, projects, principals,
memberships and keys; others are refused; `/me` and the directory show only what the caller may know."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import httpx

from tests.conftest import Workspace, idem


def _data(response: httpx.Response, status: int = 200) -> Any:
    assert response.status_code == status, response.text
    return response.json()["data"]


async def _structure(client: httpx.AsyncClient, workspace: Workspace, admin: str) -> dict[str, str]:
    h = workspace.headers
    portfolio = _data(await client.post("/api/v1/portfolios", json={"name": "Cards"}, headers=h(admin, **idem())), 201)
    engagement = _data(
        await client.post(
            "/api/v1/engagements",
            json={"name": "Issuing", "portfolio_id": portfolio["id"]},
            headers=h(admin, **idem()),
        ),
        201,
    )
    project = _data(
        await client.post(
            "/api/v1/projects",
            json={"key": "CARDS", "name": "Card issuing", "engagement_id": engagement["id"]},
            headers=h(admin, **idem()),
        ),
        201,
    )
    return {"portfolio": portfolio["id"], "engagement": engagement["id"], "project": project["id"]}


async def test_an_admin_builds_portfolio_engagement_project_and_sees_them_linked(
    client: httpx.AsyncClient, workspace: Workspace
) -> None:
    admin = await workspace.key("admin", admin=True)
    ids = await _structure(client, workspace, admin)
    projects = _data(await client.get("/api/v1/projects", headers=workspace.headers(admin)))
    [cards] = [p for p in projects if p["key"] == "CARDS"]
    assert cards["engagement"] == {"id": ids["engagement"], "name": "Issuing"}
    assert cards["portfolio"] == {"id": ids["portfolio"], "name": "Cards"}
    engagements = _data(
        await client.get(
            "/api/v1/engagements", params={"portfolio_id": ids["portfolio"]}, headers=workspace.headers(admin)
        )
    )
    assert [e["id"] for e in engagements] == [ids["engagement"]]
    portfolios = _data(await client.get("/api/v1/portfolios", headers=workspace.headers(admin)))
    assert {p["name"] for p in portfolios} == {"Portfolio", "Cards"}

    taken = await client.post(
        "/api/v1/projects",
        json={"key": "CARDS", "name": "Again", "engagement_id": ids["engagement"]},
        headers=workspace.headers(admin, **idem()),
    )
    assert taken.status_code == 422 and taken.json()["errors"][0]["path"] == "key"
    bad_key = await client.post(
        "/api/v1/projects",
        json={"key": "cards", "name": "Lower", "engagement_id": ids["engagement"]},
        headers=workspace.headers(admin, **idem()),
    )
    assert bad_key.status_code == 422 and bad_key.json()["errors"][0]["path"] == "key"

    renamed = _data(
        await client.patch(
            f"/api/v1/projects/{ids['project']}",
            json={"name": "Cards", "archived": True},
            headers=workspace.headers(admin),
        )
    )
    assert renamed["name"] == "Cards" and renamed["archivedAt"] is not None
    refused = await client.post(
        "/api/v1/work-items",
        json={"project_id": ids["project"], "title": "After archive"},
        headers=workspace.headers(admin, **idem()),
    )
    assert refused.status_code == 422 and "archived" in refused.text
    restored = _data(
        await client.patch(
            f"/api/v1/projects/{ids['project']}", json={"archived": False}, headers=workspace.headers(admin)
        )
    )
    assert restored["archivedAt"] is None


async def test_members_principals_and_keys_made_over_rest_work_for_the_new_colleague(
    client: httpx.AsyncClient, workspace: Workspace
) -> None:
    admin = await workspace.key("admin", admin=True)
    h = workspace.headers
    ids = await _structure(client, workspace, admin)
    dana = _data(
        await client.post("/api/v1/principals", json={"name": "dana", "kind": "user"}, headers=h(admin, **idem())), 201
    )
    assert dana["isAdmin"] is False
    member = _data(
        await client.put(
            f"/api/v1/projects/{ids['project']}/members/{dana['id']}", json={"role": "contributor"}, headers=h(admin)
        )
    )
    assert member["role"] == "contributor" and member["principal"]["id"] == dana["id"]
    members = _data(await client.get(f"/api/v1/projects/{ids['project']}/members", headers=h(admin)))
    assert [(m["principal"]["name"], m["role"]) for m in members] == [("dana", "contributor")]

    expires = (datetime.now(UTC) + timedelta(days=30)).isoformat().replace("+00:00", "Z")
    made = _data(
        await client.post(
            "/api/v1/api-keys",
            json={
                "principal_id": dana["id"],
                "scopes": ["work-items:read", "notifications:read"],
                "expires_at": expires,
            },
            headers=h(admin, **idem()),
        ),
        201,
    )
    secret = made["secret"]
    assert secret.startswith("gw_") and made["expiresAt"] is not None
    listing = await client.get("/api/v1/api-keys", headers=h(admin))
    assert listing.status_code == 200 and secret not in listing.text
    assert made["id"] in [k["id"] for k in listing.json()["data"]]

    me = _data(await client.get("/api/v1/me", headers=h(secret)))
    assert me["principal"] == {"id": dana["id"], "name": "dana", "kind": "user", "isAdmin": False}
    assert me["workspace"]["slug"] == workspace.slug
    assert me["scopes"] == ["notifications:read", "work-items:read"]
    assert me["projectRoles"] == [{"projectId": ids["project"], "projectKey": "CARDS", "role": "contributor"}]
    seen = _data(await client.get("/api/v1/projects", headers=h(secret)))
    assert [p["key"] for p in seen] == ["CARDS"]

    # Dana's own key may not administer, nor mint keys beyond what it holds or for others.
    refused = await client.post("/api/v1/portfolios", json={"name": "Mine"}, headers=h(secret, **idem()))
    assert refused.status_code == 403 and refused.json()["required_scope"] == "workspace:admin"
    wider = await client.post(
        "/api/v1/api-keys",
        json={"principal_id": dana["id"], "scopes": ["work-items:write"]},
        headers=h(secret, **idem()),
    )
    assert wider.status_code == 422 and wider.json()["errors"][0]["path"] == "scopes"
    for_admin = await client.post(
        "/api/v1/api-keys",
        json={"principal_id": workspace.principals["admin"], "scopes": ["work-items:read"]},
        headers=h(secret, **idem()),
    )
    assert for_admin.status_code == 422 and for_admin.json()["errors"][0]["path"] == "principal_id"
    own = _data(
        await client.post(
            "/api/v1/api-keys",
            json={"principal_id": dana["id"], "scopes": ["work-items:read"]},
            headers=h(secret, **idem()),
        ),
        201,
    )
    own_listing = _data(await client.get("/api/v1/api-keys", headers=h(secret)))
    assert {k["id"] for k in own_listing} == {made["id"], own["id"]}  # only Dana's keys

    revoked = await client.delete(f"/api/v1/api-keys/{made['id']}", headers=h(admin))
    assert revoked.status_code == 204
    assert (await client.get("/api/v1/me", headers=h(secret))).status_code == 401

    removed = await client.delete(f"/api/v1/projects/{ids['project']}/members/{dana['id']}", headers=h(admin))
    assert removed.status_code == 204
    assert _data(await client.get("/api/v1/projects", headers=h(own["secret"]))) == []


async def test_the_directory_lists_only_people_who_share_a_project_and_nothing_of_their_activity(
    client: httpx.AsyncClient, workspace: Workspace
) -> None:
    admin = await workspace.key("admin", admin=True)
    alice = await workspace.key("alice", memberships={"ALPHA": "lead"})
    await workspace.key("bob", memberships={"ALPHA": "viewer"})
    await workspace.key("carol", memberships={"BETA": "lead"})
    await workspace.provider_key()
    listed = _data(await client.get("/api/v1/principals", headers=workspace.headers(alice)))
    assert listed == sorted(listed, key=lambda p: p["name"])
    assert [p["name"] for p in listed] == ["alice", "bob"]  # not carol (BETA only), not the provider, no admin
    assert all(set(p) == {"id", "name", "kind"} for p in listed)
    everyone = _data(await client.get("/api/v1/principals", headers=workspace.headers(admin)))
    assert [p["name"] for p in everyone] == ["admin", "alice", "bob", "carol"]
    queried = _data(await client.get("/api/v1/principals", params={"query": "CAR"}, headers=workspace.headers(admin)))
    assert [p["name"] for p in queried] == ["carol"]
    hidden = await client.get(
        "/api/v1/principals", params={"project_id": workspace.projects["BETA"]}, headers=workspace.headers(alice)
    )
    assert hidden.status_code == 404
    no_scope = await workspace.key("dora", ["work-items:read"], memberships={"ALPHA": "viewer"})
    refused = await client.get("/api/v1/principals", headers=workspace.headers(no_scope))
    assert refused.status_code == 403 and refused.json()["code"] == "insufficient_scope"


async def test_workspace_admin_is_never_granted_to_a_non_admin(client: httpx.AsyncClient, workspace: Workspace) -> None:
    everything = await workspace.key("lead", memberships={"ALPHA": "lead"})  # "every scope", not an admin
    me = _data(await client.get("/api/v1/me", headers=workspace.headers(everything)))
    assert "workspace:admin" not in me["scopes"] and "connected-apps:manage" in me["scopes"]
    refused = await client.get("/api/v1/portfolios", headers=workspace.headers(everything))
    assert refused.status_code == 403 and refused.json()["required_scope"] == "workspace:admin"
