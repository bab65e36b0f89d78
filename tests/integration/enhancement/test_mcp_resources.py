"""MCP resources of enhancement runs: a run and its drafts read as REST shows them, only for those who see the run,
and a subscription to a run hears its state change (`notifications/resources/updated` from the change feed)."""

from __future__ import annotations

import json
import uuid
from typing import Any

import anyio
import httpx
import pytest
from mcp.client.subscriptions import ResourceUpdated, listen
from mcp.shared.exceptions import MCPError

from tests.conftest import Workspace, mcp_modern_session, mcp_session, tool_json
from tests.integration.enhancement.conftest import create_run

RESOURCE_NOT_FOUND = -32002


async def _ready_run(client: httpx.AsyncClient, workspace: Workspace, key: str, work_item: dict[str, Any]) -> Any:
    response = await create_run(client, workspace, key, work_item["id"], ["estimate"])
    assert response.status_code == 201, response.text
    run = response.json()["data"]
    assert run["state"] == "ready_for_review", run
    return run


async def test_a_run_and_its_draft_read_as_rest_shows_them_and_only_for_those_who_see_the_run(
    api_url: str, client: httpx.AsyncClient, workspace: Workspace, work_item: dict[str, Any], worker: Any
) -> None:
    owner = await workspace.key("owner", admin=True)
    run = await _ready_run(client, workspace, owner, work_item)
    draft = run["drafts"][0]
    run_uri, draft_uri = f"groundwork://runs/{run['id']}", f"groundwork://runs/{run['id']}/drafts/{draft['id']}"
    rest = (await client.get(f"/api/v1/work-item-enhancements/{run['id']}", headers=workspace.headers(owner))).json()
    async with mcp_session(api_url, owner) as session:
        [content] = (await session.read_resource(run_uri)).contents
        assert json.loads(content.text) == rest["data"]
        [content] = (await session.read_resource(draft_uri)).contents
        assert json.loads(content.text) == rest["data"]["drafts"][0]
        with pytest.raises(MCPError) as refused:
            await session.read_resource(f"groundwork://runs/{run['id']}/drafts/draft_00000000000000000000000000")
        assert refused.value.error.code == RESOURCE_NOT_FOUND
    outsider = await workspace.key("outsider", ["work-item-enhance:read"], memberships={"BETA": "viewer"})
    unscoped = await workspace.key("no enhancement scope", ["work-items:read"], memberships={"ALPHA": "lead"})
    for key, code in ((outsider, "not_found"), (unscoped, "insufficient_scope")):
        async with mcp_session(api_url, key) as session:
            for uri in (run_uri, draft_uri):
                with pytest.raises(MCPError) as refused:
                    await session.read_resource(uri)
                assert refused.value.error.data["code"] == code, (uri, refused.value.error)
                assert work_item["title"] not in json.dumps(refused.value.error.model_dump())


async def test_a_subscription_to_a_run_hears_its_state_change_when_its_draft_is_applied(
    api_url: str, client: httpx.AsyncClient, workspace: Workspace, work_item: dict[str, Any], worker: Any
) -> None:
    owner = await workspace.key("owner", admin=True)
    run = await _ready_run(client, workspace, owner, work_item)
    run_uri = f"groundwork://runs/{run['id']}"
    outsider = await workspace.key("outsider", ["work-item-enhance:read"], memberships={"BETA": "viewer"})
    async with (
        mcp_modern_session(api_url, outsider) as theirs,
        listen(theirs, resource_subscriptions=[run_uri]) as refused,
    ):
        assert not refused.honored.resource_subscriptions  # a run it cannot read is not followed
    async with mcp_modern_session(api_url, owner) as session, listen(session, resource_subscriptions=[run_uri]) as sub:
        assert sub.honored.resource_subscriptions == [run_uri]
        draft_id = run["drafts"][0]["id"]
        prepared = tool_json(await session.call_tool("prepare_apply", {"run_id": run["id"], "draft_ids": [draft_id]}))
        arguments = {
            "run_id": run["id"],
            "draft_ids": [draft_id],
            "expected_target_version": prepared["data"]["currentVersion"],
            "confirm": True,
            "idempotency_key": uuid.uuid4().hex,
        }
        applied = tool_json(await session.call_tool("apply_drafts", arguments))
        assert applied["data"]["state"] == "applied"
        with anyio.fail_after(10):
            event = await sub.__anext__()
        assert event == ResourceUpdated(uri=run_uri)
        [content] = (await session.read_resource(run_uri)).contents
        assert json.loads(content.text)["state"] == "applied"
