"""Context engine reads: packages, search, evidence, providers and overview; freshness moves with time; an
invisible or foreign id is 404; reads emit no events."""

from __future__ import annotations

from typing import Any

import httpx

from groundwork.persistence import db
from tests.conftest import Workspace, mcp_session, tool_json
from tests.integration.context_engine.helpers import (
    body,
    brief,
    contribute,
    days_ago,
    engagement_of,
    evidence,
    get,
    outbox_size,
    register,
)

EVIDENCE_KEYS = {"id", "provider", "capability", "asOf", "freshness", "reference", "provenance"}


async def _seed(client: httpx.AsyncClient, workspace: Workspace) -> dict[str, Any]:
    radar = await register(workspace, "risk-radar", capabilities=["risks", "blockers", "decisions"])
    audit = await register(workspace, "audit-bot", capabilities=["risks"], authority="canonical")
    alpha, beta = workspace.projects["ALPHA"], workspace.projects["BETA"]
    fresh = await contribute(
        workspace, body(radar, alpha, "Settlement timeouts", "SFTP banner timeouts break settlement.")
    )
    old = await contribute(
        workspace,
        body(radar, alpha, "Legacy vault", "The vault licence lapses.", items=[evidence(as_of=days_ago(40))]),
    )
    aging = await contribute(
        workspace,
        body(
            radar,
            beta,
            "Route planner",
            "Route planner decided: OR-Tools.",
            "decision",
            items=[evidence("decisions", "adr-3", as_of=days_ago(12))],
        ),
    )
    return {"radar": radar, "audit": audit, "fresh": fresh, "old": old, "aging": aging}


async def test_freshness_and_stale_are_computed_when_read(
    client: httpx.AsyncClient, workspace: Workspace, worker: Any
) -> None:
    seeded = await _seed(client, workspace)
    key = await workspace.key(admin=True)
    stale = (await get(client, workspace, key, f"/api/v1/context-engine/{seeded['old']['entryId']}"))["data"]
    assert (
        stale["status"] == "stale" and stale["freshness"]["status"] == "stale" and stale["freshness"]["ageDays"] == 40
    )
    aging = (await get(client, workspace, key, f"/api/v1/context-engine/{seeded['aging']['entryId']}"))["data"]
    assert aging["status"] == "ready" and aging["freshness"] == {
        "status": "aging",
        "asOf": aging["freshness"]["asOf"],
        "ageDays": 12,
    }
    # Time passes (the evidence ages): the same entry turns stale without anything being written.
    await db.execute(
        "UPDATE context_entries SET as_of = as_of - interval '20 days' WHERE id = $1", seeded["aging"]["entryId"]
    )
    later = (await get(client, workspace, key, f"/api/v1/context-engine/{seeded['aging']['entryId']}"))["data"]
    assert later["status"] == "stale" and later["freshness"]["ageDays"] == 32
    only_stale = await get(client, workspace, key, "/api/v1/context-engine/packages", status="stale")
    assert {p["id"] for p in only_stale["data"]} == {seeded["old"]["entryId"], seeded["aging"]["entryId"]}
    only_ready = await get(client, workspace, key, "/api/v1/context-engine/packages", status="ready")
    assert [p["id"] for p in only_ready["data"]] == [seeded["fresh"]["entryId"]]


async def test_package_lists_filter_and_page_newest_first(
    client: httpx.AsyncClient, workspace: Workspace, worker: Any
) -> None:
    seeded = await _seed(client, workspace)
    key = await workspace.key(admin=True)
    every = await get(client, workspace, key, "/api/v1/context-engine/packages")
    assert [p["id"] for p in every["data"]] == [
        seeded["aging"]["entryId"],
        seeded["old"]["entryId"],
        seeded["fresh"]["entryId"],
    ]
    first = await get(client, workspace, key, "/api/v1/context-engine/packages", limit=2)
    assert first["page"]["hasMore"] is True and len(first["data"]) == 2
    rest = await get(
        client, workspace, key, "/api/v1/context-engine/packages", limit=2, cursor=first["page"]["nextCursor"]
    )
    assert [p["id"] for p in rest["data"]] == [seeded["fresh"]["entryId"]] and rest["page"]["hasMore"] is False
    decisions = await get(client, workspace, key, "/api/v1/context-engine/packages", contribution_type="decision")
    assert [p["id"] for p in decisions["data"]] == [seeded["aging"]["entryId"]]
    engagement = await get(
        client, workspace, key, "/api/v1/context-engine/packages", engagement_id=await engagement_of(workspace)
    )
    assert len(engagement["data"]) == 3
    alpha = await get(client, workspace, key, "/api/v1/context-engine/packages", project_id=workspace.projects["ALPHA"])
    assert {p["scope"]["projectId"] for p in alpha["data"]} == {workspace.projects["ALPHA"]}
    for params, path, status in (
        ({"status": "pending"}, "status", 422),
        ({"contribution_type": "gossip"}, "contribution_type", 422),
        ({"project_id": workspace.projects["ALPHA"], "engagement_id": "eng_x"}, "engagement_id", 422),
        ({"cursor": "!!"}, "cursor", 400),
        ({"limit": 0}, "limit", 400),
    ):
        refused = await get(client, workspace, key, "/api/v1/context-engine/packages", expect=status, **params)
        assert refused["errors"][0]["path"] == path


async def test_package_search_ranks_counts_and_pages(
    client: httpx.AsyncClient, workspace: Workspace, worker: Any
) -> None:
    provider = await register(workspace, "risk-radar")
    alpha = workspace.projects["ALPHA"]
    ids = []
    for i in range(5):
        text = "okapi " * (5 - i) + f"note {i}"
        ids.append(
            (await contribute(workspace, body(provider, alpha, f"Okapi {i}", text, items=[evidence(ref=f"r{i}")])))[
                "entryId"
            ]
        )
    key = await workspace.key(admin=True)
    page = await get(client, workspace, key, "/api/v1/context-engine/search", query="okapi", limit=2)
    assert page["data"]["totalCount"] == 5 and page["data"]["truncated"] is False
    assert [n["package"]["id"] for n in page["data"]["nodes"]] == ids[:2]
    assert page["data"]["nodes"][0]["score"] >= page["data"]["nodes"][1]["score"] > 0
    seen = [n["package"]["id"] for n in page["data"]["nodes"]]
    cursor = page["page"]["nextCursor"]
    while cursor:
        more = await get(client, workspace, key, "/api/v1/context-engine/search", query="okapi", limit=2, cursor=cursor)
        seen += [n["package"]["id"] for n in more["data"]["nodes"]]
        cursor = more["page"]["nextCursor"]
    assert seen == ids
    phrase = await get(client, workspace, key, "/api/v1/context-engine/search", query='"note 3"')
    assert [n["package"]["id"] for n in phrase["data"]["nodes"]] == [ids[3]]
    other = await get(
        client, workspace, key, "/api/v1/context-engine/search", query="okapi", project_id=workspace.projects["BETA"]
    )
    assert other["data"] == {"totalCount": 0, "truncated": False, "nodes": []}
    bad = await get(client, workspace, key, "/api/v1/context-engine/search", query='"open', expect=400)
    assert bad["code"] == "invalid_query"
    missing = await get(client, workspace, key, "/api/v1/context-engine/search", expect=400)
    assert missing["errors"][0]["path"] == "query"
    foreign = await get(
        client,
        workspace,
        key,
        "/api/v1/context-engine/search",
        query="note",
        cursor=page["page"]["nextCursor"],
        expect=400,
    )
    assert foreign["errors"][0]["path"] == "cursor"


async def test_evidence_references_are_policy_safe_references_only(
    client: httpx.AsyncClient, workspace: Workspace, worker: Any
) -> None:
    seeded = await _seed(client, workspace)
    key = await workspace.key(admin=True)
    refs = await get(client, workspace, key, f"/api/v1/context-engine/packages/{seeded['fresh']['entryId']}/evidence")
    [ref] = refs["data"]
    assert set(ref) == EVIDENCE_KEYS
    assert ref["reference"] == {
        "kind": "external",
        "id": "ext-1",
        "class": "general",
        "href": None,
    }  # no route: outside
    assert ref["provider"] == seeded["radar"]["id"] and ref["capability"] == "risks"
    assert ref["provenance"]["source"] == "risk-radar" and ref["freshness"]["status"] == "fresh"
    assert refs["page"] == {"nextCursor": None, "hasMore": False, "next_cursor": None, "has_more": False}


async def test_providers_count_cover_and_age_over_what_the_caller_sees(
    client: httpx.AsyncClient, workspace: Workspace, worker: Any
) -> None:
    seeded = await _seed(client, workspace)
    admin = await workspace.key(admin=True)
    providers = {
        p["name"]: p for p in (await get(client, workspace, admin, "/api/v1/context-engine/providers"))["data"]
    }
    assert set(providers) == {"risk-radar", "audit-bot"}
    radar = providers["risk-radar"]
    assert radar["contributionCount"] == 3 and radar["coverageStatus"] == "covered"
    assert radar["freshnessStatus"] == "fresh" and radar["authority"] == "advisory"
    assert radar["capabilities"] == ["risks", "blockers", "decisions"] and radar["classification"] == "delivery"
    idle = providers["audit-bot"]
    assert (idle["contributionCount"], idle["coverageStatus"], idle["freshnessStatus"]) == (0, "none", None)
    alpha_only = await workspace.key("alf", ["context-engine:read"], memberships={"ALPHA": "viewer", "BETA": "guest"})
    seen = {
        p["name"]: p for p in (await get(client, workspace, alpha_only, "/api/v1/context-engine/providers"))["data"]
    }
    assert seen["risk-radar"]["contributionCount"] == 2 and seen["risk-radar"]["coverageStatus"] == "covered"
    engagement = await get(
        client, workspace, admin, "/api/v1/context-engine/providers", engagement_id=await engagement_of(workspace)
    )
    assert {p["name"]: p["coverageStatus"] for p in engagement["data"]} == {
        "audit-bot": "none",
        "risk-radar": "covered",
    }
    beta = await get(
        client, workspace, admin, "/api/v1/context-engine/providers", project_id=workspace.projects["BETA"]
    )
    assert {p["name"]: p["contributionCount"] for p in beta["data"]} == {"audit-bot": 0, "risk-radar": 1}
    # A risk package of ALPHA: audit-bot speaks to risks but is not active there, so it is not "missing".
    package = (await get(client, workspace, admin, f"/api/v1/context-engine/{seeded['fresh']['entryId']}"))["data"]
    assert package["coverage"]["missing"] == []
    await contribute(workspace, body(seeded["audit"], workspace.projects["ALPHA"], "Audit", "Audit trail gap."))
    package = (await get(client, workspace, admin, f"/api/v1/context-engine/{seeded['fresh']['entryId']}"))["data"]
    assert package["coverage"]["missing"] == ["audit-bot"]


async def test_overview_counts_by_status_and_type_per_project(
    client: httpx.AsyncClient, workspace: Workspace, worker: Any
) -> None:
    seeded = await _seed(client, workspace)
    key = await workspace.key(admin=True)
    overview = (await get(client, workspace, key, "/api/v1/context-engine"))["data"]
    assert overview["subject"] is None
    by_key = {p["key"]: p for p in overview["projects"]}
    alpha, beta = by_key["ALPHA"], by_key["BETA"]
    assert alpha["counts"]["byStatus"] == {"ready": 1, "stale": 1, "superseded": 0}
    assert alpha["counts"]["byType"]["risk"] == 2 and beta["counts"]["byType"]["decision"] == 1
    assert alpha["coverage"] == {"evidenceCount": 2, "providerCount": 1, "missing": ["audit-bot"]}
    assert alpha["freshness"]["status"] == "fresh" and beta["freshness"]["status"] == "aging"
    assert overview["counts"]["byStatus"] == {"ready": 2, "stale": 1, "superseded": 0}
    assert {p["name"] for p in overview["providers"]} == {"risk-radar", "audit-bot"}
    single = (await get(client, workspace, key, "/api/v1/context-engine", project_id=workspace.projects["BETA"]))[
        "data"
    ]
    assert single["subject"] == {"type": "project", "id": workspace.projects["BETA"]}
    assert [p["key"] for p in single["projects"]] == ["BETA"]
    assert seeded  # the seed made all of the above


async def test_an_invisible_or_foreign_package_is_404(
    client: httpx.AsyncClient, workspace: Workspace, worker: Any
) -> None:
    seeded = await _seed(client, workspace)
    package_id = seeded["fresh"]["entryId"]  # in ALPHA
    guest = await workspace.key("gus", ["context-engine:read"], memberships={"ALPHA": "guest", "BETA": "viewer"})
    outsider = await workspace.key("out", ["context-engine:read"])
    for key in (guest, outsider):
        for path in (f"/api/v1/context-engine/{package_id}", f"/api/v1/context-engine/packages/{package_id}/evidence"):
            assert (await get(client, workspace, key, path, expect=404))["code"] == "not_found"
        listed = await get(client, workspace, key, "/api/v1/context-engine/packages")
        assert package_id not in [p["id"] for p in listed["data"]]
    assert await get(
        client, workspace, guest, "/api/v1/context-engine", project_id=workspace.projects["ALPHA"], expect=404
    )
    assert (await get(client, workspace, guest, "/api/v1/context-engine/pkg_nope", expect=404))["code"] == "not_found"
    no_scope = await workspace.key("noscope", ["work-items:read"], admin=True)
    refused = await get(client, workspace, no_scope, f"/api/v1/context-engine/{package_id}", expect=403)
    assert refused["required_scope"] == "context-engine:read"


async def test_reads_emit_no_events_on_any_transport(
    client: httpx.AsyncClient, api_url: str, workspace: Workspace, worker: Any
) -> None:
    seeded = await _seed(client, workspace)
    key = await workspace.key(admin=True)
    before = await outbox_size(workspace)
    package_id = seeded["fresh"]["entryId"]
    for path in (
        "/api/v1/context-engine",
        "/api/v1/context-engine/packages",
        "/api/v1/context-engine/providers",
        f"/api/v1/context-engine/{package_id}",
        f"/api/v1/context-engine/packages/{package_id}/evidence",
    ):
        await get(client, workspace, key, path)
    await get(client, workspace, key, "/api/v1/context-engine/search", query="settlement")
    await brief(client, workspace, key, "What risks are there?", project_id=workspace.projects["ALPHA"])
    graphql = await client.post(
        "/graphql",
        json={
            "query": "{ contextEngineOverview { counts { byStatus { ready } } }"
            " contextEnginePackages { nodes { id } } }"
        },
        headers=workspace.headers(key),
    )
    assert "errors" not in graphql.json(), graphql.text
    async with mcp_session(api_url, key) as session:
        assert tool_json(await session.call_tool("list_context_packages", {}))["data"]
        await session.call_tool("query_context", {"question": "risks?", "project_id": workspace.projects["ALPHA"]})
    assert await outbox_size(workspace) == before
