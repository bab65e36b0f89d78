"""Every enhancement endpoint checks its scope; other workspaces and invisible projects are 404."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from groundwork.persistence.repositories.tenancy import workspaces as tenancy
from tests.conftest import Workspace, idem
from tests.integration.enhancement.conftest import create_run

ENDPOINTS = [
    ("POST", "/api/v1/work-item-enhancements", "work-item-enhance:run"),
    ("GET", "/api/v1/work-item-enhancements", "work-item-enhance:read"),
    ("GET", "/api/v1/work-item-enhancements/{run}", "work-item-enhance:read"),
    ("POST", "/api/v1/work-item-enhancements/{run}/actions", "work-item-enhance:run"),
    ("GET", "/api/v1/work-item-enhancements/{run}/drafts", "work-item-enhance:read"),
    ("GET", "/api/v1/work-item-enhancements/{run}/artifacts", "work-item-enhance:read"),
    ("POST", "/api/v1/work-item-enhancements/{run}/apply", "work-item-enhance:apply"),
    ("GET", "/api/v1/operations/{run}", "work-item-enhance:read"),
]
ALL_ENHANCE = ["work-item-enhance:run", "work-item-enhance:read", "work-item-enhance:apply"]


@pytest.fixture
async def run(client: httpx.AsyncClient, workspace: Workspace, work_item: dict[str, Any], worker: Any) -> dict:
    key = await workspace.key("owner", admin=True)
    return (await create_run(client, workspace, key, work_item["id"], ["description"])).json()["data"]


async def test_every_endpoint_without_its_scope_is_403(
    client: httpx.AsyncClient, workspace: Workspace, run: dict[str, Any]
) -> None:
    for method, path, scope in ENDPOINTS:
        others = [s for s in ALL_ENHANCE if s != scope] + ["work-items:read"]
        key = await workspace.key(f"no-{scope.split(':')[1]}", others, admin=True)
        response = await client.request(
            method, path.format(run=run["id"]), json={}, headers=workspace.headers(key, **idem())
        )
        assert response.status_code == 403, (method, path, response.text)
        assert response.json()["required_scope"] == scope


async def test_another_workspaces_run_is_404_everywhere(
    client: httpx.AsyncClient, workspace: Workspace, run: dict[str, Any]
) -> None:
    other = await tenancy.create_workspace(f"x-{workspace.slug}", "Elsewhere")
    outsider = Workspace(other.id, other.slug)
    key = await outsider.key("intruder", admin=True)
    bodies = {
        "actions": {"action": "estimate", "confirm": True},
        "apply": {
            "draft_ids": [run["drafts"][0]["id"]],
            "expected_target_version": run["target"]["version"],
            "confirm": True,
        },
    }
    for method, path, _ in ENDPOINTS[2:]:
        body = bodies.get(path.rsplit("/", 1)[-1], {})
        response = await client.request(
            method, path.format(run=run["id"]), json=body, headers=outsider.headers(key, **idem())
        )
        assert response.status_code == 404, (method, path, response.text)
    listing = await client.get("/api/v1/work-item-enhancements", headers=outsider.headers(key))
    assert listing.json()["data"] == []
    create = await create_run(client, outsider, key, run["target"]["id"], ["estimate"])
    assert create.status_code == 404


async def test_members_see_runs_of_their_projects_only_and_viewers_cannot_apply(
    client: httpx.AsyncClient, workspace: Workspace, run: dict[str, Any]
) -> None:
    stranger = await workspace.key("stranger", memberships={"BETA": "lead"})
    assert (
        await client.get(f"/api/v1/work-item-enhancements/{run['id']}", headers=workspace.headers(stranger))
    ).status_code == 404
    viewer = await workspace.key("viewer", memberships={"ALPHA": "viewer"})
    seen = await client.get(f"/api/v1/work-item-enhancements/{run['id']}", headers=workspace.headers(viewer))
    assert seen.status_code == 200
    response = await client.post(
        f"/api/v1/work-item-enhancements/{run['id']}/apply",
        json={
            "draft_ids": [run["drafts"][0]["id"]],
            "expected_target_version": run["target"]["version"],
            "confirm": True,
        },
        headers=workspace.headers(viewer, **idem()),
    )
    assert response.status_code == 403 and response.json()["code"] == "permission_denied"


async def test_list_filters_and_pagination(
    client: httpx.AsyncClient, workspace: Workspace, work_item: dict[str, Any], worker: Any
) -> None:
    key = await workspace.key("owner", admin=True)
    runs = [
        (await create_run(client, workspace, key, work_item["id"], [action])).json()["data"]
        for action in ("estimate", "risk_check", "estimate")
    ]
    estimate = (
        await client.get(
            "/api/v1/work-item-enhancements", params={"action": "estimate"}, headers=workspace.headers(key)
        )
    ).json()["data"]
    assert [r["id"] for r in estimate] == [runs[2]["id"], runs[0]["id"]]
    first = (
        await client.get("/api/v1/work-item-enhancements", params={"limit": 2}, headers=workspace.headers(key))
    ).json()
    assert first["page"]["hasMore"] is True
    rest = (
        await client.get(
            "/api/v1/work-item-enhancements",
            params={"limit": 2, "cursor": first["page"]["nextCursor"]},
            headers=workspace.headers(key),
        )
    ).json()
    assert [r["id"] for r in first["data"] + rest["data"]] == [r["id"] for r in reversed(runs)]
    ready = (
        await client.get(
            "/api/v1/work-item-enhancements", params={"state": "ready_for_review"}, headers=workspace.headers(key)
        )
    ).json()["data"]
    assert len(ready) == 3
    run_id = runs[1]["id"]
    drafts = (
        await client.get(
            f"/api/v1/work-item-enhancements/{run_id}/drafts",
            params={"field": "risks", "apply_eligible": "true"},
            headers=workspace.headers(key),
        )
    ).json()["data"]
    assert [d["field"] for d in drafts] == ["risks"]
    artifacts = (
        await client.get(
            f"/api/v1/work-item-enhancements/{run_id}/artifacts",
            params={"type": "risk_report"},
            headers=workspace.headers(key),
        )
    ).json()["data"]
    assert [a["type"] for a in artifacts] == ["risk_report"]
