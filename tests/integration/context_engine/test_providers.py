"""services/context_engine/providers: the built-in providers derive packages from the project's own data, on a
schedule or on demand, and a second run over unchanged data writes nothing and emits nothing."""

from __future__ import annotations

from typing import Any

import httpx

from groundwork.persistence import db
from groundwork.services.context_engine.providers import run_builtin_providers
from groundwork.worker import ensure_schedules
from groundwork.workflows.context_engine import PROVIDERS_SCHEDULE_ID
from tests.conftest import Workspace, idem
from tests.integration.context_engine.helpers import brief, get, outbox_size
from tests.integration.evidence_search.helpers import contribute as contribute_source

NOTES = """# Depot rollout steering

## Decisions

Decision: the route planner goes with OR-Tools for the pilot.

## Risks

The depot rollout could fail if drivers are not trained before go-live.

## Actions

- Tomas: send the training plan to the depot leads by Friday.
"""


async def _item(client: httpx.AsyncClient, workspace: Workspace, key: str, **fields: Any) -> dict[str, Any]:
    response = await client.post(
        "/api/v1/work-items",
        json={"project_id": workspace.projects["ALPHA"], **fields},
        headers=workspace.headers(key, **idem()),
    )
    assert response.status_code == 201, response.text
    return response.json()["data"]


async def _seed(client: httpx.AsyncClient, workspace: Workspace) -> dict[str, Any]:
    key = await workspace.key("owner", admin=True)
    vault = await _item(
        client,
        workspace,
        key,
        title="Card vault export",
        status="in_progress",
        sprint="2026-S23",
        fields={
            "description": "The export is blocked by the vendor's export tool. It depends on the PSP import API.",
            "risks": "- The vault licence ends in June.\n- The export may exceed the maintenance window.",
        },
    )
    await _item(client, workspace, key, title="Tokenise cards", status="done", sprint="2026-S23")
    estimate = await _item(
        client, workspace, key, title="Refund reports", status="todo", sprint="2026-S24", fields={"estimate": 3}
    )
    patched = await client.patch(
        f"/api/v1/work-items/{estimate['id']}",
        json={"expected_version": estimate["version"], "fields": {"estimate": 8}},
        headers=workspace.headers(key, **idem()),
    )
    assert patched.status_code == 200, patched.text
    await contribute_source(workspace, "ALPHA", "notes/steering.md", NOTES)
    return {"key": key, "vault": vault, "estimate": patched.json()["data"]}


async def _counts(workspace: Workspace) -> tuple[int, int, int]:
    row = await db.fetchrow(
        "SELECT (SELECT count(*) FROM context_contributions WHERE workspace_id = $1) AS contributions,"
        " (SELECT count(*) FROM context_entries WHERE workspace_id = $1) AS entries,"
        " (SELECT count(*) FROM context_evidence x JOIN context_entries e ON e.id = x.entry_id"
        "  WHERE e.workspace_id = $1) AS evidence",
        workspace.id,
    )
    assert row is not None
    return int(row["contributions"]), int(row["entries"]), int(row["evidence"])


async def test_builtin_providers_derive_packages_from_work_items_and_the_corpus(
    client: httpx.AsyncClient, workspace: Workspace, worker: Any, temporal_client: Any, settings: Any
) -> None:
    seeded = await _seed(client, workspace)
    run = await run_builtin_providers(workspace.slug, client=temporal_client, task_queue=settings.temporal_task_queue)
    assert run.through_worker and run.contributed > 0
    key = seeded["key"]
    packages = (await get(client, workspace, key, "/api/v1/context-engine/packages", limit=100))["data"]
    by_term = {(p["term"], p["contributionType"]): p for p in packages}
    vault = seeded["vault"]
    risk = by_term[(f"{vault['key']} Card vault export", "risk")]
    assert (
        risk["summary"]
        == f"{vault['key']}: The vault licence ends in June. The export may exceed the maintenance window."
    )
    assert risk["provenance"]["source"] == "work-items"
    assert (f"{vault['key']} Card vault export", "blocker") in by_term
    assert (f"{vault['key']} Card vault export", "dependency") in by_term
    milestone = by_term[("ALPHA sprint 2026-S23", "milestone")]
    assert milestone["summary"] == "Sprint 2026-S23 of ALPHA: 1 of 2 work items done, 1 in progress, 0 not started."
    scope = by_term[(f"{seeded['estimate']['key']} Refund reports", "finding")]
    assert "Estimate 3 -> 8" in scope["summary"]
    decision = by_term[("Depot rollout steering — Decisions", "decision")]
    assert decision["summary"] == "Decision: the route planner goes with OR-Tools for the pilot."
    assert decision["provenance"]["source"] == "corpus"
    assert ("Depot rollout steering — Risks", "risk") in by_term
    assert ("Depot rollout steering — Actions", "finding") in by_term

    kinds = set()
    for package in packages:
        refs = (await get(client, workspace, key, f"/api/v1/context-engine/packages/{package['id']}/evidence"))["data"]
        kinds |= {r["reference"]["kind"] for r in refs}
    assert kinds == {"work_item", "work_item_history", "passage"}
    answer = (await brief(client, workspace, key, "depot rollout risks", project_id=workspace.projects["ALPHA"])).json()
    assert "The depot rollout could fail if drivers are not trained before go-live." in [
        c["text"] for c in answer["data"]["risks"]
    ]

    # Unchanged data: nothing is written, nothing is emitted.
    before_events, before_rows = await outbox_size(workspace), await _counts(workspace)
    again = await run_builtin_providers(workspace.slug, client=temporal_client, task_queue=settings.temporal_task_queue)
    assert again.contributed == 0 and again.unchanged == run.contributed
    assert await outbox_size(workspace) == before_events and await _counts(workspace) == before_rows

    # A changed risk supersedes the provider's earlier entry.
    current = (await get(client, workspace, key, f"/api/v1/work-items/{vault['id']}"))["data"]
    patched = await client.patch(
        f"/api/v1/work-items/{vault['id']}",
        json={"expected_version": current["version"], "fields": {"risks": "- The vault licence ends in May."}},
        headers=workspace.headers(key, **idem()),
    )
    assert patched.status_code == 200, patched.text
    third = await run_builtin_providers(workspace.slug, client=temporal_client, task_queue=settings.temporal_task_queue)
    assert third.contributed >= 1
    old = (await get(client, workspace, key, f"/api/v1/context-engine/{risk['id']}"))["data"]
    assert old["status"] == "superseded"
    successor = (await get(client, workspace, key, f"/api/v1/context-engine/{old['supersededBy']}"))["data"]
    assert successor["summary"] == f"{vault['key']}: The vault licence ends in May."
    superseded = await db.fetch(
        "SELECT resource_id FROM outbox WHERE workspace_id = $1 AND type = 'context_engine.entry_superseded'",
        workspace.id,
    )
    assert risk["id"] in [r["resource_id"] for r in superseded]


async def test_builtin_providers_run_in_process_when_no_worker_polls(
    client: httpx.AsyncClient, workspace: Workspace, worker: Any
) -> None:
    await _seed(client, workspace)
    first = await run_builtin_providers(workspace.slug, client=None, task_queue="")
    assert not first.through_worker and first.contributed > 0
    states = await db.fetch("SELECT DISTINCT state FROM context_contributions WHERE workspace_id = $1", workspace.id)
    assert [r["state"] for r in states] == ["applied"]
    second = await run_builtin_providers(workspace.slug, client=None, task_queue="")
    assert (second.contributed, second.unchanged) == (0, first.contributed)
    providers = (await get(client, workspace, await workspace.key(admin=True), "/api/v1/context-engine/providers"))[
        "data"
    ]
    assert {p["name"]: (p["classification"], p["authority"]) for p in providers} == {
        "corpus": ("corpus", "advisory"),
        "work-items": ("work_items", "canonical"),
    }


async def test_the_providers_schedule_runs_the_builtin_providers(temporal_client: Any, settings: Any) -> None:
    await ensure_schedules(temporal_client, settings.temporal_task_queue)
    handle = temporal_client.get_schedule_handle(PROVIDERS_SCHEDULE_ID)
    try:
        description = await handle.describe()
        assert description.schedule.action.workflow == "ContextProvidersRunWorkflow"
        assert description.schedule.spec.intervals[0].every.total_seconds() == 15 * 60
    finally:
        # Left running, it would contribute to every other test's workspace at the next quarter hour.
        await handle.delete()
