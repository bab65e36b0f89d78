"""Every failure is RFC 9457 problem+json with a stable code, and no caller input yields a 500."""

from __future__ import annotations

import httpx
import pytest

from tests.conftest import Workspace, idem


def assert_problem(response: httpx.Response, status: int, code: str) -> dict:
    assert response.status_code == status, response.text
    assert response.headers["content-type"].startswith("application/problem+json")
    body = response.json()
    assert body["status"] == status and body["code"] == code
    assert {"type", "title", "detail"} <= body.keys()
    return body


async def test_unknown_route_is_404_problem(client: httpx.AsyncClient) -> None:
    assert_problem(await client.get("/api/v1/nothing-here"), 404, "not_found")


async def test_wrong_method_is_405_problem(client: httpx.AsyncClient, workspace: Workspace) -> None:
    key = await workspace.key(admin=True)
    assert_problem(await client.delete("/api/v1/work-items", headers=workspace.headers(key)), 405, "method_not_allowed")


async def test_malformed_json_is_400_invalid_request(client: httpx.AsyncClient, workspace: Workspace) -> None:
    key = await workspace.key(admin=True)
    response = await client.post(
        "/api/v1/work-items",
        content=b'{"title": ',
        headers=workspace.headers(key, **idem(), **{"content-type": "application/json"}),
    )
    assert_problem(response, 400, "invalid_request")


async def test_unknown_field_is_400_naming_the_field(client: httpx.AsyncClient, workspace: Workspace) -> None:
    key = await workspace.key(admin=True)
    response = await client.post(
        "/api/v1/work-items",
        json={"project_id": workspace.projects["ALPHA"], "title": "x", "colour": "red"},
        headers=workspace.headers(key, **idem()),
    )
    body = assert_problem(response, 400, "invalid_request")
    assert any("colour" in e["message"] or "colour" in e["path"] for e in body["errors"])


async def test_wrong_type_is_400_with_its_path(client: httpx.AsyncClient, workspace: Workspace) -> None:
    key = await workspace.key(admin=True)
    response = await client.post(
        "/api/v1/work-items",
        json={"project_id": workspace.projects["ALPHA"], "title": 42},
        headers=workspace.headers(key, **idem()),
    )
    body = assert_problem(response, 400, "invalid_request")
    assert any(e["path"] == "title" for e in body["errors"])


async def test_bad_query_parameter_is_400(client: httpx.AsyncClient, workspace: Workspace) -> None:
    key = await workspace.key(admin=True)
    body = assert_problem(
        await client.get("/api/v1/work-items?limit=abc", headers=workspace.headers(key)),
        400,
        "invalid_request",
    )
    assert body["errors"]
    assert_problem(
        await client.get("/api/v1/work-items?limit=1000", headers=workspace.headers(key)),
        400,
        "invalid_request",
    )
    assert_problem(
        await client.get("/api/v1/work-items?cursor=%%%", headers=workspace.headers(key)),
        400,
        "invalid_request",
    )


async def test_oversize_body_is_413_problem(client: httpx.AsyncClient, workspace: Workspace) -> None:
    key = await workspace.key(admin=True)
    huge = {
        "project_id": workspace.projects["ALPHA"],
        "title": "x",
        "fields": {"description": "a" * 2_000_000},
    }
    assert_problem(
        await client.post("/api/v1/work-items", json=huge, headers=workspace.headers(key, **idem())),
        413,
        "payload_too_large",
    )


async def test_rule_breaking_values_are_422_validation_failed(client: httpx.AsyncClient, workspace: Workspace) -> None:
    key = await workspace.key(admin=True)
    response = await client.post(
        "/api/v1/work-items",
        json={
            "project_id": workspace.projects["ALPHA"],
            "title": " ",
            "status": "sideways",
            "fields": {"estimate": -3, "colour": "x"},
        },
        headers=workspace.headers(key, **idem()),
    )
    body = assert_problem(response, 422, "validation_failed")
    paths = {e["path"] for e in body["errors"]}
    assert {"title", "status", "fields.estimate", "fields.colour"} <= paths


@pytest.mark.parametrize(
    "payload",
    [
        [],
        "text",
        12,
        None,
        {"project_id": None, "title": "x"},
        {"project_id": "prj_x", "title": "x", "watchers": "a"},
        {"project_id": "prj_x", "title": "x", "fields": []},
        {"project_id": "prj_x", "title": "\u0000" * 3},
    ],
)
async def test_odd_bodies_never_answer_500(client: httpx.AsyncClient, workspace: Workspace, payload: object) -> None:
    key = await workspace.key(admin=True)
    response = await client.post("/api/v1/work-items", json=payload, headers=workspace.headers(key, **idem()))
    assert 400 <= response.status_code < 500, response.text
    assert response.headers["content-type"].startswith("application/problem+json")


async def test_nul_characters_forged_cursors_and_absurd_versions_are_400s(
    client: httpx.AsyncClient, workspace: Workspace
) -> None:
    key = await workspace.key(admin=True)
    nul = await client.post(
        "/api/v1/work-items",
        json={"project_id": workspace.projects["ALPHA"], "title": "a\u0000b"},
        headers=workspace.headers(key, **idem()),
    )
    assert_problem(nul, 400, "invalid_request")
    assert_problem(
        await client.get("/api/v1/work-items?status=to%00do", headers=workspace.headers(key)), 422, "validation_failed"
    )
    assert_problem(
        await client.get("/api/v1/work-items?sprint=S%001", headers=workspace.headers(key)), 400, "invalid_request"
    )
    forged = "eyJpZCI6MX0"  # {"id": 1}
    assert_problem(
        await client.get(f"/api/v1/work-items?cursor={forged}", headers=workspace.headers(key)), 400, "invalid_request"
    )
    item = (
        await client.post(
            "/api/v1/work-items",
            json={"project_id": workspace.projects["ALPHA"], "title": "ok"},
            headers=workspace.headers(key, **idem()),
        )
    ).json()["data"]
    absurd = await client.patch(
        f"/api/v1/work-items/{item['id']}",
        json={"expected_version": "0001-01-01T00:00:00+01:00", "title": "x"},
        headers=workspace.headers(key),
    )
    assert_problem(absurd, 422, "validation_failed")
