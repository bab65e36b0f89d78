"""MCP tools an assistant can understand: every tool has a title, described arguments with enums for closed sets
and bounds, and an output schema that is the REST resource's shape in camelCase; a key is listed only the tools its
scopes allow; `serverInfo.version` is the package's version."""

from __future__ import annotations

import re
from importlib.metadata import version
from typing import Any

import jsonschema

from groundwork.api.mcp.server import build_mcp_server
from groundwork.domain.enhancement.model import ACTIONS, RUN_STATES
from groundwork.domain.pagination import MAX_LIMIT
from tests.conftest import Workspace, mcp_session, tool_json
from tests.mcp_schemas import member_names

CAMEL = re.compile(r"^[a-z][a-zA-Z0-9]*$")
# Arguments that take one of a closed set of values (groundwork.domain.choices and the specs).
CLOSED_SETS = {"state", "action", "field", "type", "status", "source_kind", "contribution_type", "kind", "view"}
CLOSED_SETS |= {"requested_outcome"}


def _enum_of(schema: dict[str, Any]) -> list[Any] | None:
    if "enum" in schema:
        return list(schema["enum"])
    for member in schema.get("anyOf") or []:
        if "enum" in member:
            return list(member["enum"])
    return None


async def test_every_tool_has_a_title_described_arguments_with_enums_and_bounds_and_a_camel_case_resource_schema() -> (
    None
):
    tools = await build_mcp_server().list_tools()
    assert len(tools) >= 27
    for tool in tools:
        assert tool.title and tool.title[0].isupper(), tool.name
        assert tool.description, tool.name
        properties: dict[str, Any] = tool.input_schema.get("properties") or {}
        for name, argument in properties.items():
            where = f"{tool.name}({name})"
            assert argument.get("description"), f"{where} has no description"
            if name in CLOSED_SETS:
                assert _enum_of(argument), f"{where} takes a closed set but states no enum"
            if name == "limit":
                assert (argument["minimum"], argument["maximum"]) == (1, MAX_LIMIT), where
            if name.endswith("_id") or name in ("cursor", "query", "question", "idempotency_key", "instructions"):
                assert argument.get("maxLength"), f"{where} states no maxLength"
        output = tool.output_schema
        assert output is not None and output.get("type") == "object", tool.name
        assert output.get("description") and output.get("properties"), f"{tool.name}: a bare output schema"
        # The answer requires `data`; the other shape is a tool error's `{code, message, errors}`.
        assert [shape["required"] for shape in output["anyOf"]][1:] == [["code", "message", "errors"]], tool.name
        assert "data" in output["properties"] and "data" in output["anyOf"][0]["required"], tool.name
        snake = [path for name, path in member_names(output) if not CAMEL.match(name)]
        assert snake == [], f"{tool.name} answers members not in camelCase: {snake}"
    by_name = {t.name: t for t in tools}
    actions = by_name["create_enhancement_run"].input_schema["properties"]["actions"]
    assert actions["items"]["enum"] == list(ACTIONS) and actions["minItems"] == 1
    assert _enum_of(by_name["list_enhancement_runs"].input_schema["properties"]["state"]) == [*RUN_STATES, None]
    outputs = {t.name: t.output_schema or {} for t in tools}
    run = outputs["get_enhancement_run"]["properties"]["data"]
    assert run["properties"]["state"]["enum"] == list(RUN_STATES)
    diff = outputs["prepare_apply"]["properties"]["data"]["properties"]["diff"]["items"]
    assert set(diff["properties"]) == {"field", "currentValue", "proposedValue", "draftId"}


async def test_a_key_is_listed_only_the_tools_its_scopes_allow_and_the_server_names_its_version(
    api_url: str, workspace: Workspace
) -> None:
    reader = await workspace.key("inbox reader", ["notifications:read"])
    async with mcp_session(api_url, reader) as session:
        assert session.server_info.version == version("groundwork") != ""
        listed = {t.name for t in (await session.list_tools()).tools}
        assert listed == {"whoami", "list_principals", "get_notifications_messaging"}, listed
        for name in listed:
            result = await session.call_tool(name, {})
            assert not result.is_error, (name, result.structured_content)
        # A tool it is not shown still answers why, rather than pretending not to exist.
        hidden = await session.call_tool("list_work_items", {})
        assert hidden.is_error and hidden.structured_content["code"] == "insufficient_scope"
        assert hidden.structured_content["required_scope"] == "work-items:read"
        # Clients that validate error results against the output schema (the TypeScript SDK) accept it.
        schemas = {t.name: t.output_schema for t in await build_mcp_server().list_tools()}
        jsonschema.validate(hidden.structured_content, schemas["list_work_items"])
    admin = await workspace.key("admin", admin=True)
    async with mcp_session(api_url, admin) as session:
        everything = {t.name for t in (await session.list_tools()).tools}
        assert everything == {t.name for t in await build_mcp_server().list_tools()}
        me = tool_json(await session.call_tool("whoami", {}))
        assert set(me["data"]) == {"id", "name", "kind", "workspaceId", "isAdmin", "scopes"}
