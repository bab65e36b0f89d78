"""Evidence a reviewer can open: a passage by id (REST, GraphQL, MCP) with its source, dates and neighbours, under
search's visibility and classification rules, 410 once its source changed; a project's sources listed with their
document dates; a meeting note's packages aged from the meeting's date, not from when it was ingested."""

from __future__ import annotations

from typing import Any

import httpx

from groundwork.services.context_engine.providers import run_builtin_providers
from tests.conftest import Workspace, mcp_session, tool_json
from tests.integration.context_engine.helpers import get
from tests.integration.evidence_search.helpers import contribute, search

NOTE = """# Steering committee

Date: 12 May 2026

## Decisions

Decision: the zephyrine export goes first.

## Budget

The zephyrine budget is unchanged.
"""


async def _passage(client: httpx.AsyncClient, workspace: Workspace, key: str, query: str) -> dict[str, Any]:
    [hit] = (await search(client, workspace, key, query))["data"]
    return dict(hit)


async def test_a_passage_opens_by_id_exactly_as_stored_with_its_source_and_neighbours(
    client: httpx.AsyncClient, workspace: Workspace, worker: Any, api_url: str
) -> None:
    await contribute(workspace, "ALPHA", "2026-05-12-steering.md", NOTE)
    admin = await workspace.key("boss", ["context-engine:read"], admin=True)
    hit = await _passage(client, workspace, admin, "export")

    response = await client.get(f"/api/v1/context/passages/{hit['id']}", headers=workspace.headers(admin))
    assert response.status_code == 200, response.text
    opened = response.json()["data"]
    assert opened["text"] == "Decision: the zephyrine export goes first."
    assert opened["section"] == hit["section"] and opened["span"] == hit["span"]
    assert opened["source"]["uri"] == "2026-05-12-steering.md"
    assert opened["source"]["documentDate"].startswith("2026-05-12")
    assert opened["source"]["documentDateSource"] == "date_line"
    assert opened["previousPassageId"] is not None and opened["nextPassageId"] is not None
    following = await client.get(
        f"/api/v1/context/passages/{opened['nextPassageId']}", headers=workspace.headers(admin)
    )
    assert following.json()["data"]["text"] == "The zephyrine budget is unchanged."
    assert following.json()["data"]["previousPassageId"] == hit["id"]

    gql = await client.post(
        "/graphql",
        json={"query": "query ($id: ID!) { contextPassage(id: $id) { id text } }", "variables": {"id": hit["id"]}},
        headers=workspace.headers(admin),
    )
    assert gql.json()["data"]["contextPassage"] == {"id": hit["id"], "text": opened["text"]}
    async with mcp_session(api_url, admin) as session:
        tool = tool_json(await session.call_tool("get_passage", {"passage_id": hit["id"]}))
    assert tool["data"] == opened


async def test_a_passage_is_404_without_visibility_or_the_classification_scope_and_410_after_its_source_changed(
    client: httpx.AsyncClient, workspace: Workspace, worker: Any
) -> None:
    await contribute(workspace, "ALPHA", "ledger.md", "The zephyrine ledger overruns.", classification="financial")
    await contribute(workspace, "ALPHA", "plan.md", "The zephyrine plan starts in June.")
    finance = await workspace.key("fin", ["context-engine:read", "context-engine:financial"], admin=True)
    ledger = await _passage(client, workspace, finance, "ledger")
    plan = await _passage(client, workspace, finance, "plan")

    plain = await workspace.key("plain", ["context-engine:read"], admin=True)
    outsider = await workspace.key("out", ["context-engine:read"], memberships={"BETA": "viewer"})
    for key, passage_id in ((plain, ledger["id"]), (outsider, plan["id"]), (plain, "psg_nothing")):
        refused = await client.get(f"/api/v1/context/passages/{passage_id}", headers=workspace.headers(key))
        assert refused.status_code == 404 and refused.json()["code"] == "not_found"
        assert "zephyrine" not in refused.text
    assert (
        await client.get(f"/api/v1/context/passages/{plan['id']}", headers=workspace.headers(plain))
    ).status_code == 200

    await contribute(workspace, "ALPHA", "plan.md", "The zephyrine plan starts in July.")
    gone = await client.get(f"/api/v1/context/passages/{plan['id']}", headers=workspace.headers(plain))
    assert gone.status_code == 410 and gone.json()["code"] == "passage_superseded"
    current = await _passage(client, workspace, plain, "plan")
    assert current["id"] != plan["id"]
    assert gone.json()["active_version_id"] == current["source"]["versionId"]


async def test_sources_are_listed_with_their_document_dates_and_passage_counts(
    client: httpx.AsyncClient, workspace: Workspace, worker: Any
) -> None:
    await contribute(workspace, "ALPHA", "2026-05-12-steering.md", NOTE)
    await contribute(workspace, "ALPHA", "undated.md", "The zephyrine runbook.")
    await contribute(workspace, "BETA", "beta.md", "Date: 1 June 2026\n\nBeta only.")
    await contribute(workspace, "ALPHA", "ledger.md", "The ledger.", classification="financial")
    viewer = await workspace.key("vic", ["context-engine:read"], memberships={"ALPHA": "viewer"})

    listed = await get(client, workspace, viewer, "/api/v1/context/sources", project_id=workspace.projects["ALPHA"])
    by_uri = {s["uri"]: s for s in listed["data"]}
    assert set(by_uri) == {"2026-05-12-steering.md", "undated.md"}  # no BETA source, no financial one
    dated = by_uri["2026-05-12-steering.md"]
    assert dated["documentDate"].startswith("2026-05-12") and dated["documentDateSource"] == "date_line"
    assert dated["passageCount"] == 3 and dated["activeVersionId"] is not None
    undated = by_uri["undated.md"]
    assert undated["documentDateSource"] == "ingestion" and undated["documentDate"] == undated["ingestedAt"]

    first = await get(
        client, workspace, viewer, "/api/v1/context/sources", project_id=workspace.projects["ALPHA"], limit=1
    )
    assert first["page"]["hasMore"] is True and len(first["data"]) == 1
    refused = await client.get(
        "/api/v1/context/sources",
        params={"project_id": workspace.projects["BETA"]},
        headers=workspace.headers(viewer),
    )
    assert refused.status_code == 404


async def test_a_dated_meeting_note_makes_stale_packages_however_recently_it_was_ingested(
    client: httpx.AsyncClient, workspace: Workspace, worker: Any, temporal_client: Any, settings: Any
) -> None:
    await contribute(workspace, "ALPHA", "2026-05-12-steering.md", NOTE)
    await run_builtin_providers(workspace.slug, client=temporal_client, task_queue=settings.temporal_task_queue)
    admin = await workspace.key("boss", admin=True)
    packages = (await get(client, workspace, admin, "/api/v1/context-engine/packages", limit=100))["data"]
    [decision] = [p for p in packages if p["contributionType"] == "decision"]
    assert decision["freshness"]["status"] == "stale" and decision["status"] == "stale"
    assert decision["freshness"]["ageDays"] > 90
    evidence = await get(client, workspace, admin, f"/api/v1/context-engine/packages/{decision['id']}/evidence")
    [ref] = evidence["data"]
    assert ref["asOf"].startswith("2026-05-12") and ref["freshness"]["status"] == "stale"
    assert ref["reference"]["href"] == f"/api/v1/context/passages/{ref['reference']['id']}"
