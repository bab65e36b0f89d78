"""The governed commit path: persist → created / merged / superseded / kept separate, with exactly the spec's
events; a repeat changes nothing; every rule is checked before anything is written."""

from __future__ import annotations

import asyncio
from typing import Any

import httpx

from groundwork.persistence import db
from tests.conftest import Workspace, idem
from tests.integration.context_engine.helpers import (
    body,
    context_events,
    contribute,
    evidence,
    get,
    register,
)

COUNTS = (
    "SELECT (SELECT count(*) FROM context_entries WHERE workspace_id = $1) AS entries,"
    " (SELECT count(*) FROM context_evidence x JOIN context_entries e ON e.id = x.entry_id"
    "  WHERE e.workspace_id = $1) AS evidence"
)
PAYLOAD_KEYS = {"subject_id", "related_entry_id", "evolution_kind", "occurred_at"}


def _shape(events: list[dict[str, Any]]) -> list[tuple[str, str, str | None, str]]:
    for event in events:
        assert event["resource_type"] == "context_engine_evolution"
        assert set(event["payload"]) == PAYLOAD_KEYS
        assert event["resource_id"] == event["payload"]["subject_id"]
        assert event["payload"]["occurred_at"].endswith("Z")
    return [
        (e["type"], e["payload"]["subject_id"], e["payload"]["related_entry_id"], e["payload"]["evolution_kind"])
        for e in events
    ]


async def test_a_new_contribution_is_persisted_then_created_with_exactly_its_two_events(
    client: httpx.AsyncClient, workspace: Workspace, worker: Any
) -> None:
    provider = await register(workspace, "risk-radar")
    data = await contribute(
        workspace,
        body(provider, workspace.projects["ALPHA"], "Vendor lock-in", "The PSP contract renews yearly."),
    )
    assert data["state"] == "applied" and data["decision"] == "created"
    assert data["id"].startswith(f"ctxc_{provider['id']}_") and data["entryId"].startswith("pkg_")
    assert _shape(await context_events(workspace)) == [
        ("context_engine.contribution_persisted", data["id"], None, "contribution_persisted"),
        ("context_engine.merge_decided", data["entryId"], None, "created"),
    ]
    key = await workspace.key(admin=True)
    package = (await get(client, workspace, key, f"/api/v1/context-engine/{data['entryId']}"))["data"]
    assert package["status"] == "ready" and package["term"] == "Vendor lock-in"
    assert package["summary"] == "The PSP contract renews yearly." and package["contributionType"] == "risk"
    assert package["scope"]["projectId"] == workspace.projects["ALPHA"]
    assert package["scope"]["adoptionWorkspaceId"] == workspace.id
    assert package["provenance"]["source"] == "risk-radar" and package["provenance"]["promoterIdentity"] == "risk-radar"
    assert package["coverage"] == {"evidenceCount": 1, "providerCount": 1, "missing": []}
    assert package["freshness"]["status"] == "fresh" and package["freshness"]["ageDays"] == 1


async def test_the_same_normalised_term_and_type_merges_its_evidence_into_the_entry(
    client: httpx.AsyncClient, workspace: Workspace, worker: Any
) -> None:
    first_provider = await register(workspace, "risk-radar")
    second_provider = await register(workspace, "audit-bot")
    project = workspace.projects["ALPHA"]
    first = await contribute(workspace, body(first_provider, project, "Vendor lock-in", "Renews yearly."))
    second = await contribute(
        workspace,
        body(second_provider, project, "  VENDOR lock\u2011in! ", "Another view.", items=[evidence(ref="audit-7")]),
    )
    assert second["decision"] == "merged" and second["entryId"] == first["entryId"]
    assert _shape(await context_events(workspace))[2:] == [
        ("context_engine.contribution_persisted", second["id"], None, "contribution_persisted"),
        ("context_engine.merge_decided", first["entryId"], None, "merged"),
    ]
    key = await workspace.key(admin=True)
    package = (await get(client, workspace, key, f"/api/v1/context-engine/{first['entryId']}"))["data"]
    assert package["summary"] == "Renews yearly."  # the entry keeps its summary; evidence is added
    assert package["coverage"]["evidenceCount"] == 2 and package["coverage"]["providerCount"] == 2
    refs = (await get(client, workspace, key, f"/api/v1/context-engine/packages/{first['entryId']}/evidence"))["data"]
    assert sorted(r["reference"]["id"] for r in refs) == ["audit-7", "ext-1"]
    listed = (await get(client, workspace, key, "/api/v1/context-engine/packages", project_id=project))["data"]
    assert [p["id"] for p in listed] == [first["entryId"]]


async def test_a_named_successor_supersedes_the_entry_which_leaves_lists_search_and_briefings(
    client: httpx.AsyncClient, workspace: Workspace, worker: Any
) -> None:
    provider = await register(workspace, "risk-radar")
    project = workspace.projects["ALPHA"]
    old = await contribute(workspace, body(provider, project, "Quokka rollout", "Quokka rollout slips a week."))
    successor_body = body(
        provider,
        project,
        "Quokka rollout",
        "Quokka rollout slips a month.",
        items=[evidence(ref="ext-2")],
        supersedes=old["entryId"],
    )
    new = await contribute(workspace, successor_body)
    assert new["decision"] == "superseded" and new["relatedEntryId"] == old["entryId"]
    assert _shape(await context_events(workspace))[2:] == [
        ("context_engine.contribution_persisted", new["id"], old["entryId"], "contribution_persisted"),
        ("context_engine.merge_decided", new["entryId"], old["entryId"], "created"),
        ("context_engine.entry_superseded", old["entryId"], new["entryId"], "superseded"),
    ]
    [superseded_event] = [e for e in await context_events(workspace) if e["type"] == "context_engine.entry_superseded"]
    assert superseded_event["workspace_id"] == workspace.id and superseded_event["resource_id"] == old["entryId"]

    key = await workspace.key(admin=True)
    gone = (await get(client, workspace, key, f"/api/v1/context-engine/{old['entryId']}"))["data"]
    assert gone["status"] == "superseded" and gone["supersededBy"] == new["entryId"]
    successor = (await get(client, workspace, key, f"/api/v1/context-engine/{new['entryId']}"))["data"]
    assert successor["supersedes"] == old["entryId"] and successor["status"] == "ready"
    listed = (await get(client, workspace, key, "/api/v1/context-engine/packages", project_id=project))["data"]
    assert [p["id"] for p in listed] == [new["entryId"]]
    history = await get(
        client, workspace, key, "/api/v1/context-engine/packages", project_id=project, status="superseded"
    )
    assert [p["id"] for p in history["data"]] == [old["entryId"]]
    found = await get(client, workspace, key, "/api/v1/context-engine/search", query="quokka", project_id=project)
    assert [n["package"]["id"] for n in found["data"]["nodes"]] == [new["entryId"]] and found["data"]["totalCount"] == 1
    answer = (
        await client.post(
            "/api/v1/context/query",
            json={"question": "Is the quokka rollout at risk?", "project_id": project},
            headers=workspace.headers(key),
        )
    ).json()["data"]
    assert [c["packageId"] for c in answer["risks"]] == [new["entryId"]]
    assert "Quokka rollout slips a month." in [c["text"] for c in answer["risks"]]
    # Sending the successor again is a repeat (200), not a refusal because its predecessor is superseded.
    assert (await contribute(workspace, successor_body, expect=200))["id"] == new["id"]


async def test_a_canonical_provider_supersedes_an_advisory_entry_of_the_same_term(
    client: httpx.AsyncClient, workspace: Workspace, worker: Any
) -> None:
    advisory = await register(workspace, "rumours", authority="advisory")
    canonical = await register(workspace, "pmo", authority="canonical")
    project = workspace.projects["ALPHA"]
    old = await contribute(workspace, body(advisory, project, "Go-live date", "Go-live may move to May."))
    new = await contribute(
        workspace, body(canonical, project, "go-live DATE", "Go-live is 12 May.", items=[evidence(ref="plan")])
    )
    assert new["decision"] == "superseded" and new["relatedEntryId"] == old["entryId"]
    kinds = [(e["type"], e["payload"]["evolution_kind"]) for e in await context_events(workspace)][2:]
    assert kinds == [
        ("context_engine.contribution_persisted", "contribution_persisted"),
        ("context_engine.merge_decided", "created"),
        ("context_engine.entry_superseded", "superseded"),
    ]
    # An advisory provider on a canonical entry adds evidence; it never unseats it.
    again = await contribute(
        workspace, body(advisory, project, "Go-live date", "Maybe June?", items=[evidence(ref="gossip")])
    )
    assert again["decision"] == "merged" and again["entryId"] == new["entryId"]


async def test_the_same_term_with_another_type_is_kept_separate_and_related(
    client: httpx.AsyncClient, workspace: Workspace, worker: Any
) -> None:
    provider = await register(workspace, "risk-radar")
    project = workspace.projects["ALPHA"]
    risk = await contribute(workspace, body(provider, project, "Card vault", "The vault licence ends in June."))
    blocker = await contribute(
        workspace,
        body(
            provider,
            project,
            "Card vault",
            "Export is blocked by the vendor.",
            "blocker",
            items=[evidence("blockers", "ticket-9")],
        ),
    )
    assert blocker["decision"] == "kept_separate" and blocker["relatedEntryId"] == risk["entryId"]
    assert blocker["entryId"] != risk["entryId"]
    assert _shape(await context_events(workspace))[-1] == (
        "context_engine.merge_decided",
        blocker["entryId"],
        risk["entryId"],
        "kept_separate",
    )


async def test_repeating_a_contribution_changes_nothing(
    client: httpx.AsyncClient, workspace: Workspace, worker: Any
) -> None:
    provider = await register(workspace, "risk-radar")
    payload = body(provider, workspace.projects["ALPHA"], "Vendor lock-in", "Renews yearly.")
    first = await contribute(workspace, payload)
    events = await context_events(workspace)
    rows = await db.fetchrow(COUNTS, workspace.id)
    # Evidence listed in another order, and a fresh Idempotency-Key: still the same contribution.
    again = await contribute(workspace, {**payload, "evidence": list(reversed(payload["evidence"]))}, expect=200)
    assert again["id"] == first["id"] and again["entryId"] == first["entryId"]
    assert await context_events(workspace) == events
    after = await db.fetchrow(COUNTS, workspace.id)
    assert dict(after or {}) == dict(rows or {})
    # The same Idempotency-Key replays the first answer byte for byte.
    headers = workspace.headers(await workspace.provider_key(), **idem())
    one = await workspace.internal.post("/internal/v1/context-engine/contributions", json=payload, headers=headers)
    two = await workspace.internal.post("/internal/v1/context-engine/contributions", json=payload, headers=headers)
    assert two.headers.get("idempotent-replayed") == "true" and one.content == two.content


async def test_concurrent_contributions_on_one_term_make_one_entry(
    client: httpx.AsyncClient, workspace: Workspace, worker: Any
) -> None:
    providers = [await register(workspace, f"bot-{i}") for i in range(4)]
    project = workspace.projects["BETA"]
    answers = await asyncio.gather(
        *(
            contribute(workspace, body(p, project, "Data residency", f"View {i}.", items=[evidence(ref=f"r{i}")]))
            for i, p in enumerate(providers)
        )
    )
    assert len({a["entryId"] for a in answers}) == 1
    assert sorted(a["decision"] for a in answers) == ["created", "merged", "merged", "merged"]


async def test_contributions_are_checked_field_by_field_and_write_nothing_when_refused(
    client: httpx.AsyncClient, workspace: Workspace, worker: Any
) -> None:
    provider = await register(workspace, "risk-radar", capabilities=["risks"])
    money = await register(workspace, "ledger", classification="financial", capabilities=["risks"])
    project = workspace.projects["ALPHA"]
    good = body(provider, project, "Term", "Summary.")
    builtin = await db.fetchrow(
        "INSERT INTO context_providers (id, workspace_id, name, classification, capabilities, authority, builtin)"
        " VALUES ('prov_builtin_test_' || $1, $1, 'work-items', 'work_items', ARRAY['risks'], 'canonical', true)"
        " RETURNING id",
        workspace.id,
    )
    assert builtin is not None
    cases: list[tuple[dict[str, Any], int, str]] = [
        ({**good, "colour": "blue"}, 400, "colour"),
        ({**good, "term": 7}, 400, "term"),
        ({**good, "term": "  "}, 422, "term"),
        ({**good, "summary": "x" * 2001}, 422, "summary"),
        ({**good, "contribution_type": "rumour"}, 422, "contribution_type"),
        ({**good, "evidence": []}, 422, "evidence"),
        ({**good, "evidence": [evidence("blockers")]}, 422, "evidence[0].capability"),
        ({**good, "evidence": [evidence("decisions")]}, 422, "evidence[0].capability"),
        ({**good, "evidence": [evidence(kind="rumour")]}, 422, "evidence[0].reference.kind"),
        ({**good, "evidence": [evidence(cls="secret")]}, 422, "evidence[0].reference.class"),
        ({**good, "evidence": [evidence(as_of="2999-01-01T00:00:00Z")]}, 422, "evidence[0].as_of"),
        ({**good, "evidence": [evidence(as_of="yesterday")]}, 422, "evidence[0].as_of"),
        ({**good, "evidence": [evidence(kind="passage", ref="psg_nope")]}, 422, "evidence[0].reference.id"),
        ({**good, "evidence": [evidence(kind="work_item", ref="wi_nope")]}, 422, "evidence[0].reference.id"),
        ({**good, "evidence": [evidence(kind="work_item_history", ref="wi_x@2026")]}, 422, "evidence[0].reference.id"),
        ({**good, "generated_at": "2999-01-01T00:00:00Z"}, 422, "generated_at"),
        ({**good, "provider_id": "prov_nope"}, 422, "provider_id"),
        ({**good, "provider_id": builtin["id"]}, 422, "provider_id"),
        ({**good, "supersedes": "pkg_nope"}, 422, "supersedes"),
        ({**good, "supersedes": "nonsense"}, 422, "supersedes"),
        (
            body(money, project, "Mixed", "Mixed.", items=[evidence(cls="staffing")]),
            422,
            "evidence",
        ),
    ]
    for payload, status, path in cases:
        response = await workspace.internal.post(
            "/internal/v1/context-engine/contributions",
            json=payload,
            headers=workspace.headers(await workspace.provider_key(), **idem()),
        )
        assert response.status_code == status, (payload, response.text)
        errors = response.json()["errors"]
        assert any(e["path"] == path or f"`{path}`" in e["message"] for e in errors), (payload, response.text)
    assert await context_events(workspace) == []
    count = await db.fetchrow("SELECT count(*) AS n FROM context_contributions WHERE workspace_id = $1", workspace.id)
    assert count is not None and count["n"] == 0
    missing_key = await workspace.internal.post(
        "/internal/v1/context-engine/contributions",
        json=good,
        headers=workspace.headers(await workspace.provider_key()),
    )
    assert missing_key.status_code == 400 and missing_key.json()["code"] == "idempotency_key_required"


async def test_providers_register_by_name_and_keep_their_classification(
    client: httpx.AsyncClient, workspace: Workspace
) -> None:
    first = await register(workspace, "risk-radar", capabilities=["risks"])
    assert first["id"].startswith("prov_") and first["builtin"] is False
    again = await register(workspace, "risk-radar", capabilities=["risks", "blockers"], expect=200)
    assert again["id"] == first["id"] and again["capabilities"] == ["risks", "blockers"]
    refused = await workspace.internal.post(
        "/internal/v1/context-engine/providers",
        json={"name": "risk-radar", "classification": "financial", "capabilities": ["risks"]},
        headers=workspace.headers(await workspace.provider_key(), **idem()),
    )
    assert refused.status_code == 422 and refused.json()["errors"][0]["path"] == "classification"
    for payload, path in (
        ({"name": "Bad Name", "classification": "delivery", "capabilities": ["risks"]}, "name"),
        ({"name": "corpus", "classification": "delivery", "capabilities": ["risks"]}, "name"),
        ({"name": "ok", "classification": "gossip", "capabilities": ["risks"]}, "classification"),
        ({"name": "ok", "classification": "delivery", "capabilities": []}, "capabilities"),
        ({"name": "ok", "classification": "delivery", "capabilities": ["mind_reading"]}, "capabilities[0]"),
        ({"name": "ok", "classification": "delivery", "capabilities": ["risks"], "authority": "god"}, "authority"),
    ):
        response = await workspace.internal.post(
            "/internal/v1/context-engine/providers",
            json=payload,
            headers=workspace.headers(await workspace.provider_key(), **idem()),
        )
        assert response.status_code == 422 and response.json()["errors"][0]["path"] == path, response.text
    listed = await workspace.internal.get(
        "/internal/v1/context-engine/providers", headers=workspace.headers(await workspace.provider_key())
    )
    assert [p["name"] for p in listed.json()["data"]] == ["risk-radar"]


async def test_a_customer_key_with_every_scope_cannot_reach_the_internal_api(
    client: httpx.AsyncClient, workspace: Workspace, worker: Any
) -> None:
    provider = await register(workspace, "risk-radar")
    done = await contribute(workspace, body(provider, workspace.projects["ALPHA"], "T", "S."))
    customers = [
        await workspace.key("boss", admin=True),
        await workspace.key("lead", memberships={"ALPHA": "lead"}),
        await workspace.key("ci", admin=True),
    ]
    await db.execute("UPDATE principals SET kind = 'service' WHERE id = $1", workspace.principals["ci"])
    source = {"project_id": workspace.projects["ALPHA"], "uri": "a.md", "kind": "markdown", "content": "x"}
    requests = [
        (
            "POST",
            "/internal/v1/context-engine/providers",
            {"name": "evil", "classification": "delivery", "capabilities": ["risks"]},
        ),
        ("GET", "/internal/v1/context-engine/providers", None),
        ("POST", "/internal/v1/context-engine/contributions", body(provider, workspace.projects["ALPHA"], "X", "Y.")),
        ("GET", f"/internal/v1/context-engine/contributions/{done['id']}", None),
        ("POST", "/internal/v1/corpus/sources", source),
    ]
    for key in [*customers, None]:
        for method, path, payload in requests:
            headers = {**(workspace.headers(key) if key else {}), **idem()}
            response = await workspace.internal.request(method, path, json=payload, headers=headers)
            assert response.status_code == 404 and response.json()["code"] == "not_found", (path, response.text)
    # The public listener has no internal API at all, whoever asks.
    for key in [*customers, await workspace.provider_key()]:
        for method, path, payload in requests:
            response = await client.request(method, path, json=payload, headers={**workspace.headers(key), **idem()})
            assert response.status_code == 404 and response.json()["code"] == "not_found", (path, response.text)
    assert len(await context_events(workspace)) == 2  # only the provider's own contribution
    reader = await workspace.provider_key("reader", ["context-engine:read"])
    refused = await workspace.internal.get(
        f"/internal/v1/context-engine/contributions/{done['id']}", headers=workspace.headers(reader)
    )
    assert refused.status_code == 403 and refused.json()["required_scope"] == "context-engine:contribute"
    seen = await get(
        workspace.internal,
        workspace,
        await workspace.provider_key(),
        f"/internal/v1/context-engine/contributions/{done['id']}",
    )
    assert seen["data"]["state"] == "applied" and seen["data"]["contribution"]["term"] == "T"


async def test_contribution_workflows_are_searchable_by_workspace_and_subject(
    client: httpx.AsyncClient, workspace: Workspace, worker: Any, temporal_client: Any
) -> None:
    provider = await register(workspace, "risk-radar")
    project = workspace.projects["BETA"]
    done = await contribute(workspace, body(provider, project, "Searchable", "In the Temporal UI."))
    query = f"GroundworkWorkspace = '{workspace.id}' AND GroundworkSubject = '{project}'"
    for _ in range(100):
        found = [w.id async for w in temporal_client.list_workflows(query)]
        if found:
            break
        await asyncio.sleep(0.1)
    assert found == [done["id"]]
