"""The served OpenAPI document is typed and complete: every success body is a named component generated from the
Struct the handler returns, response objects are camelCase, and the headers a client relies on are declared
(`Location`, `WWW-Authenticate`, `RateLimit-Policy` / `RateLimit`) and sent."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from tests.conftest import Workspace, idem

METHODS = ("get", "put", "post", "delete", "patch")
CAMEL = re.compile(r"^[a-z][a-zA-Z0-9]*$")
# The preferences document is what PUT takes back, so it keeps the request body's snake_case (docs/decisions.md).
REQUEST_SHAPED = {"NotificationPreferences", "Channels", "InAppChannel", "EmailChannel", "ChatChannel"}


async def _served(base_url: str) -> dict[str, Any]:
    async with httpx.AsyncClient(base_url=base_url) as http:
        answer = await http.get("/schema/openapi.json")
    assert answer.status_code == 200, answer.text
    return dict(answer.json())


@pytest.fixture(scope="module")
async def public_document(api_url: str) -> dict[str, Any]:
    return await _served(api_url)


@pytest.fixture(scope="module")
async def internal_document(internal_api_url: str) -> dict[str, Any]:
    return await _served(internal_api_url)


@pytest.fixture(params=["public", "internal"])
def document(
    request: pytest.FixtureRequest, public_document: dict[str, Any], internal_document: dict[str, Any]
) -> dict[str, Any]:
    """The public API's document, then the internal listener's: the same rules hold for both."""
    return public_document if request.param == "public" else internal_document


def operations(document: dict[str, Any]) -> Iterator[tuple[str, str, dict[str, Any]]]:
    for path, item in document["paths"].items():
        for method in METHODS:
            if method in item:
                yield path, method, item[method]


def successes(operation: dict[str, Any]) -> Iterator[tuple[str, dict[str, Any]]]:
    for status, response in operation["responses"].items():
        if status.startswith("2"):
            yield status, response


def component(document: dict[str, Any], ref: str) -> tuple[str, dict[str, Any]]:
    name = ref.rsplit("/", 1)[-1]
    return name, document["components"]["schemas"][name]


async def test_every_json_success_body_is_a_named_component_with_properties(document: dict[str, Any]) -> None:
    untyped = []
    for path, method, operation in operations(document):
        for status, response in successes(operation):
            content = response.get("content") or {}
            if status == "204" or "application/json" not in content:
                # No body (204), a page (text/html) or an event stream (text/event-stream).
                assert status == "204" or set(content) & {"text/html", "text/event-stream"}, (path, method, status)
                continue
            schema = content["application/json"]["schema"]
            if "$ref" not in schema:
                untyped.append(f"{method.upper()} {path} {status}: {schema}")
                continue
            _, body = component(document, schema["$ref"])
            if not body.get("properties") or body.get("additionalProperties") == {}:
                untyped.append(f"{method.upper()} {path} {status}: {schema['$ref']} has no properties")
    assert untyped == []


def test_schema_counts_match_what_the_issue_measured(document: dict[str, Any]) -> None:
    # The issue measured 56 `additionalProperties: {}` success bodies and 4 `{}`: none is left.
    bodies = [
        response["content"]["application/json"]["schema"]
        for _, _, operation in operations(document)
        for _, response in successes(operation)
        if "application/json" in (response.get("content") or {})
    ]
    assert bodies and all("$ref" in body for body in bodies)


def test_every_201_and_202_declares_location(document: dict[str, Any]) -> None:
    missing = [
        f"{method.upper()} {path} {status}"
        for path, method, operation in operations(document)
        for status, response in successes(operation)
        if status in ("201", "202") and "Location" not in (response.get("headers") or {})
    ]
    assert missing == []


def test_every_operation_is_described_and_tagged_with_defined_tags(document: dict[str, Any]) -> None:
    defined = {tag["name"] for tag in document["tags"] if tag.get("description")}
    for path, method, operation in operations(document):
        assert operation.get("description"), f"{method.upper()} {path} has no description"
        assert operation.get("tags"), f"{method.upper()} {path} has no tag"
        assert set(operation["tags"]) <= defined, f"{method.upper()} {path}: {operation['tags']} not all defined"


def test_401_declares_www_authenticate_and_rate_limited_routes_declare_ratelimit(document: dict[str, Any]) -> None:
    for path, method, operation in operations(document):
        responses = operation["responses"]
        if "401" in responses:
            assert "WWW-Authenticate" in (responses["401"].get("headers") or {}), f"{method.upper()} {path}"
        if "429" in responses:
            for status, response in [*successes(operation), ("429", responses["429"])]:
                headers = response.get("headers") or {}
                assert {"RateLimit-Policy", "RateLimit"} <= headers.keys(), f"{method.upper()} {path} {status}"


def test_no_generated_examples_and_graphql_declares_no_litestar_error_schema(document: dict[str, Any]) -> None:
    assert '"examples"' not in str(document).replace("'", '"')
    if "/graphql" not in document["paths"]:
        return  # the internal listener serves no GraphQL
    graphql = document["paths"]["/graphql"]["get"]["responses"]
    for status, response in graphql.items():
        for media in (response.get("content") or {}).values():
            assert "status_code" not in str(media), f"GET /graphql {status} declares Litestar's error schema"


def _property_names(
    document: dict[str, Any], schema: dict[str, Any], seen: set[str], where: str
) -> Iterator[tuple[str, str, dict[str, Any]]]:
    if "$ref" in schema:
        name, target = component(document, schema["$ref"])
        if name in seen or name in REQUEST_SHAPED:
            return
        seen.add(name)
        yield from _property_names(document, target, seen, name)
        return
    for arm in (*schema.get("oneOf", ()), *schema.get("allOf", ()), *schema.get("anyOf", ())):
        yield from _property_names(document, arm, seen, where)
    for key, member in (schema.get("properties") or {}).items():
        yield where, key, member
        yield from _property_names(document, member, seen, where)
    for nested in ("items", "additionalProperties"):
        if isinstance(schema.get(nested), dict):
            yield from _property_names(document, schema[nested], seen, where)


def test_every_response_object_is_camel_case_besides_deprecated_old_names(document: dict[str, Any]) -> None:
    seen: set[str] = set()
    offending = []
    for _, _, operation in operations(document):
        for _, response in successes(operation):
            schema = (response.get("content") or {}).get("application/json", {}).get("schema")
            if schema is None:
                continue
            for where, name, member in _property_names(document, schema, seen, "answer"):
                if not CAMEL.match(name) and not member.get("deprecated"):
                    offending.append(f"{where}.{name}")
    assert seen, "no response schema was walked"
    assert offending == []
    assert document["components"]["schemas"]["Page"]["properties"]["next_cursor"]["deprecated"] is True
    assert document["components"]["schemas"]["Page"]["required"] == ["hasMore", "nextCursor"]


async def test_the_wire_sends_what_the_document_declares(client: httpx.AsyncClient, workspace: Workspace) -> None:
    refused = await client.get("/api/v1/work-items")
    assert refused.status_code == 401 and refused.headers["www-authenticate"].startswith("Bearer")

    key = await workspace.key(admin=True)
    made = await client.post(
        "/api/v1/work-items",
        json={"project_id": workspace.projects["ALPHA"], "title": "Typed answers"},
        headers=workspace.headers(key, **idem()),
    )
    assert made.status_code == 201, made.text
    item = made.json()["data"]
    assert made.headers["location"] == f"/api/v1/work-items/{item['id']}"
    assert (await client.get(made.headers["location"], headers=workspace.headers(key))).json()["data"] == item

    listed = await client.get("/api/v1/work-items", params={"limit": 1}, headers=workspace.headers(key))
    assert re.fullmatch(r'"per-key";q=\d+;w=60', listed.headers["ratelimit-policy"])
    assert re.fullmatch(r'"per-key";r=\d+;t=\d+', listed.headers["ratelimit"])
    page = listed.json()["page"]
    assert page["hasMore"] is False and page["nextCursor"] is None
    # The snake_case names stay beside the camelCase ones for one minor version, with the same values.
    assert page["next_cursor"] == page["nextCursor"] and page["has_more"] == page["hasMore"]


async def test_a_webhook_endpoint_created_answers_its_location(client: httpx.AsyncClient, workspace: Workspace) -> None:
    key = await workspace.key(admin=True)
    made = await client.post(
        "/api/v1/webhook-endpoints",
        json={"url": "https://hooks.example.com/groundwork", "event_types": ["notification.created"]},
        headers=workspace.headers(key, **idem()),
    )
    assert made.status_code == 201, made.text
    endpoint = made.json()["data"]
    assert made.headers["location"] == f"/api/v1/webhook-endpoints/{endpoint['id']}" and "secret" in endpoint
    shown = (await client.get(made.headers["location"], headers=workspace.headers(key))).json()["data"]
    assert shown["id"] == endpoint["id"] and "secret" not in shown
