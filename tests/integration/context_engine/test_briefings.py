"""The synthesized query: deterministic (byte-equal across calls and API processes), every claim with evidence that
resolves, engagement fan-out limited to visible projects, and the same briefing over REST, GraphQL and MCP."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import httpx

from groundwork.config import Settings
from groundwork.platform.search_replica.package_projection import catch_up_package_index
from groundwork.search import corpus_index
from groundwork.search.package_index import package_index
from tests.conftest import Workspace, idem, mcp_session, tool_json
from tests.integration.context_engine.helpers import body, brief, contribute, engagement_of, evidence, get, register
from tests.integration.evidence_search.helpers import contribute as contribute_source
from tests.integration.evidence_search.helpers import search

QUESTION = "What risks and blockers threaten the quokka migration, and the zebra?"
GRAPHQL = """
query ($question: String!, $subject: ContextEngineSubjectInput) {
  contextQuery(question: $question, subjectRef: $subject) {
    subject { type id } question answer asOf
    findings { ...claim } risks { ...claim } blockers { ...claim }
    coverage { evidenceCount providerCount missing }
    freshness { status asOf ageDays }
    provenance { source promoterIdentity generatedAt }
  }
}
fragment claim on ContextClaim {
  text packageId projectId term contributionType relevance
  evidenceRefs { id provider capability asOf freshness { status asOf ageDays } reference { kind id class href }
                 provenance { source promoterIdentity generatedAt } }
  freshness { status asOf ageDays }
  provenance { source promoterIdentity generatedAt }
}
"""


async def _seed(client: httpx.AsyncClient, workspace: Workspace) -> dict[str, Any]:
    admin = await workspace.key("owner", admin=True)
    item = (
        await client.post(
            "/api/v1/work-items",
            json={"project_id": workspace.projects["ALPHA"], "title": "Quokka migration", "status": "in_progress"},
            headers=workspace.headers(admin, **idem()),
        )
    ).json()["data"]
    await contribute_source(
        workspace, "ALPHA", "notes/quokka.md", "The quokka migration is blocked by the vendor export.\n"
    )
    [passage] = (await search(client, workspace, admin, "quokka vendor export"))["data"]
    radar = await register(workspace, "risk-radar", capabilities=["risks", "blockers", "findings"])
    audit = await register(workspace, "audit-bot", capabilities=["risks"])
    alpha, beta = workspace.projects["ALPHA"], workspace.projects["BETA"]
    blocker = await contribute(
        workspace,
        body(
            radar,
            alpha,
            "Quokka export",
            "The quokka migration is blocked by the vendor export.",
            "blocker",
            items=[
                evidence("blockers", passage["id"], "passage", as_of="2026-11-20T10:00:00.000000Z"),
                evidence("blockers", item["id"], "work_item", as_of="2026-11-19T10:00:00.000000Z"),
            ],
        ),
    )
    risk = await contribute(
        workspace,
        body(
            radar,
            alpha,
            "Quokka cut-over",
            "Quokka cut-over risks a weekend outage.",
            items=[evidence(ref="plan-1", as_of="2026-10-01T08:00:00.000000Z")],
        ),
    )
    merged = await contribute(
        workspace,
        body(
            audit,
            alpha,
            "quokka CUT-OVER",
            "Audit agrees.",
            items=[evidence(ref="audit-4", as_of="2026-11-01T08:00:00.000000Z")],
        ),
    )
    assert merged["entryId"] == risk["entryId"]
    hidden = await contribute(
        workspace, body(radar, beta, "Quokka in beta", "Quokka risks in beta too.", items=[evidence(ref="b-1")])
    )
    return {"admin": admin, "item": item, "passage": passage, "blocker": blocker, "risk": risk, "hidden": hidden}


async def test_a_briefing_answers_with_claims_that_keep_their_evidence_and_names_what_is_missing(
    client: httpx.AsyncClient, workspace: Workspace, worker: Any
) -> None:
    seeded = await _seed(client, workspace)
    key = await workspace.key("vic", ["context-engine:read", "work-items:read"], memberships={"ALPHA": "viewer"})
    answer = (await brief(client, workspace, key, QUESTION, project_id=workspace.projects["ALPHA"])).json()["data"]
    assert answer["subject"] == {"type": "project", "id": workspace.projects["ALPHA"]}
    assert answer["question"] == QUESTION
    assert [c["packageId"] for c in answer["blockers"]] == [seeded["blocker"]["entryId"]]
    assert [c["packageId"] for c in answer["risks"]] == [seeded["risk"]["entryId"]]
    assert answer["findings"] == []
    assert answer["blockers"][0]["text"] == "The quokka migration is blocked by the vendor export."
    assert answer["asOf"] == "2026-11-20T10:00:00.000000Z"  # the newest evidence, not the clock
    # "threaten" asks for risks (answered by the risk), "zebra" is covered by no claim.
    assert answer["answer"] == "partial"
    assert answer["coverage"] == {"evidenceCount": 4, "providerCount": 2, "missing": ["zebra"]}
    risk = answer["risks"][0]
    # Freshness inside a briefing is measured against its own asOf.
    assert risk["freshness"] == {"status": "aging", "asOf": "2026-11-01T08:00:00.000000Z", "ageDays": 19}
    assert answer["freshness"] == risk["freshness"]  # the least fresh claim
    assert {p["source"] for p in answer["provenance"]} == {"risk-radar"}

    for claim in answer["findings"] + answer["risks"] + answer["blockers"]:
        assert claim["evidenceRefs"] and claim["provenance"]["source"] and claim["freshness"]
        listed = await get(client, workspace, key, f"/api/v1/context-engine/packages/{claim['packageId']}/evidence")
        assert {r["id"] for r in claim["evidenceRefs"]} == {r["id"] for r in listed["data"]}
        for ref in claim["evidenceRefs"]:
            kind, ref_id = ref["reference"]["kind"], ref["reference"]["id"]
            if kind == "work_item":
                resolved = await get(client, workspace, key, f"/api/v1/work-items/{ref_id}")
                assert resolved["data"]["id"] == ref_id
            elif kind == "passage":
                found = await search(client, workspace, key, "quokka vendor export")
                assert ref_id in [p["id"] for p in found["data"]]
            else:
                assert kind == "external"


async def test_a_briefing_is_byte_equal_across_calls_and_api_processes(
    client: httpx.AsyncClient, workspace: Workspace, worker: Any, second_api_process: str
) -> None:
    seeded = await _seed(client, workspace)
    target: dict[str, Any] = {"project_id": workspace.projects["ALPHA"]}
    first = (await brief(client, workspace, seeded["admin"], QUESTION, **target)).content
    second = (await brief(client, workspace, seeded["admin"], QUESTION, **target)).content
    assert first == second
    async with httpx.AsyncClient(base_url=second_api_process, timeout=30) as other:
        await _caught_up(other)  # its own replica follows the change logs: what it answers from is all there
        response = await other.post(
            "/api/v1/context/query",
            json={"question": QUESTION, **target},
            headers=workspace.headers(seeded["admin"]),
        )
    assert response.status_code == 200, response.text
    assert response.content == first


async def _caught_up(api: httpx.AsyncClient) -> None:
    """Wait until an API process's search replica has applied every logged change (at most 30 s)."""
    for _ in range(300):
        indexes = (await api.get("/health/ready")).json()["search"]["indexes"]
        if all(index["changes_behind"] == 0 for index in indexes.values()):
            return
        await asyncio.sleep(0.1)
    raise AssertionError(f"the replica is still behind: {indexes}")


async def test_an_engagement_briefing_never_includes_an_invisible_child_project(
    client: httpx.AsyncClient, workspace: Workspace, worker: Any
) -> None:
    seeded = await _seed(client, workspace)
    engagement: dict[str, Any] = {"subject_ref": {"type": "engagement", "id": await engagement_of(workspace)}}
    viewer = await workspace.key("vic", ["context-engine:read"], memberships={"ALPHA": "viewer", "BETA": "guest"})
    seen = (await brief(client, workspace, viewer, "quokka risks", **engagement)).json()["data"]
    projects = {c["projectId"] for c in seen["findings"] + seen["risks"] + seen["blockers"]}
    assert projects == {workspace.projects["ALPHA"]}
    assert seeded["hidden"]["entryId"] not in [c["packageId"] for c in seen["risks"]]
    admin = (await brief(client, workspace, seeded["admin"], "quokka risks", **engagement)).json()["data"]
    assert seeded["hidden"]["entryId"] in [c["packageId"] for c in admin["risks"]]
    guest = await workspace.key("gus", ["context-engine:read"], memberships={"ALPHA": "guest", "BETA": "guest"})
    refused = await brief(client, workspace, guest, "quokka risks", expect=404, **engagement)
    assert refused.json()["code"] == "not_found"


async def test_rest_graphql_and_mcp_give_the_same_briefing(
    client: httpx.AsyncClient, api_url: str, workspace: Workspace, worker: Any
) -> None:
    seeded = await _seed(client, workspace)
    subject = {"type": "project", "id": workspace.projects["ALPHA"]}
    rest = (await brief(client, workspace, seeded["admin"], QUESTION, subject_ref=subject)).json()["data"]
    assert rest["risks"] and rest["blockers"]
    graphql = await client.post(
        "/graphql",
        json={"query": GRAPHQL, "variables": {"question": QUESTION, "subject": subject}},
        headers=workspace.headers(seeded["admin"]),
    )
    assert "errors" not in graphql.json(), graphql.text
    assert graphql.json()["data"]["contextQuery"] == rest
    async with mcp_session(api_url, seeded["admin"]) as session:
        tools = {t.name: t for t in (await session.list_tools()).tools}
        for name in (
            "query_context",
            "list_context_packages",
            "get_context_package",
            "get_package_evidence",
            "list_context_providers",
            "get_context_overview",
            "search_context_packages",
        ):
            assert tools[name].annotations.read_only_hint is True, name
        result = await session.call_tool("query_context", {"question": QUESTION, "subject_ref": subject})
        assert not result.is_error, result.content
        assert tool_json(result)["data"] == rest
        by_project = await session.call_tool("query_context", {"question": QUESTION, "project_id": subject["id"]})
        assert tool_json(by_project)["data"] == rest


async def test_a_query_is_read_only_and_checks_its_input(
    client: httpx.AsyncClient, workspace: Workspace, worker: Any
) -> None:
    key = await workspace.key(admin=True)
    alpha = workspace.projects["ALPHA"]
    empty = (await brief(client, workspace, key, "What about zebra stripes?", project_id=alpha)).json()["data"]
    assert empty["findings"] == empty["risks"] == empty["blockers"] == []
    assert empty["asOf"] is None and empty["freshness"] is None and empty["coverage"]["missing"] == ["zebra", "stripes"]
    for payload, path, status in (
        ({"question": "x"}, "project_id", 422),
        ({"question": "x", "project_id": alpha, "subject_ref": {"type": "project", "id": alpha}}, "project_id", 422),
        ({"question": "  ", "project_id": alpha}, "question", 422),
        ({"question": "x" * 1001, "project_id": alpha}, "question", 422),
        ({"question": "x", "subject_ref": {"type": "team", "id": "t"}}, "subject_ref.type", 422),
        ({"question": 3, "project_id": alpha}, "question", 400),
    ):
        response = await client.post("/api/v1/context/query", json=payload, headers=workspace.headers(key))
        assert response.status_code == status, (payload, response.text)
        assert path in [e["path"] for e in response.json()["errors"]], response.text
    missing = await client.post(
        "/api/v1/context/query", json={"question": "x", "project_id": "prj_nope"}, headers=workspace.headers(key)
    )
    assert missing.status_code == 404
    no_scope = await workspace.key("noscope", ["work-items:read"], admin=True)
    refused = await client.post(
        "/api/v1/context/query", json={"question": "x", "project_id": alpha}, headers=workspace.headers(no_scope)
    )
    assert refused.status_code == 403 and refused.json()["required_scope"] == "context-engine:read"


async def test_a_briefing_over_damaged_package_index_files_is_a_coded_503_never_a_500(
    client: httpx.AsyncClient, workspace: Workspace, worker: Any, settings: Settings, tmp_path: Path
) -> None:
    await _seed(client, workspace)
    key = await workspace.key("vic", ["context-engine:read", "work-items:read"], memberships={"ALPHA": "viewer"})
    try:
        corpus_index.configure(tmp_path / "replica")
        await catch_up_package_index(package_index())
        await brief(client, workspace, key, QUESTION, project_id=workspace.projects["ALPHA"])
        packages = tmp_path / "replica" / "packages"
        for segment_file in (packages / (packages / "CURRENT").read_text().strip()).iterdir():
            if segment_file.suffix in (".term", ".idx", ".store"):
                with segment_file.open("r+b") as handle:  # damaged in place, under the open reader
                    handle.write(bytes(segment_file.stat().st_size))
        refused = await brief(client, workspace, key, QUESTION, project_id=workspace.projects["ALPHA"], expect=503)
        assert refused.json()["code"] == "service_unavailable"
    finally:
        corpus_index.configure(settings.index_dir)
