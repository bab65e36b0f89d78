"""Every MCP tool, called through the official client with malformed and hostile arguments, answers a tool
error with a stable code, a JSON-RPC invalid-params error (-32602) with a coded `data` for arguments that do not
fit its input schema, or a normal answer — never a crash, an uncoded error, or a dropped session.

The calls are generated from the server's own tool list and each tool's input schema, so a new tool
is covered the moment it is registered. Seeded and bounded: a fixed set of hostile values per tool.
"""

from __future__ import annotations

import json
import random
from typing import Any

import httpx
import pytest
from mcp.shared.exceptions import MCPError
from mcp.types import INVALID_PARAMS, PARSE_ERROR

from tests.conftest import Workspace, invalid_params, mcp_session

SEED = 20261123
HUGE = "x" * 300_000
INJECTIONS = [
    "' OR 1=1 --",
    "wi_01ARZ3NDEKTSV4RRFFQ69G5FAV'; DROP TABLE work_items; --",
    "../../../../etc/passwd",
    "<script>alert(1)</script>",
    "{{7*7}}${7*7}",
    "$(rm -rf /)",
    "\x00nul\x00",
    "\U0001f4a5" * 100,
    "\u202e\u0000\uffff",
    "%00%0d%0aSet-Cookie: a=b",
]
UNKNOWN_IDS = [
    "wi_00000000000000000000000000",
    "wie_00000000000000000000000000",
    "prj_ZZZZZZZZZZZZZZZZZZZZZZZZZZ",
    "notification_00000000000000000000000000",
    "",
]
NUMBERS = [-1, 0, 2**63, -(2**70), 1e308, 0.5]


def _nested_junk(depth: int) -> Any:
    """Objects and lists nested `depth` deep (linear in size: a body over the size limit is another test)."""
    value: Any = {"a": [1, "b", None]}
    for n in range(depth):
        value = {f"k{n}": value, "x": [None, 1.5]} if n % 2 else [value, "y"]
    return value


def _wrong_types(schema: dict[str, Any]) -> list[Any]:
    """Values of every JSON type the property does not take."""
    declared = json.dumps(schema)
    values: list[Any] = []
    if '"string"' not in declared:
        values.append("not-a-number")
    if '"integer"' not in declared and '"number"' not in declared:
        values.append(12345)
    if '"boolean"' not in declared:
        values.append(True)
    if '"array"' not in declared:
        values.append(["a", 1])
    if '"object"' not in declared:
        values.append({"nested": {"junk": True}})
    values.append(None)
    return values


def hostile_calls(tool: Any, rng: random.Random) -> list[dict[str, Any]]:
    """Argument sets for one tool from its input schema: missing, wrong types, huge, unknown ids, injections,
    nested junk, unknown arguments."""
    schema = tool.input_schema or {}
    properties: dict[str, Any] = schema.get("properties") or {}
    required = list(schema.get("required") or [])
    base = {name: "x" for name in required}
    calls: list[dict[str, Any]] = [{}, {"unexpected_argument": "?"}, {**base, "unexpected_argument": [1, 2]}]
    for name, prop in properties.items():
        for value in _wrong_types(prop):
            calls.append({**base, name: value})
        for value in [HUGE, *rng.sample(INJECTIONS, 4), *UNKNOWN_IDS[:3], *rng.sample(NUMBERS, 2)]:
            calls.append({**base, name: value})
        calls.append({**base, name: _nested_junk(60)})
    return calls


def _error_code(result: Any) -> str | None:
    """The code of a tool error: its structured content, which its text repeats."""
    body = result.structured_content
    text = "".join(getattr(block, "text", "") for block in result.content or [])
    if not isinstance(body, dict) or json.loads(text) != body:
        return None
    code = body.get("code")
    return code if isinstance(code, str) and code and isinstance(body.get("errors"), list) else None


async def test_every_mcp_tool_answers_hostile_arguments_with_a_coded_error_and_the_session_survives(
    api_url: str, client: httpx.AsyncClient, workspace: Workspace
) -> None:
    key = await workspace.key("admin", admin=True)
    rng = random.Random(SEED)
    outcomes = {"coded_error": 0, "invalid_params": 0, "answered": 0}
    async with mcp_session(api_url, key) as session:
        tools = (await session.list_tools()).tools
        assert len(tools) >= 20, [t.name for t in tools]
        for tool in tools:
            for arguments in hostile_calls(tool, rng):
                try:
                    result = await session.call_tool(tool.name, arguments)
                except MCPError as refused:
                    assert refused.error.code == INVALID_PARAMS, (tool.name, str(arguments)[:200], refused.error)
                    data = refused.error.data
                    assert isinstance(data, dict) and data["code"] == "invalid_request", (tool.name, data)
                    outcomes["invalid_params"] += 1
                    continue
                if result.is_error:
                    code = _error_code(result)
                    assert code is not None, (tool.name, str(arguments)[:200], result.content)
                    assert code != "internal_error", (tool.name, str(arguments)[:200], result.content)
                    outcomes["coded_error"] += 1
                else:
                    outcomes["answered"] += 1
            # The same session still answers a valid call after the tool's whole battery.
            alive = await session.call_tool("whoami", {})
            assert not alive.is_error, (tool.name, alive.content)
    assert outcomes["coded_error"] + outcomes["invalid_params"] > 10 * len(tools), outcomes
    assert outcomes["coded_error"] > len(tools) and outcomes["invalid_params"] > len(tools), outcomes


async def test_a_message_nested_past_the_parser_limit_is_a_json_rpc_parse_error_and_the_session_survives(
    api_url: str, workspace: Workspace
) -> None:
    key = await workspace.key("admin", admin=True)
    async with mcp_session(api_url, key) as session:
        with pytest.raises(MCPError) as refused:
            await session.call_tool("list_work_items", {"project_id": _nested_junk(200)})
        assert refused.value.error.code == PARSE_ERROR
        alive = await session.call_tool("whoami", {})
        assert not alive.is_error, alive.content


async def test_arguments_that_do_not_fit_and_an_unknown_tool_are_json_rpc_invalid_params_with_a_code(
    api_url: str, workspace: Workspace
) -> None:
    key = await workspace.key("admin", admin=True)
    async with mcp_session(api_url, key) as session:
        wrong = await invalid_params(session, "get_work_item", {"work_item_id": {"nested": [1]}})
        assert wrong["code"] == "invalid_request", wrong
        assert [e["path"] for e in wrong["errors"]] == ["work_item_id"]
        assert "nested" not in json.dumps(wrong)  # names the argument, never echoes the value
        unknown = await invalid_params(session, "no_such_tool", {})
        assert unknown["code"] == "not_found" and "no_such_tool" in unknown["message"], unknown
        missing = await invalid_params(session, "get_work_item", {})
        assert missing["errors"] == [{"path": "work_item_id", "message": "is required"}], missing
        # A call that fits the schema but names nothing visible is a tool error, not a protocol error.
        result = await session.call_tool("get_work_item", {"work_item_id": "wi_00000000000000000000000000"})
        assert result.is_error and result.structured_content["code"] == "not_found", result
        assert json.loads(result.content[0].text) == result.structured_content
        alive = await session.call_tool("whoami", {})
        assert not alive.is_error, alive.content
