"""`groundwork mcp` serves the same tools over stdio, acting as the key's principal."""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path
from typing import Any

import httpx
from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.types import TextContent

from tests.conftest import Workspace, idem, tool_json
from tests.integration.evidence_search.helpers import contribute


async def test_stdio_server_answers_as_the_keys_principal(
    database: str, settings: Any, client: httpx.AsyncClient, workspace: Workspace
) -> None:
    key = await workspace.key("desk", ["work-items:read"], memberships={"ALPHA": "viewer"})
    admin = await workspace.key("admin", admin=True)
    created = await client.post(
        "/api/v1/work-items",
        json={"project_id": workspace.projects["ALPHA"], "title": "Seen"},
        headers=workspace.headers(admin, **idem()),
    )
    env = {
        **os.environ,
        "DATABASE_URL": database,
        "GROUNDWORK_API_KEY": key,
        "TEMPORAL_ADDRESS": settings.temporal_address,
    }
    params = StdioServerParameters(command=sys.executable, args=["-m", "groundwork.cli", "mcp"], env=env)
    with open(os.devnull, "w") as quiet:
        async with stdio_client(params, errlog=quiet) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            listed = {t.name for t in (await session.list_tools()).tools}
            assert listed == {"whoami", "list_projects", "list_work_items", "get_work_item"}, listed
            me = tool_json(await session.call_tool("whoami", {}))["data"]
            assert me["name"] == "desk" and me["scopes"] == ["work-items:read"]
            items = tool_json(await session.call_tool("list_work_items", {}))
            assert [i["id"] for i in items["data"]] == [created.json()["data"]["id"]]
            refused = await session.call_tool("list_enhancement_runs", {})
            message = refused.content[0]
            assert isinstance(message, TextContent)
            assert refused.is_error and "work-item-enhance:read" in message.text


async def test_stdio_server_keeps_its_own_search_replica_and_finds_what_was_ingested(
    database: str, settings: Any, workspace: Workspace, tmp_path: Path, worker: Any
) -> None:
    await contribute(
        workspace, "ALPHA", "notes/rotation.md", "# Key rotation\n\nThe PSP keys rotate every ninety days."
    )
    reader = await workspace.key("reader", ["context-engine:read"], memberships={"ALPHA": "viewer"})
    # A directory no other process writes: the session's worker keeps the session's index elsewhere.
    own_index = tmp_path / "index"
    env = {
        **os.environ,
        "DATABASE_URL": database,
        "GROUNDWORK_API_KEY": reader,
        "TEMPORAL_ADDRESS": settings.temporal_address,
        "GROUNDWORK_INDEX_DIR": str(own_index),
    }
    params = StdioServerParameters(command=sys.executable, args=["-m", "groundwork.cli", "mcp"], env=env)
    arguments = {"subject_ref": {"type": "project", "id": workspace.projects["ALPHA"]}, "query": "ninety days"}
    with open(os.devnull, "w") as quiet:
        async with stdio_client(params, errlog=quiet) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            deadline = asyncio.get_running_loop().time() + 60
            while True:  # answers 503 until its replica has caught up with the change logs
                result = await session.call_tool("search_context", arguments)
                if not result.is_error or asyncio.get_running_loop().time() > deadline:
                    break
                message = result.content[0]
                assert isinstance(message, TextContent) and "service_unavailable" in message.text, message
                await asyncio.sleep(0.2)
            found = tool_json(result)
    assert [p["source"]["uri"] for p in found["data"]] == ["notes/rotation.md"]
    assert found["data"][0]["text"] == "The PSP keys rotate every ninety days."
    assert any(own_index.rglob("meta.json"))  # the index it searched was built in its own directory
