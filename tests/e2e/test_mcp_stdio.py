"""`groundwork mcp` serves the same tools over stdio, acting as the key's principal."""

from __future__ import annotations

import os
import sys
from typing import Any

import httpx
from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

from tests.conftest import Workspace, idem, tool_json


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
            me = tool_json(await session.call_tool("whoami", {}))
            assert me["name"] == "desk" and me["scopes"] == ["work-items:read"]
            items = tool_json(await session.call_tool("list_work_items", {}))
            assert [i["id"] for i in items["data"]] == [created.json()["data"]["id"]]
            refused = await session.call_tool("list_enhancement_runs", {})
            assert refused.is_error and "work-item-enhance:read" in refused.content[0].text
