"""Unknown input is refused, never ignored, on every route and tool, generated from what the apps serve.

- every route of both OpenAPI documents (public, Agent API, internal) refuses an unknown query parameter
  with 400 `invalid_request` naming it, and every list filter with a closed set of values refuses one
  outside it with 422 `validation_failed` naming the filter;
- every route that takes a body refuses one sent as anything but `application/json` with 415, and a body
  field it does not know with 400 naming each, and nothing is created;
- every MCP tool refuses an argument it does not take, each named, and its input schema says so;
- GraphQL refuses unknown members of its request and unknown query parameters alike.
"""

from __future__ import annotations

import json
import re
from typing import Any

import httpx

from groundwork.persistence.repositories.platform import outbox
from tests.conftest import Workspace, idem, invalid_params, mcp_session

UNKNOWN = "unknown_parameter"


async def _operations(http: httpx.AsyncClient) -> list[tuple[str, str, dict[str, Any], dict[str, Any]]]:
    document = (await http.get("/schema/openapi.json")).json()
    return [
        (method.upper(), path, operation, document)
        for path, item in document["paths"].items()
        for method, operation in item.items()
        if not path.startswith("/graphql")
    ]


def _filled(path: str) -> str:
    return re.sub(r"\{[^}]+\}", "x", path)


def _headers(key: str, method: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {key}", **(idem() if method != "GET" else {})}


def _problem(response: httpx.Response, status: int, code: str, where: str) -> dict[str, Any]:
    assert response.status_code == status, (where, response.status_code, response.text)
    assert response.headers["content-type"].startswith("application/problem+json"), where
    body = dict(response.json())
    assert body["code"] == code, (where, body)
    return body


async def test_every_route_refuses_an_unknown_query_parameter_naming_it(
    client: httpx.AsyncClient, internal_client: httpx.AsyncClient, workspace: Workspace
) -> None:
    admin = await workspace.key(admin=True)
    provider = await workspace.provider_key()
    checked = 0
    for http, key in ((client, admin), (internal_client, provider)):
        for method, path, _, _ in await _operations(http):
            response = await http.request(
                method, _filled(path), params={UNKNOWN: "1", "limit": "5"}, headers=_headers(key, method)
            )
            where = f"{method} {path}"
            body = _problem(response, 400, "invalid_request", where)
            assert UNKNOWN in [e["path"] for e in body["errors"]], (where, body)
            checked += 1
    assert checked >= 60, checked


def _enum_filters(operation: dict[str, Any]) -> list[str]:
    return [
        p["name"]
        for p in operation.get("parameters") or []
        if p.get("in") == "query" and (p.get("schema") or {}).get("enum")
    ]


async def test_every_list_filter_with_a_closed_set_refuses_a_value_outside_it(
    client: httpx.AsyncClient, workspace: Workspace
) -> None:
    admin = await workspace.key(admin=True)
    filtered = 0
    for method, path, operation, _ in await _operations(client):
        for name in _enum_filters(operation):
            response = await client.request(
                method, _filled(path), params={name: "bogus"}, headers=_headers(admin, method)
            )
            where = f"{method} {path} ?{name}=bogus"
            body = _problem(response, 422, "validation_failed", where)
            assert [e["path"] for e in body["errors"]] == [name], (where, body)
            assert "must be one of" in body["errors"][0]["message"], (where, body)
            filtered += 1
    # state, action, field, type, status, source_kind, event_type, contribution_type over the list routes.
    assert filtered >= 12, filtered


async def test_every_body_sent_as_anything_but_json_is_refused_and_creates_nothing(
    client: httpx.AsyncClient, internal_client: httpx.AsyncClient, workspace: Workspace
) -> None:
    admin = await workspace.key(admin=True)
    provider = await workspace.provider_key()
    before = len(await outbox.events_for_workspace(workspace.id))
    checked = 0
    for http, key in ((client, admin), (internal_client, provider)):
        for method, path, _, _ in await _operations(http):
            if method not in ("POST", "PUT", "PATCH"):
                continue
            for media_type in ("text/plain", "application/x-www-form-urlencoded", None):
                headers = _headers(key, method) | ({"Content-Type": media_type} if media_type else {})
                response = await http.request(method, _filled(path), content=b'{"confirm": true}', headers=headers)
                where = f"{method} {path} as {media_type}"
                body = _problem(response, 415, "unsupported_media_type", where)
                assert "application/json" in body["detail"], where
                checked += 1
    assert checked >= 3 * 25, checked
    assert len(await outbox.events_for_workspace(workspace.id)) == before
    listed = await client.get("/api/v1/work-items", headers={"Authorization": f"Bearer {admin}"})
    assert listed.json()["data"] == []


async def test_a_json_body_with_a_text_content_type_creates_no_work_item(
    client: httpx.AsyncClient, workspace: Workspace
) -> None:
    admin = await workspace.key(admin=True)
    body = json.dumps({"project_id": workspace.projects["ALPHA"], "title": "Sent as text"}).encode()
    response = await client.post(
        "/api/v1/work-items", content=body, headers={**_headers(admin, "POST"), "Content-Type": "text/plain"}
    )
    _problem(response, 415, "unsupported_media_type", "POST /api/v1/work-items")
    listed = await client.get("/api/v1/work-items", headers={"Authorization": f"Bearer {admin}"})
    assert listed.json()["data"] == []


async def test_every_unknown_body_field_is_named_and_nothing_is_created(
    client: httpx.AsyncClient, workspace: Workspace
) -> None:
    admin = await workspace.key(admin=True)
    body = {"project_id": workspace.projects["ALPHA"], "title": "x", "colour": "red", "priority": 1}
    response = await client.post("/api/v1/work-items", json=body, headers=_headers(admin, "POST"))
    problem = _problem(response, 400, "invalid_request", "POST /api/v1/work-items")
    assert sorted(e["path"] for e in problem["errors"]) == ["colour", "priority"]
    nested = {"target": {"type": "work_item", "id": "wi_x", "shape": 1}, "actions": ["estimate"], "confirm": True}
    response = await client.post("/api/v1/work-item-enhancements", json=nested, headers=_headers(admin, "POST"))
    problem = _problem(response, 400, "invalid_request", "POST /api/v1/work-item-enhancements")
    assert [e["path"] for e in problem["errors"]] == ["target.shape"]
    assert (await client.get("/api/v1/work-items", headers={"Authorization": f"Bearer {admin}"})).json()["data"] == []


async def test_a_route_without_a_body_takes_none_or_the_empty_object(
    client: httpx.AsyncClient, workspace: Workspace
) -> None:
    admin = await workspace.key(admin=True)
    path = "/api/v1/connected-apps/app_x/activate"
    assert (await client.post(path, headers=_headers(admin, "POST"))).status_code == 404
    assert (await client.post(path, json={}, headers=_headers(admin, "POST"))).status_code == 404
    problem = _problem(
        await client.post(path, json={"now": True}, headers=_headers(admin, "POST")), 400, "invalid_request", path
    )
    assert [e["path"] for e in problem["errors"]] == ["now"]


def _sample(schema: dict[str, Any]) -> Any:
    """A value of the JSON kind `schema` takes (its first)."""
    if "const" in schema:
        return schema["const"]
    kinds = schema.get("type")
    kind = str(kinds[0] if isinstance(kinds, list) else kinds)
    if kinds is None and schema.get("anyOf"):
        return _sample(schema["anyOf"][0])
    return {"string": "x", "integer": 1, "number": 1, "boolean": True, "array": [], "object": {}}.get(kind, "x")


async def test_every_mcp_tool_refuses_an_argument_it_does_not_take(api_url: str, workspace: Workspace) -> None:
    admin = await workspace.key(admin=True)
    async with mcp_session(api_url, admin) as session:
        tools = (await session.list_tools()).tools
        assert len(tools) >= 20
        for tool in tools:
            schema = tool.input_schema
            assert schema.get("additionalProperties") is False, tool.name
            properties = schema.get("properties") or {}
            arguments = {name: _sample(properties[name]) for name in schema.get("required") or []}
            arguments |= {UNKNOWN: 1, "dry_run": True}
            error = await invalid_params(session, tool.name, arguments)
            assert error["code"] == "invalid_request", (tool.name, error)
            unknown = [e["path"] for e in error["errors"] if e["message"].startswith("is not an argument")]
            assert sorted(unknown) == ["dry_run", UNKNOWN], (tool.name, error)


async def test_graphql_refuses_unknown_request_members_and_query_parameters(
    client: httpx.AsyncClient, workspace: Workspace
) -> None:
    headers = {"Authorization": f"Bearer {await workspace.key(admin=True)}"}
    response = await client.post("/graphql", json={"query": "{ viewer { id } }", "operation": "x"}, headers=headers)
    assert response.status_code == 400, response.text
    [error] = response.json()["errors"]
    assert error["extensions"]["code"] == "invalid_request"
    assert [e["path"] for e in error["extensions"]["errors"]] == ["operation"]
    response = await client.get("/graphql", params={"query": "{ viewer { id } }", UNKNOWN: "1"}, headers=headers)
    assert response.status_code == 400 and response.json()["errors"][0]["extensions"]["code"] == "invalid_request"
    response = await client.post(
        "/graphql", content=b'{"query": "{ viewer { id } }"}', headers={**headers, "Content-Type": "text/plain"}
    )
    assert response.status_code == 415
    assert response.json()["errors"][0]["extensions"]["code"] == "unsupported_media_type"
    ok = await client.get("/graphql", params={"query": "{ viewer { id } }"}, headers=headers)
    assert ok.status_code == 200 and ok.json()["data"]["viewer"]["id"]
