"""MCP resources of notifications: read with the REST read's visibility, and followed through `subscriptions/listen`,
which hears a status change from the change feed (`notifications/resources/updated`)."""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from typing import Any

import anyio
import httpx
import pytest
from mcp.client.subscriptions import ResourceUpdated, listen
from mcp.shared.exceptions import MCPError

from groundwork.config import Settings
from tests.conftest import mcp_modern_session, mcp_session
from tests.integration.notifications.conftest import People, command, inbox, relay_pass, start_thread

Notify = Callable[..., Awaitable[dict[str, Any]]]
RESOURCE_NOT_FOUND = -32002


async def test_a_notification_reads_as_rest_shows_it_and_is_not_found_for_anyone_else(
    api_url: str, client: httpx.AsyncClient, people: People, notify: Notify
) -> None:
    created = await notify(body="The quarterly plan, for your eyes")
    uri = f"groundwork://notifications/{created['id']}"
    rest = (await client.get(f"/api/v1/notifications/{created['id']}", headers=people.headers(people.bob))).json()
    async with mcp_session(api_url, people.bob.key) as session:
        templates = {t.uri_template for t in (await session.list_resource_templates()).resource_templates}
        assert templates == {
            "groundwork://runs/{id}",
            "groundwork://runs/{run_id}/drafts/{id}",
            "groundwork://packages/{id}",
            "groundwork://passages/{id}",
            "groundwork://notifications/{id}",
        }
        assert session.initialize_result.capabilities.prompts is None  # nothing to offer, nothing advertised
        [content] = (await session.read_resource(uri)).contents
        assert content.mime_type == "application/json"
        assert json.loads(content.text) == rest["data"]
    for stranger in (people.alice, people.dana):  # a thread partner, and a workspace admin
        async with mcp_session(api_url, stranger.key) as session:
            with pytest.raises(MCPError) as refused:
                await session.read_resource(uri)
            assert refused.value.error.code == RESOURCE_NOT_FOUND
            assert refused.value.error.data["code"] == "not_found"
            assert "quarterly plan" not in json.dumps(refused.value.error.model_dump())


async def test_a_subscription_hears_its_notification_change_status_and_honors_only_what_the_caller_reads(
    api_url: str, client: httpx.AsyncClient, people: People, notify: Notify, temporal_client: Any, settings: Settings
) -> None:
    mine = await notify()
    await start_thread(client, people, people.bob, [people.alice], "Your turn")
    await relay_pass(temporal_client, settings)
    alices = (await inbox(client, people, people.alice, limit=1))["data"][0]
    uris = [f"groundwork://notifications/{mine['id']}", f"groundwork://notifications/{alices['id']}"]
    async with (
        mcp_modern_session(api_url, people.bob.key) as session,
        listen(session, resource_subscriptions=uris) as sub,
    ):
        assert sub.honored.resource_subscriptions == uris[:1]  # Alice's is not Bob's to follow
        moved = await command(client, people, people.alice, alices["id"], "read", expected_version=1)
        assert moved.status_code == 200, moved.text
        assert (await command(client, people, people.bob, mine["id"], "read", expected_version=1)).status_code == 200
        with anyio.fail_after(10):
            event = await sub.__anext__()
        # The first update is Bob's own: Alice's move, committed before it, was never delivered to him.
        assert event == ResourceUpdated(uri=uris[0])
        [content] = (await session.read_resource(uris[0])).contents
        assert json.loads(content.text)["status"] == "read"
