"""Financial and staffing content exists only for keys holding that scope: lists, counts, coverage, overview,
providers, briefings, package and evidence search, over REST, GraphQL and MCP alike."""

from __future__ import annotations

from typing import Any

import httpx

from groundwork.platform.search_replica.corpus_projection import catch_up_index
from groundwork.search.corpus_index import corpus_index
from tests.conftest import Workspace, idem, mcp_session, tool_json
from tests.integration.context_engine.helpers import body, brief, contribute, evidence, get, register
from tests.integration.evidence_search.helpers import contribute as contribute_source
from tests.integration.evidence_search.helpers import search

READ = "context-engine:read"
FINANCIAL = "context-engine:financial"
STAFFING = "context-engine:staffing"


async def _seed(client: httpx.AsyncClient, workspace: Workspace) -> dict[str, Any]:
    alpha = workspace.projects["ALPHA"]
    radar = await register(workspace, "risk-radar")
    ledger = await register(workspace, "ledger", "financial", ["risks"])
    people = await register(workspace, "people", "staffing", ["risks"])
    general = await contribute(workspace, body(radar, alpha, "Quokka cut-over", "Quokka cut-over risks an outage."))
    money = await contribute(workspace, body(ledger, alpha, "Quokka budget", "Quokka budget overrun of 20%."))
    staff = await contribute(workspace, body(people, alpha, "Quokka attrition", "Quokka team attrition risk."))
    # A general provider citing financial evidence makes a financial entry.
    cited = await contribute(
        workspace,
        body(radar, alpha, "Quokka invoices", "Quokka invoices are late.", items=[evidence(cls="financial")]),
    )
    await contribute_source(workspace, "ALPHA", "plan.md", "The quokka plan is on track.\n")
    await contribute_source(
        workspace, "ALPHA", "budget.md", "The quokka budget is overspent.\n", classification="financial"
    )
    return {
        "general": general["entryId"],
        "restricted": {money["entryId"], staff["entryId"], cited["entryId"]},
        "financial": {money["entryId"], cited["entryId"]},
        "staffing": {staff["entryId"]},
    }


async def _visible_everywhere(
    client: httpx.AsyncClient, api_url: str, workspace: Workspace, key: str
) -> dict[str, Any]:
    """What one key sees of the quokka content, through every read and transport."""
    alpha = workspace.projects["ALPHA"]
    seen: dict[str, Any] = {}
    seen["list"] = {p["id"] for p in (await get(client, workspace, key, "/api/v1/context-engine/packages"))["data"]}
    found = (await get(client, workspace, key, "/api/v1/context-engine/search", query="quokka"))["data"]
    seen["search"] = ({n["package"]["id"] for n in found["nodes"]}, found["totalCount"])
    overview = (await get(client, workspace, key, "/api/v1/context-engine"))["data"]
    alpha_overview = next(p for p in overview["projects"] if p["projectId"] == alpha)
    seen["overview"] = (
        alpha_overview["counts"]["byType"]["risk"],
        alpha_overview["coverage"]["evidenceCount"],
        alpha_overview["coverage"]["providerCount"],
        sorted(alpha_overview["coverage"]["missing"]),
        sorted(p["name"] for p in overview["providers"]),
    )
    providers = (await get(client, workspace, key, "/api/v1/context-engine/providers"))["data"]
    seen["providers"] = {p["name"]: p["contributionCount"] for p in providers}
    answer = (await brief(client, workspace, key, "quokka risks", project_id=alpha)).json()["data"]
    seen["briefing"] = (
        {c["packageId"] for c in answer["risks"] + answer["findings"]},
        answer["coverage"]["evidenceCount"],
        answer["coverage"]["providerCount"],
    )
    passages = await search(client, workspace, key, "quokka")
    seen["evidence_search"] = ({p["source"]["uri"] for p in passages["data"]}, passages["totalCount"])
    graphql = (
        await client.post(
            "/graphql",
            json={
                "query": """query ($p: ID!) {
                  contextEnginePackages { nodes { id } }
                  contextEngineSearch(query: "quokka") { totalCount nodes { package { id } } }
                  contextEngineProviders { name contributionCount }
                  contextQuery(question: "quokka risks", projectId: $p) { risks { packageId } }
                  contextPassages(subjectRef: {type: project, id: $p}, query: "quokka") { totalCount }
                }""",
                "variables": {"p": alpha},
            },
            headers=workspace.headers(key),
        )
    ).json()
    assert "errors" not in graphql, graphql
    data = graphql["data"]
    seen["graphql"] = (
        {n["id"] for n in data["contextEnginePackages"]["nodes"]},
        data["contextEngineSearch"]["totalCount"],
        {p["name"] for p in data["contextEngineProviders"]},
        {c["packageId"] for c in data["contextQuery"]["risks"]},
        data["contextPassages"]["totalCount"],
    )
    async with mcp_session(api_url, key) as session:
        listed = tool_json(await session.call_tool("list_context_packages", {}))
        searched = tool_json(await session.call_tool("search_context_packages", {"query": "quokka"}))
        briefed = tool_json(await session.call_tool("query_context", {"question": "quokka risks", "project_id": alpha}))
        corpus = tool_json(
            await session.call_tool(
                "search_context", {"subject_ref": {"type": "project", "id": alpha}, "query": "quokka"}
            )
        )
        providers_tool = tool_json(await session.call_tool("list_context_providers", {}))
    seen["mcp"] = (
        {p["id"] for p in listed["data"]},
        searched["data"]["totalCount"],
        {c["packageId"] for c in briefed["data"]["risks"]},
        corpus["totalCount"],
        {p["name"] for p in providers_tool["data"]},
    )
    return seen


async def test_restricted_content_never_leaks_without_its_scope(
    client: httpx.AsyncClient, api_url: str, workspace: Workspace, worker: Any
) -> None:
    ids = await _seed(client, workspace)
    plain = await workspace.key("plain", [READ], admin=True)
    seen = await _visible_everywhere(client, api_url, workspace, plain)
    assert seen["list"] == {ids["general"]}
    assert seen["search"] == ({ids["general"]}, 1)
    assert seen["overview"] == (1, 1, 1, [], ["risk-radar"])
    assert seen["providers"] == {"risk-radar": 1}
    assert seen["briefing"] == ({ids["general"]}, 1, 1)
    assert seen["evidence_search"] == ({"plan.md"}, 1)
    assert seen["graphql"] == ({ids["general"]}, 1, {"risk-radar"}, {ids["general"]}, 1)
    assert seen["mcp"] == ({ids["general"]}, 1, {ids["general"]}, 1, {"risk-radar"})
    for package_id in ids["restricted"]:
        assert await get(client, workspace, plain, f"/api/v1/context-engine/{package_id}", expect=404)
        await get(client, workspace, plain, f"/api/v1/context-engine/packages/{package_id}/evidence", expect=404)


async def test_each_restricted_scope_opens_only_its_own_class(
    client: httpx.AsyncClient, api_url: str, workspace: Workspace, worker: Any
) -> None:
    ids = await _seed(client, workspace)
    finance = await workspace.key("fin", [READ, FINANCIAL], admin=True)
    seen = await _visible_everywhere(client, api_url, workspace, finance)
    assert seen["list"] == {ids["general"], *ids["financial"]}
    assert seen["search"][1] == 3 and seen["briefing"][0] == {ids["general"], *ids["financial"]}
    assert seen["overview"][4] == ["ledger", "risk-radar"]
    assert seen["providers"] == {"ledger": 1, "risk-radar": 2}
    assert seen["evidence_search"] == ({"plan.md", "budget.md"}, 2)
    everything = await workspace.key("all", [READ, FINANCIAL, STAFFING], admin=True)
    seen = await _visible_everywhere(client, api_url, workspace, everything)
    assert seen["list"] == {ids["general"], *ids["restricted"]}
    assert seen["providers"] == {"ledger": 1, "people": 1, "risk-radar": 2}
    staffing_only = await workspace.key("hr", [READ, STAFFING], admin=True)
    seen = await _visible_everywhere(client, api_url, workspace, staffing_only)
    assert seen["list"] == {ids["general"], *ids["staffing"]}
    assert seen["evidence_search"] == ({"plan.md"}, 1)


async def test_reclassifying_a_source_takes_its_passages_out_of_reach(
    client: httpx.AsyncClient, workspace: Workspace, worker: Any
) -> None:
    plain = await workspace.key("plain", [READ], admin=True)
    first = await contribute_source(workspace, "ALPHA", "salaries.md", "The okapi salaries table.\n")
    assert first["source"]["classification"] == "general"
    assert (await search(client, workspace, plain, "okapi"))["totalCount"] == 1
    response = await workspace.internal.post(
        "/internal/v1/corpus/sources",
        json={
            "project_id": workspace.projects["ALPHA"],
            "uri": "salaries.md",
            "kind": "markdown",
            "content": "The okapi salaries table.\n",
            "classification": "staffing",
        },
        headers=workspace.headers(await workspace.provider_key(), **idem()),
    )
    assert response.status_code == 200 and response.json()["data"]["outcome"] == "reclassified"
    assert response.json()["data"]["source"]["classification"] == "staffing"
    await catch_up_index(corpus_index())  # what the worker's follower does within seconds
    assert (await search(client, workspace, plain, "okapi"))["totalCount"] == 0
    staffing = await workspace.key("hr", [READ, STAFFING], admin=True)
    assert (await search(client, workspace, staffing, "okapi"))["totalCount"] == 1
