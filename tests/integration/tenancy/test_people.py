"""The people a caller may address, through GraphQL (`viewer`, `principals`) and MCP (`list_principals`)."""

from __future__ import annotations

import httpx

from tests.conftest import Workspace, mcp_session, tool_json


async def test_graphql_viewer_and_principals_show_roles_and_only_people_sharing_a_project(
    client: httpx.AsyncClient, workspace: Workspace
) -> None:
    alice = await workspace.key("alice", memberships={"ALPHA": "lead"})
    await workspace.key("bob", memberships={"ALPHA": "viewer"})
    await workspace.key("carol", memberships={"BETA": "lead"})
    document = """{ viewer { name projectRoles { projectKey role } }
                    principals { nodes { id name kind } pageInfo { hasNextPage } } }"""
    response = await client.post("/graphql", json={"query": document}, headers=workspace.headers(alice))
    body = response.json()
    assert "errors" not in body, body
    assert body["data"]["viewer"] == {"name": "alice", "projectRoles": [{"projectKey": "ALPHA", "role": "lead"}]}
    assert [p["name"] for p in body["data"]["principals"]["nodes"]] == ["alice", "bob"]
    assert body["data"]["principals"]["nodes"][1] == {"id": workspace.principals["bob"], "name": "bob", "kind": "user"}


async def test_mcp_list_principals_lets_an_assistant_address_a_colleague(api_url: str, workspace: Workspace) -> None:
    alice = await workspace.key("alice", memberships={"ALPHA": "lead"})
    await workspace.key("bob", memberships={"ALPHA": "contributor"})
    await workspace.key("carol", memberships={"BETA": "lead"})
    async with mcp_session(api_url, alice) as session:
        found = tool_json(await session.call_tool("list_principals", {"query": "bo"}))
        nobody = tool_json(await session.call_tool("list_principals", {"query": "carol"}))
    assert found["data"] == [{"id": workspace.principals["bob"], "name": "bob", "kind": "user"}]
    assert nobody["data"] == []
