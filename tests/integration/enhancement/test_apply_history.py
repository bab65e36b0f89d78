"""services/enhancement/apply_history: a run's applies with each field's value before and after."""

from __future__ import annotations

from typing import Any

import httpx

from tests.conftest import Workspace, mcp_session, tool_json
from tests.integration.enhancement.conftest import apply, create_run

BASE = "/api/v1/work-item-enhancements"


async def test_the_apply_history_lists_each_apply_with_every_fields_value_before_and_after(
    api_url: str, client: httpx.AsyncClient, workspace: Workspace, work_item: dict[str, Any], worker: Any
) -> None:
    key = await workspace.key("owner", admin=True)
    run = (await create_run(client, workspace, key, work_item["id"], ["description", "estimate"])).json()["data"]
    by_field = {d["field"]: d for d in run["drafts"]}
    first = await apply(client, workspace, key, run["id"], [by_field["description"]["id"]], work_item["version"])
    assert first.status_code == 200, first.text
    middle = first.json()["data"]["target"]["version"]
    second = await apply(client, workspace, key, run["id"], [by_field["estimate"]["id"]], middle)
    assert second.status_code == 200, second.text
    last = second.json()["data"]["target"]["version"]

    listed = await client.get(f"{BASE}/{run['id']}/applies", headers=workspace.headers(key))
    assert listed.status_code == 200, listed.text
    applies = listed.json()["data"]
    assert [a["draftIds"] for a in applies] == [[by_field["description"]["id"]], [by_field["estimate"]["id"]]]
    assert [(a["targetVersionBefore"], a["targetVersionAfter"]) for a in applies] == [
        (work_item["version"], middle),
        (middle, last),
    ]
    assert applies[0]["changes"] == [
        {
            "field": "description",
            "draftId": by_field["description"]["id"],
            "before": work_item["fields"]["description"],
            "after": by_field["description"]["proposedValue"],
        }
    ]
    assert applies[1]["changes"] == [
        {
            "field": "estimate",
            "draftId": by_field["estimate"]["id"],
            "before": None,
            "after": by_field["estimate"]["proposedValue"],
        }
    ]
    owner_id = workspace.principals["owner"]
    assert all(a["actorId"] == owner_id and a["operationId"].startswith("apply_") for a in applies)
    assert applies[0]["appliedAt"] < applies[1]["appliedAt"]
    assert listed.json()["page"] == {"nextCursor": None, "hasMore": False, "next_cursor": None, "has_more": False}

    # Keyset pages: one apply a page, the second page continues after the first.
    page_one = (await client.get(f"{BASE}/{run['id']}/applies?limit=1", headers=workspace.headers(key))).json()
    assert page_one["data"] == applies[:1] and page_one["page"]["hasMore"]
    cursor = page_one["page"]["nextCursor"]
    page_two = (
        await client.get(
            f"{BASE}/{run['id']}/applies", params={"limit": 1, "cursor": cursor}, headers=workspace.headers(key)
        )
    ).json()
    assert page_two["data"] == applies[1:] and not page_two["page"]["hasMore"]

    # The same through GraphQL (the run's `applies`) and MCP (`list_run_applies`).
    query = """query ($id: ID!) { workItemEnhancementRun(id: $id) { applies(first: 10) {
      nodes { operationId actorId draftIds targetVersionBefore targetVersionAfter
              changes { field draftId before after } }
      edges { cursor } pageInfo { hasNextPage } } } }"""
    answer = (
        await client.post(
            "/graphql", json={"query": query, "variables": {"id": run["id"]}}, headers=workspace.headers(key)
        )
    ).json()
    connection = answer["data"]["workItemEnhancementRun"]["applies"]
    nodes = connection["nodes"]
    assert connection["pageInfo"]["hasNextPage"] is False and len(connection["edges"]) == len(nodes)
    after_first = (
        await client.post(
            "/graphql",
            json={
                "query": "query ($id: ID!, $after: String) { workItemEnhancementRun(id: $id) {"
                " applies(first: 10, after: $after) { nodes { operationId } } } }",
                "variables": {"id": run["id"], "after": connection["edges"][0]["cursor"]},
            },
            headers=workspace.headers(key),
        )
    ).json()["data"]["workItemEnhancementRun"]["applies"]["nodes"]
    assert [n["operationId"] for n in after_first] == [applies[1]["operationId"]]  # an edge's cursor resumes after it
    assert [(n["operationId"], n["targetVersionAfter"], n["changes"]) for n in nodes] == [
        (a["operationId"], a["targetVersionAfter"], a["changes"]) for a in applies
    ]
    async with mcp_session(api_url, key) as session:
        via_mcp = tool_json(await session.call_tool("list_run_applies", {"run_id": run["id"]}))
    assert via_mcp["data"] == applies


async def test_the_apply_history_of_a_run_the_caller_cannot_see_is_not_found(
    client: httpx.AsyncClient, workspace: Workspace, work_item: dict[str, Any], worker: Any
) -> None:
    key = await workspace.key("owner", admin=True)
    run = (await create_run(client, workspace, key, work_item["id"], ["estimate"])).json()["data"]
    outsider = await workspace.key("outsider", memberships={})
    answer = await client.get(f"{BASE}/{run['id']}/applies", headers=workspace.headers(outsider))
    assert answer.status_code == 404 and answer.json()["code"] == "not_found"
    forged = await client.get(f"{BASE}/{run['id']}/applies?cursor=eyJpZCI6MX0", headers=workspace.headers(key))
    assert forged.status_code == 400 and forged.json()["code"] == "invalid_request"
