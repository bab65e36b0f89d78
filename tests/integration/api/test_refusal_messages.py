"""The message of every refusal of malformed input is written for a person: it names the field as the caller wrote
it and carries no Python type, class or repr.

The cases are generated from what the apps serve: every body field of every REST and internal route sent a
value of another JSON kind, every query parameter sent a value it cannot take, malformed and truncated JSON,
every GraphQL mutation input sent wrong kinds through variables, every MCP tool argument sent another kind;
plus the cases the issue found (`since=yesterday`, a malformed id, a truncated body). A scan of every
message, path and detail refused finds no Python word.
"""

from __future__ import annotations

import json
import re
import uuid
from typing import Any

import httpx
from graphql import GraphQLInputObjectType, get_named_type
from mcp.shared.exceptions import MCPError

from groundwork.api.graphql.schema import schema
from tests.conftest import Workspace, idem, mcp_session

PYTHON = re.compile(
    r"\b(?:int|str|bool|float|dict|list|tuple|bytes|NoneType|None)\b"
    r"|\b\w+(?:Error|Exception)\b|<class |\{'|\['|\bParamType\b|Traceback|isoformat|msgspec|pydantic|`\$"
)


def _kind_of(schema_: dict[str, Any], document: dict[str, Any]) -> str:
    if "$ref" in schema_:
        return "object"
    for key in ("oneOf", "anyOf"):
        if key in schema_:
            kinds = [_kind_of(s, document) for s in schema_[key] if s.get("type") != "null"]
            return kinds[0] if kinds else "string"
    kind = schema_.get("type", "string")
    return kind[0] if isinstance(kind, list) else kind


# A value of another JSON kind than each kind.
WRONG = {"string": 12345, "integer": "12", "number": "1.5", "boolean": "yes", "array": "a", "object": [1]}


def _resolve(document: dict[str, Any], schema_: dict[str, Any]) -> dict[str, Any]:
    ref = schema_.get("$ref")
    return dict(document["components"]["schemas"][ref.rsplit("/", 1)[-1]]) if ref else schema_


class Scan:
    """Every refusal seen, and what in them reads like Python."""

    def __init__(self) -> None:
        self.seen = 0
        self.findings: list[str] = []

    def texts(self, where: str, texts: list[str]) -> None:
        self.seen += 1
        for text in texts:
            if PYTHON.search(text):
                self.findings.append(f"{where}: {text}")

    def problem(self, where: str, response: httpx.Response) -> None:
        assert response.status_code < 500, (where, response.text)
        if response.status_code < 400:
            return
        body = response.json()
        texts = [str(body.get("detail", ""))]
        for error in body.get("errors") or []:
            texts += [str(error.get("path")), str(error.get("message"))]
            for member in (error.get("extensions") or {}).get("errors") or []:
                texts += [str(member.get("path")), str(member.get("message"))]
        self.texts(where, texts)

    def assert_clean(self, at_least: int) -> None:
        assert self.seen >= at_least, self.seen
        assert not self.findings, "\n".join(self.findings)


async def _scan_rest(http: httpx.AsyncClient, key: str, scan: Scan) -> None:
    document = (await http.get("/schema/openapi.json")).json()
    for path, item in document["paths"].items():
        if path.startswith("/graphql"):
            continue
        target = re.sub(r"\{[^}]+\}", "x", path)
        for method, operation in item.items():
            headers = {"Authorization": f"Bearer {key}"}
            for parameter in operation.get("parameters") or []:
                if parameter.get("in") != "query":
                    continue
                spec = parameter.get("schema") or {}
                kind = _kind_of(spec, document)
                values = {"integer": ["abc", "1.5"], "boolean": ["yes", "1"]}.get(kind, ["ab\x00c", "bogus"])
                if spec.get("format") == "date-time":
                    values = ["yesterday", "2026-11-28T09:00:00"]
                for value in values:
                    response = await http.request(
                        method, target, params={parameter["name"]: value}, headers={**headers, **idem()}
                    )
                    scan.problem(f"{method} {path} ?{parameter['name']}={value!r}", response)
            body = operation.get("requestBody", {}).get("content", {}).get("application/json", {}).get("schema")
            if body is None:
                continue
            properties = _resolve(document, body).get("properties") or {}
            for name, spec in properties.items():
                wrong = WRONG[_kind_of(spec, document)]
                response = await http.request(method, target, json={name: wrong}, headers={**headers, **idem()})
                scan.problem(f"{method} {path} {name}={wrong!r}", response)
            for raw in (b'{"a": ', b'{"a" 1}', b"[" * 3000, b"\xff\xfe", b'{"a": 1} trailing'):
                response = await http.request(
                    method, target, content=raw, headers={**headers, **idem(), "Content-Type": "application/json"}
                )
                scan.problem(f"{method} {path} body {raw[:12]!r}", response)


async def test_every_rest_and_internal_refusal_of_malformed_input_reads_without_python(
    client: httpx.AsyncClient, internal_client: httpx.AsyncClient, workspace: Workspace
) -> None:
    scan = Scan()
    await _scan_rest(client, await workspace.key(admin=True), scan)
    await _scan_rest(internal_client, await workspace.provider_key(), scan)
    scan.assert_clean(at_least=250)


async def test_the_cases_of_the_issue_name_the_field_and_say_what_is_accepted(
    client: httpx.AsyncClient, workspace: Workspace
) -> None:
    headers = {"Authorization": f"Bearer {await workspace.key(admin=True)}"}
    limit = (await client.get("/api/v1/work-items", params={"limit": "x"}, headers=headers)).json()
    assert limit["errors"] == [{"path": "limit", "message": "must be an integer"}]
    since = (await client.get("/api/v1/notifications", params={"since": "yesterday"}, headers=headers)).json()
    assert since["errors"] == [
        {"path": "since", "message": "must be an ISO 8601 UTC timestamp such as 2026-11-28T09:00:00Z"}
    ]
    truncated = await client.post(
        "/api/v1/work-items", content=b'{"title": "a', headers={**headers, **idem(), "Content-Type": "application/json"}
    )
    assert truncated.json()["errors"][0]["message"].endswith("at line 1, column 13 (byte 12)")
    packages = "/api/v1/context-engine/packages"
    malformed_id = await client.get(packages, params={"project_id": "a" * 300}, headers=headers)
    assert malformed_id.json()["errors"] == [
        {"path": "project_id", "message": "must be an id like prj_01JD8X3Q5K7M2N4P6R8S0T2V4W"}
    ]
    version = await client.post(
        "/api/v1/work-item-enhancements/wie_x/apply",
        json={"draft_ids": ["draft_x"], "expected_target_version": 5, "confirm": True},
        headers={**headers, **idem()},
    )
    assert version.json()["errors"] == [{"path": "expected_target_version", "message": "must be a string"}]


async def test_every_graphql_and_mcp_refusal_of_malformed_input_reads_without_python(
    client: httpx.AsyncClient, api_url: str, workspace: Workspace
) -> None:
    key = await workspace.key(admin=True)
    scan = Scan()
    mutation = schema._schema.mutation_type
    assert mutation is not None
    wrong = {"String": 5, "ID": {"a": 1}, "Int": "1", "Float": "x", "Boolean": "yes", "JSON": None}
    for name, field in mutation.fields.items():
        input_type = get_named_type(field.args["input"].type)
        assert isinstance(input_type, GraphQLInputObjectType)
        selection = "{ ok errors { message path } }"
        document = f"mutation ($input: {input_type.name}!) {{ {name}(input: $input) {selection} }}"
        for member, spec in input_type.fields.items():
            value = wrong.get(get_named_type(spec.type).name, 5)
            variables = {"input": {member: value, "unexpected": {"nested": [1, "a"]}}}
            response = await client.post(
                "/graphql", json={"query": document, "variables": variables}, headers={"Authorization": f"Bearer {key}"}
            )
            scan.problem(f"GraphQL {name}.{member}", response)
            body = response.json()
            texts = [e["message"] for e in body.get("errors") or []]
            payload = (body.get("data") or {}).get(name) or {}
            texts += [f"{e['message']} {e['path']}" for e in payload.get("errors") or []]
            scan.texts(f"GraphQL {name}.{member}", texts)
    since = await client.post(
        "/graphql",
        json={"query": '{ notificationList(filter: {since: "yesterday"}) { unreadCount } }'},
        headers={"Authorization": f"Bearer {key}"},
    )
    scan.texts("GraphQL since", [e["message"] + json.dumps(e["extensions"]) for e in since.json()["errors"]])
    async with mcp_session(api_url, key) as session:
        for tool in (await session.list_tools()).tools:
            for argument, spec in (tool.input_schema.get("properties") or {}).items():
                value = WRONG.get(_kind_of(spec, {}), "x") if "const" not in spec else "yes"
                try:
                    result = await session.call_tool(tool.name, {argument: value, "idempotency_key": uuid.uuid4().hex})
                    texts = [c.text for c in result.content if hasattr(c, "text")]
                except MCPError as refused:
                    texts = [refused.error.message, json.dumps(refused.error.data)]
                scan.texts(f"MCP {tool.name}.{argument}", texts)
        result = await session.call_tool("get_notifications_messaging", {"since": "yesterday"})
        scan.texts("MCP since", [result.content[0].text])
        assert "2026-11-28T09:00:00Z" in result.content[0].text
    scan.assert_clean(at_least=100)
