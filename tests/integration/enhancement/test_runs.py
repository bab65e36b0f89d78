"""Enhancement runs end to end: real PostgreSQL, real Temporal, the real worker."""

from __future__ import annotations

import uuid
from typing import Any

import httpx

from groundwork.domain.enhancement.model import ACTION_FIELDS, ACTIONS
from tests.conftest import Workspace, idem
from tests.integration.enhancement.conftest import create_run


async def test_create_yields_drafts_and_artifacts_for_every_action_and_changes_nothing(
    client: httpx.AsyncClient, workspace: Workspace, work_item: dict[str, Any], worker: Any
) -> None:
    key = await workspace.key("owner", admin=True)
    response = await create_run(client, workspace, key, work_item["id"], list(ACTIONS))
    assert response.status_code == 201, response.text
    run = response.json()["data"]
    assert run["id"].startswith("wie_") and run["state"] == "ready_for_review"
    assert run["requestedActions"] == list(ACTIONS)
    assert run["target"] == {
        "id": work_item["id"],
        "key": work_item["key"],
        "title": work_item["title"],
        "version": work_item["version"],
    }
    drafted = {d["field"] for d in run["drafts"]}
    assert drafted == set(ACTION_FIELDS.values())
    for draft in run["drafts"]:
        assert draft["id"].startswith("draft_") and draft["applyEligible"] is True
        assert 0 <= draft["confidence"] <= 1 and draft["evidenceRefs"]
        assert {"kind": "work_item", "id": work_item["id"]} in draft["evidenceRefs"]
    types = {a["type"] for a in run["artifacts"]}
    assert {
        "requirements_trace",
        "design_note",
        "plan_outline",
        "test_matrix",
        "estimate_rationale",
        "risk_report",
        "evidence_digest",
    } <= types
    estimate = next(d for d in run["drafts"] if d["field"] == "estimate")
    assert isinstance(estimate["proposedValue"], int)
    criteria = next(d for d in run["drafts"] if d["field"] == "acceptance_criteria")["proposedValue"]
    assert "**Given** the PSP is unavailable\n  **Then** checkout continues without saving the card" in criteria
    assert "**Check that** saving a card completes within 2 seconds at p99" in criteria
    assert "is delivered" not in criteria  # no fixed filler condition
    risks = next(d for d in run["drafts"] if d["field"] == "risks")["proposedValue"]
    assert "Security risk" in risks and "Data migration risk" in risks and "Performance risk" in risks
    plan = next(a for a in run["artifacts"] if a["type"] == "plan_outline")
    assert "Code context was unavailable" in plan["summary"]
    assert [a["id"] for a in run["allowedActions"]] == ["read", "run_action", "apply"]
    after = (await client.get(f"/api/v1/work-items/{work_item['id']}", headers=workspace.headers(key))).json()
    assert after["data"] == work_item  # creating a run never changes the work item


async def test_wait_zero_answers_202_with_location_then_the_run_finishes(
    client: httpx.AsyncClient, workspace: Workspace, work_item: dict[str, Any], worker: Any
) -> None:
    import asyncio

    key = await workspace.key("owner", admin=True)
    response = await create_run(client, workspace, key, work_item["id"], ["requirements"], wait=0)
    assert response.status_code == 202
    run_id = response.json()["data"]["id"]
    assert response.headers["location"] == f"/api/v1/operations/{run_id}"
    for _ in range(200):
        operation = (await client.get(f"/api/v1/operations/{run_id}", headers=workspace.headers(key))).json()["data"]
        if operation["status"] == "succeeded":
            break
        await asyncio.sleep(0.05)
    assert operation["status"] == "succeeded" and operation["runState"] == "ready_for_review"
    assert operation["kind"] == "work_item_enhancement" and operation["pendingActions"] == []
    assert operation["temporal"]["workflowId"] == run_id and operation["temporal"]["runId"]


async def test_run_action_on_a_reviewable_run_adds_its_drafts(
    client: httpx.AsyncClient, workspace: Workspace, work_item: dict[str, Any], worker: Any
) -> None:
    key = await workspace.key("owner", admin=True)
    run = (await create_run(client, workspace, key, work_item["id"], ["requirements"])).json()["data"]
    response = await client.post(
        f"/api/v1/work-item-enhancements/{run['id']}/actions?wait=20",
        json={"action": "risk_check", "instructions": "focus on security", "confirm": True},
        headers=workspace.headers(key, **idem()),
    )
    assert response.status_code == 200, response.text
    updated = response.json()["data"]
    assert updated["state"] == "ready_for_review"
    assert updated["requestedActions"] == ["requirements", "risk_check"]
    assert {d["field"] for d in updated["drafts"]} == {"requirements", "risks"}
    risks = next(d for d in updated["drafts"] if d["field"] == "risks")["proposedValue"]
    assert risks.startswith("### Security risk")


async def test_apply_changes_only_the_selected_fields_and_bumps_the_version(
    client: httpx.AsyncClient, workspace: Workspace, work_item: dict[str, Any], worker: Any
) -> None:
    key = await workspace.key("owner", admin=True)
    run = (await create_run(client, workspace, key, work_item["id"], ["requirements", "estimate"])).json()["data"]
    requirements = next(d for d in run["drafts"] if d["field"] == "requirements")
    response = await client.post(
        f"/api/v1/work-item-enhancements/{run['id']}/apply",
        json={"draft_ids": [requirements["id"]], "expected_target_version": work_item["version"], "confirm": True},
        headers=workspace.headers(key, **idem()),
    )
    assert response.status_code == 200, response.text
    applied = response.json()["data"]
    assert applied["state"] == "applied" and applied["appliedDraftIds"] == [requirements["id"]]
    assert applied["target"]["version"] > work_item["version"]
    item = (await client.get(f"/api/v1/work-items/{work_item['id']}", headers=workspace.headers(key))).json()["data"]
    assert item["fields"]["requirements"] == requirements["proposedValue"]
    assert item["fields"]["estimate"] is None and item["fields"]["description"] == work_item["fields"]["description"]
    assert item["version"] == applied["target"]["version"]
    again = next(d for d in applied["drafts"] if d["id"] == requirements["id"])
    assert again["applyEligible"] is False
    history = (
        await client.get(f"/api/v1/work-items/{work_item['id']}/history", headers=workspace.headers(key))
    ).json()["data"]
    assert history[-1]["source"] == "apply" and list(history[-1]["changes"]) == ["requirements"]


async def test_apply_without_confirm_returns_the_diff_and_changes_nothing(
    client: httpx.AsyncClient, workspace: Workspace, work_item: dict[str, Any], worker: Any
) -> None:
    key = await workspace.key("owner", admin=True)
    run = (await create_run(client, workspace, key, work_item["id"], ["description"])).json()["data"]
    draft = run["drafts"][0]
    response = await client.post(
        f"/api/v1/work-item-enhancements/{run['id']}/apply",
        json={"draft_ids": [draft["id"]], "expected_target_version": work_item["version"]},
        headers=workspace.headers(key, **idem()),
    )
    assert response.status_code == 422
    body = response.json()
    assert body["code"] == "confirmation_required" and body["current_version"] == work_item["version"]
    assert body["diff"] == [
        {
            "field": "description",
            "current_value": work_item["fields"]["description"],
            "proposed_value": draft["proposedValue"],
            "draft_id": draft["id"],
        }
    ]
    item = (await client.get(f"/api/v1/work-items/{work_item['id']}", headers=workspace.headers(key))).json()["data"]
    assert item == work_item


async def test_apply_with_stale_version_is_rejected_and_changes_nothing(
    client: httpx.AsyncClient, workspace: Workspace, work_item: dict[str, Any], worker: Any
) -> None:
    key = await workspace.key("owner", admin=True)
    run = (await create_run(client, workspace, key, work_item["id"], ["description"])).json()["data"]
    edited = await client.patch(
        f"/api/v1/work-items/{work_item['id']}",
        json={"expected_version": work_item["version"], "title": "Edited meanwhile"},
        headers=workspace.headers(key),
    )
    current = edited.json()["data"]
    response = await client.post(
        f"/api/v1/work-item-enhancements/{run['id']}/apply",
        json={"draft_ids": [run["drafts"][0]["id"]], "expected_target_version": work_item["version"], "confirm": True},
        headers=workspace.headers(key, **idem()),
    )
    assert response.status_code == 409
    assert response.json()["code"] == "target_version_mismatch"
    assert response.json()["current_version"] == current["version"]
    item = (await client.get(f"/api/v1/work-items/{work_item['id']}", headers=workspace.headers(key))).json()["data"]
    assert item == current
    run_now = (await client.get(f"/api/v1/work-item-enhancements/{run['id']}", headers=workspace.headers(key))).json()
    assert run_now["data"]["state"] == "ready_for_review" and run_now["data"]["appliedDraftIds"] == []


async def test_a_queued_run_without_a_workflow_is_started_by_the_sweep(
    client: httpx.AsyncClient,
    workspace: Workspace,
    work_item: dict[str, Any],
    worker: Any,
    temporal_client: Any,
    settings: Any,
) -> None:
    """The API commits the run before starting its workflow; if that start is lost, the sweep starts it."""
    import asyncio

    from groundwork.domain.ids import new_id
    from groundwork.persistence import db
    from groundwork.persistence.repositories.enhancement import runs
    from groundwork.services.enhancement.runs import sweep_queued_runs

    key = await workspace.key("owner", admin=True)
    run_id = new_id("wie")
    async with db.transaction():  # what create_run commits before it calls Temporal
        await runs.insert_run(
            run_id=run_id,
            workspace_id=workspace.id,
            project_id=work_item["projectId"],
            target_id=work_item["id"],
            actions=["estimate"],
            instructions="",
            requested_by=workspace.principals["owner"],
            code_context=False,
            generator="extractive-v1",
        )
    assert await sweep_queued_runs(temporal_client, settings.temporal_task_queue, 3600, older_than_seconds=0) >= 1
    await sweep_queued_runs(temporal_client, settings.temporal_task_queue, 3600, older_than_seconds=0)  # no-op
    for _ in range(100):
        run = (await client.get(f"/api/v1/work-item-enhancements/{run_id}", headers=workspace.headers(key))).json()
        if run["data"]["state"] == "ready_for_review":
            break
        await asyncio.sleep(0.05)
    assert run["data"]["state"] == "ready_for_review" and len(run["data"]["drafts"]) == 1


async def test_a_queued_run_whose_workflow_was_terminated_is_failed_by_the_sweep(
    client: httpx.AsyncClient, workspace: Workspace, work_item: dict[str, Any], temporal_client: Any
) -> None:
    from groundwork.domain.ids import new_id
    from groundwork.persistence import db
    from groundwork.persistence.repositories.enhancement import runs
    from groundwork.persistence.repositories.platform import outbox
    from groundwork.services.enhancement.runs import start_run_workflow, sweep_queued_runs

    key = await workspace.key("owner", admin=True)
    run_id = new_id("wie")
    async with db.transaction():
        await runs.insert_run(
            run_id=run_id,
            workspace_id=workspace.id,
            project_id=work_item["projectId"],
            target_id=work_item["id"],
            actions=["estimate"],
            instructions="",
            requested_by=workspace.principals["owner"],
            code_context=False,
            generator="extractive-v1",
        )
    run = await runs.get_run_by_id(run_id)
    assert run is not None
    queue = f"nobody-{uuid.uuid4().hex[:8]}"  # no worker polls it: the workflow never runs
    assert await start_run_workflow(temporal_client, queue, run, 3600)
    await temporal_client.get_workflow_handle(run_id).terminate("operator")
    await sweep_queued_runs(temporal_client, queue, 3600, older_than_seconds=0)
    failed = (await client.get(f"/api/v1/work-item-enhancements/{run_id}", headers=workspace.headers(key))).json()
    assert failed["data"]["state"] == "failed" and failed["data"]["error"]["code"] == "workflow_closed"
    events = [e.type for e in await outbox.events_for_workspace(workspace.id) if e.resource_id == run_id]
    assert events == ["work_item_enhancement.failed"]
