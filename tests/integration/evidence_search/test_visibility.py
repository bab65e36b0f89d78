"""Only projects where the caller holds context:read: directly, by engagement and portfolio fan-out,
over REST, GraphQL and MCP alike."""

from __future__ import annotations

from typing import Any

import httpx

from groundwork.persistence import change_feed, db
from tests.conftest import Workspace, mcp_session, tool_json
from tests.integration.evidence_search.helpers import contribute, search

GQL = """
query ($subject: ContextEngineSubjectInput!, $query: String!, $first: Int, $after: String) {
  contextPassages(subjectRef: $subject, query: $query, first: $first, after: $after) {
    nodes { id text projectId page paragraph provenanceQuality segmenterVersion
            source { id uri versionId } highlights { start end } span { start end } }
    pageInfo { hasNextPage endCursor }
    truncated
    totalCount
  }
}
"""


async def _subjects(workspace: Workspace) -> dict[str, tuple[str, str]]:
    row = await db.fetchrow(
        "SELECT e.id AS engagement_id, e.portfolio_id FROM projects p JOIN engagements e ON e.id = p.engagement_id"
        " WHERE p.id = $1",
        workspace.projects["ALPHA"],
    )
    assert row is not None
    return {
        "alpha": ("project", workspace.projects["ALPHA"]),
        "beta": ("project", workspace.projects["BETA"]),
        "engagement": ("engagement", row["engagement_id"]),
        "portfolio": ("portfolio", row["portfolio_id"]),
    }


async def _seed(client: httpx.AsyncClient, workspace: Workspace) -> None:
    await contribute(workspace, "ALPHA", "alpha.md", "Zephyrine rollout for project alpha.")
    await contribute(workspace, "BETA", "beta.md", "Zephyrine rollout for project beta, confidential.")


async def test_rest_fan_out_reaches_only_projects_with_context_read(
    client: httpx.AsyncClient, workspace: Workspace, worker: Any
) -> None:
    await _seed(client, workspace)
    subjects = await _subjects(workspace)
    viewer = await workspace.key("vic", ["context-engine:read"], memberships={"ALPHA": "viewer", "BETA": "guest"})

    for name in ("alpha", "engagement", "portfolio"):
        answer = await search(client, workspace, viewer, "zephyrine", subject=subjects[name])
        assert [p["text"] for p in answer["data"]] == ["Zephyrine rollout for project alpha."], name
        assert answer["totalCount"] == 1
    denied = await search(client, workspace, viewer, "zephyrine", subject=subjects["beta"], expect=404)
    assert denied["code"] == "not_found"

    guest = await workspace.key("gus", ["context-engine:read"], memberships={"ALPHA": "guest", "BETA": "guest"})
    for name in ("alpha", "beta", "engagement", "portfolio"):
        assert (await search(client, workspace, guest, "zephyrine", subject=subjects[name], expect=404))[
            "code"
        ] == "not_found"

    outsider = await workspace.key("out", ["context-engine:read"])
    assert await search(client, workspace, outsider, "zephyrine", subject=subjects["portfolio"], expect=404)

    admin = await workspace.key("boss", ["context-engine:read"], admin=True)
    both = await search(client, workspace, admin, "zephyrine", subject=subjects["portfolio"])
    assert sorted(p["projectId"] for p in both["data"]) == sorted(workspace.projects.values())

    no_scope = await workspace.key("noscope", ["work-items:read"], admin=True)
    refused = await search(client, workspace, no_scope, "zephyrine", subject=subjects["alpha"], expect=403)
    assert refused["required_scope"] == "context-engine:read"


async def test_graphql_applies_the_same_visibility(
    client: httpx.AsyncClient, workspace: Workspace, worker: Any
) -> None:
    await _seed(client, workspace)
    subjects = await _subjects(workspace)
    viewer = await workspace.key("vic", ["context-engine:read"], memberships={"ALPHA": "viewer", "BETA": "guest"})

    async def gql(subject: tuple[str, str], key: str = viewer) -> dict[str, Any]:
        variables = {"subject": {"type": subject[0], "id": subject[1]}, "query": "zephyrine", "first": 10}
        response = await client.post(
            "/graphql", json={"query": GQL, "variables": variables}, headers=workspace.headers(key)
        )
        assert response.status_code == 200, response.text
        return response.json()

    rest = await search(client, workspace, viewer, "zephyrine", subject=subjects["engagement"])
    for name in ("engagement", "portfolio"):
        connection = (await gql(subjects[name]))["data"]["contextPassages"]
        [node] = connection["nodes"]
        [rest_hit] = rest["data"]
        assert node["id"] == rest_hit["id"] and node["text"] == rest_hit["text"]
        assert node["projectId"] == workspace.projects["ALPHA"]
        assert node["highlights"] == rest_hit["highlights"] and node["span"] == rest_hit["span"]
        assert connection["totalCount"] == 1 and connection["truncated"] is False
        # The old name answers the same while it is served (deprecated for one minor version).
        old_name = GQL.replace("contextPassages(", "contextCorpusSearch(")
        variables = {"subject": {"type": subjects[name][0], "id": subjects[name][1]}, "query": "zephyrine", "first": 10}
        response = await client.post(
            "/graphql", json={"query": old_name, "variables": variables}, headers=workspace.headers(viewer)
        )
        assert response.json()["data"]["contextCorpusSearch"] == connection
    [error] = (await gql(subjects["beta"]))["errors"]
    assert error["extensions"]["code"] == "not_found"
    bad = await gql(("project", subjects["alpha"][1]))
    assert bad["data"]["contextPassages"]["nodes"]
    no_scope = await workspace.key("noscope", ["work-items:read"], admin=True)
    [error] = (await gql(subjects["alpha"], no_scope))["errors"]
    assert error["extensions"]["code"] == "insufficient_scope"


async def test_mcp_search_context_applies_the_same_visibility(
    api_url: str, client: httpx.AsyncClient, workspace: Workspace, worker: Any
) -> None:
    await _seed(client, workspace)
    subjects = await _subjects(workspace)
    viewer = await workspace.key("vic", ["context-engine:read"], memberships={"ALPHA": "viewer", "BETA": "guest"})
    rest = await search(client, workspace, viewer, "zephyrine", subject=subjects["portfolio"])
    async with mcp_session(api_url, viewer) as session:
        tools = {t.name: t for t in (await session.list_tools()).tools}
        assert tools["search_context"].annotations.read_only_hint is True
        for name in ("engagement", "portfolio", "alpha"):
            kind, subject_id = subjects[name]
            result = await session.call_tool(
                "search_context", {"subject_ref": {"type": kind, "id": subject_id}, "query": "zephyrine"}
            )
            assert not result.is_error, result.content
            answer = tool_json(result)
            assert [p["id"] for p in answer["data"]] == [p["id"] for p in rest["data"]]
            assert answer["data"][0]["text"] == "Zephyrine rollout for project alpha."
        kind, subject_id = subjects["beta"]
        hidden = await session.call_tool(
            "search_context", {"subject_ref": {"type": kind, "id": subject_id}, "query": "zephyrine"}
        )
        assert hidden.is_error and '"not_found"' in hidden.content[0].text
        malformed = await session.call_tool(
            "search_context", {"subject_ref": {"type": "project", "id": subjects["alpha"][1]}, "query": '"open'}
        )
        assert malformed.is_error and '"invalid_query"' in malformed.content[0].text
    no_scope = await workspace.key("noscope", ["work-items:read"], admin=True)
    async with mcp_session(api_url, no_scope) as session:
        refused = await session.call_tool(
            "search_context", {"subject_ref": {"type": "project", "id": subjects["alpha"][1]}, "query": "zephyrine"}
        )
        assert refused.is_error and "insufficient_scope" in refused.content[0].text


async def test_cached_visibility_follows_a_membership_change_at_once(
    client: httpx.AsyncClient, workspace: Workspace, worker: Any
) -> None:
    await _seed(client, workspace)
    key = await workspace.key("vera", ["context-engine:read"], memberships={"ALPHA": "viewer"})
    subjects = await _subjects(workspace)
    for _ in range(2):  # the second answer comes from this API process's cache of what vera may read
        found = await search(client, workspace, key, "zephyrine", subject=subjects["engagement"])
        assert {p["projectId"] for p in found["data"]} == {workspace.projects["ALPHA"]}
    await workspace.key("vera", ["context-engine:read"], memberships={"BETA": "viewer"})
    widened = await search(client, workspace, key, "zephyrine", subject=subjects["engagement"])
    assert {p["projectId"] for p in widened["data"]} == set(workspace.projects.values())
    await db.execute("DELETE FROM memberships WHERE principal_id = $1", workspace.principals["vera"])
    await change_feed.caught_up()  # a change made by anyone reaches this process's cache through the feed
    await search(client, workspace, key, "zephyrine", subject=subjects["engagement"], expect=404)
