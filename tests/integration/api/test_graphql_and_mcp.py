"""GraphQL and MCP reach the same services, scopes and visibility as REST."""

from __future__ import annotations

import httpx

from tests.conftest import Workspace, idem, mcp_session, tool_json

QUERY = """
query ($first: Int) {
  viewer { name isAdmin scopes }
  projects { key name engagement { name } portfolio { name } }
  workItems(first: $first) { nodes { id key title version fields { description estimate } } pageInfo { hasNextPage } }
}
"""


async def test_graphql_returns_what_rest_returns(client: httpx.AsyncClient, workspace: Workspace) -> None:
    key = await workspace.key("gina", ["work-items:read", "work-items:write"], memberships={"ALPHA": "lead"})
    created = await client.post(
        "/api/v1/work-items",
        json={"project_id": workspace.projects["ALPHA"], "title": "Graph me", "fields": {"estimate": 3}},
        headers=workspace.headers(key, **idem()),
    )
    rest = created.json()["data"]
    response = await client.post(
        "/graphql", json={"query": QUERY, "variables": {"first": 5}}, headers=workspace.headers(key)
    )
    assert response.status_code == 200, response.text
    data = response.json()["data"]
    assert data["viewer"] == {"name": "gina", "isAdmin": False, "scopes": ["work-items:read", "work-items:write"]}
    assert [p["key"] for p in data["projects"]] == ["ALPHA"]
    [node] = data["workItems"]["nodes"]
    assert node == {
        "id": rest["id"],
        "key": rest["key"],
        "title": "Graph me",
        "version": rest["version"],
        "fields": {"description": None, "estimate": 3.0},
    }


async def test_graphql_without_scope_names_the_scope(client: httpx.AsyncClient, workspace: Workspace) -> None:
    key = await workspace.key("nobody", ["webhooks:manage"], admin=True)
    response = await client.post("/graphql", json={"query": "{ projects { key } }"}, headers=workspace.headers(key))
    [error] = response.json()["errors"]
    assert error["extensions"]["code"] == "insufficient_scope"
    assert error["extensions"]["required_scope"] == "work-items:read"


async def test_graphql_without_key_is_unauthenticated(client: httpx.AsyncClient) -> None:
    response = await client.post("/graphql", json={"query": "{ viewer { name } }"})
    assert response.json()["errors"][0]["extensions"]["code"] == "unauthenticated"


async def test_graphiql_page_opens_in_a_browser(client: httpx.AsyncClient) -> None:
    response = await client.get("/graphql", headers={"accept": "text/html"})
    assert response.status_code == 200 and "graphiql" in response.text.lower()


async def test_mcp_tools_return_what_rest_returns(
    api_url: str, client: httpx.AsyncClient, workspace: Workspace
) -> None:
    key = await workspace.key(admin=True)
    created = await client.post(
        "/api/v1/work-items",
        json={"project_id": workspace.projects["BETA"], "title": "MCP item"},
        headers=workspace.headers(key, **idem()),
    )
    rest = created.json()["data"]
    async with mcp_session(api_url, key) as session:
        tools = {t.name: t for t in (await session.list_tools()).tools}
        assert {"whoami", "list_projects", "list_work_items", "get_work_item"} <= tools.keys()
        assert tools["get_work_item"].annotations.read_only_hint is True
        item = tool_json(await session.call_tool("get_work_item", {"work_item_id": rest["id"]}))
        assert item["data"] == rest
        listing = tool_json(await session.call_tool("list_work_items", {"limit": 5}))
        assert [i["id"] for i in listing["data"]] == [rest["id"]]
        missing = await session.call_tool("get_work_item", {"work_item_id": "wi_missing"})
        assert missing.is_error and '"not_found"' in missing.content[0].text


async def test_mcp_needs_a_key_and_the_scope(api_url: str, workspace: Workspace) -> None:
    key = await workspace.key("limited", ["webhooks:manage"], admin=True)
    async with mcp_session(api_url, key) as session:
        result = await session.call_tool("list_projects", {})
        assert result.is_error and "insufficient_scope" in result.content[0].text
    async with httpx.AsyncClient() as raw:
        response = await raw.post(
            f"{api_url}/mcp/",
            json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
            headers={"accept": "application/json, text/event-stream"},
        )
    assert response.status_code == 401 and response.json()["code"] == "unauthenticated"
