"""Apply races, replays, eligibility, expiry and the outbox events of a run."""

from __future__ import annotations

import asyncio
import uuid
from dataclasses import replace
from typing import Any

import httpx

from groundwork.persistence.repositories.platform import outbox
from tests.conftest import Workspace, idem, serving
from tests.integration.enhancement.conftest import create_run


async def _apply(
    client: httpx.AsyncClient, workspace: Workspace, key: str, run_id: str, draft_ids: list[str], version: str
) -> httpx.Response:
    return await client.post(
        f"/api/v1/work-item-enhancements/{run_id}/apply",
        json={"draft_ids": draft_ids, "expected_target_version": version, "confirm": True},
        headers=workspace.headers(key, **idem()),
    )


async def test_two_concurrent_applies_with_one_version_exactly_one_wins(
    api_url: str, client: httpx.AsyncClient, workspace: Workspace, work_item: dict[str, Any], worker: Any
) -> None:
    key = await workspace.key("owner", admin=True)
    run = (await create_run(client, workspace, key, work_item["id"], ["description", "requirements"])).json()["data"]
    by_field = {d["field"]: d["id"] for d in run["drafts"]}
    async with (
        httpx.AsyncClient(base_url=api_url, timeout=30) as a,
        httpx.AsyncClient(base_url=api_url, timeout=30) as b,
    ):
        first, second = await asyncio.gather(
            _apply(a, workspace, key, run["id"], [by_field["description"]], work_item["version"]),
            _apply(b, workspace, key, run["id"], [by_field["requirements"]], work_item["version"]),
        )
    assert sorted([first.status_code, second.status_code]) == [200, 409]
    loser = first if first.status_code == 409 else second
    assert loser.json()["code"] == "target_version_mismatch"
    item = (await client.get(f"/api/v1/work-items/{work_item['id']}", headers=workspace.headers(key))).json()["data"]
    changed = [f for f in ("description", "requirements") if item["fields"][f] != work_item["fields"][f]]
    assert len(changed) == 1


async def test_replayed_create_returns_the_same_run_and_starts_no_second_workflow(
    client: httpx.AsyncClient, workspace: Workspace, work_item: dict[str, Any], worker: Any, temporal_client: Any
) -> None:
    key = await workspace.key("owner", admin=True)
    headers = workspace.headers(key, **{"Idempotency-Key": f"create-{uuid.uuid4().hex}"})
    body = {"target": {"type": "work_item", "id": work_item["id"]}, "actions": ["estimate"], "confirm": True}
    first = await client.post("/api/v1/work-item-enhancements?wait=20", json=body, headers=headers)
    second = await client.post("/api/v1/work-item-enhancements?wait=20", json=body, headers=headers)
    assert first.status_code == 201 and second.content == first.content
    assert second.headers["idempotent-replayed"] == "true"
    listed = (
        await client.get(
            "/api/v1/work-item-enhancements", params={"target_id": work_item["id"]}, headers=workspace.headers(key)
        )
    ).json()["data"]
    assert len(listed) == 1
    count = 0
    for _ in range(40):
        count = (
            await temporal_client.count_workflows(
                f"GroundworkTarget = '{work_item['id']}' AND WorkflowType = 'EnhancementRunWorkflow'"
            )
        ).count
        if count:
            break
        await asyncio.sleep(0.1)
    assert count == 1


async def test_foreign_applied_and_duplicate_field_drafts_are_not_eligible(
    client: httpx.AsyncClient, workspace: Workspace, work_item: dict[str, Any], worker: Any
) -> None:
    key = await workspace.key("owner", admin=True)
    run = (await create_run(client, workspace, key, work_item["id"], ["description"])).json()["data"]
    other = (await create_run(client, workspace, key, work_item["id"], ["estimate"])).json()["data"]
    draft = run["drafts"][0]["id"]
    foreign = other["drafts"][0]["id"]
    response = await _apply(client, workspace, key, run["id"], [draft, foreign], work_item["version"])
    assert response.status_code == 422 and response.json()["code"] == "draft_not_eligible"
    assert response.json()["draft_ids"] == [foreign]
    ok = await _apply(client, workspace, key, run["id"], [draft], work_item["version"])
    assert ok.status_code == 200
    again = await _apply(client, workspace, key, run["id"], [draft], ok.json()["data"]["target"]["version"])
    assert again.status_code == 422 and again.json()["reasons"][draft] == "already applied"


async def test_bad_requests_get_clear_errors(
    client: httpx.AsyncClient, workspace: Workspace, work_item: dict[str, Any], worker: Any
) -> None:
    key = await workspace.key("owner", admin=True)
    unknown = await create_run(client, workspace, key, work_item["id"], ["poetry"])
    assert unknown.status_code == 422 and unknown.json()["code"] == "invalid_action"
    duplicate = await create_run(client, workspace, key, work_item["id"], ["estimate", "estimate"])
    assert duplicate.status_code == 422 and duplicate.json()["code"] == "invalid_action"
    unconfirmed = await create_run(client, workspace, key, work_item["id"], ["estimate"], confirm=False)
    assert unconfirmed.status_code == 422 and unconfirmed.json()["code"] == "confirmation_required"
    too_long = await create_run(client, workspace, key, work_item["id"], ["estimate"], instructions="x" * 4001)
    assert too_long.status_code == 422 and too_long.json()["errors"][0]["path"] == "instructions"
    missing = await create_run(client, workspace, key, "wi_nope", ["estimate"])
    assert missing.status_code == 404
    bad_wait = await create_run(client, workspace, key, work_item["id"], ["estimate"], wait=31)
    assert bad_wait.status_code == 422 and bad_wait.json()["code"] == "validation_failed"
    assert bad_wait.json()["errors"][0]["path"] == "wait"
    assert (
        await client.get("/api/v1/work-item-enhancements?limit=abc", headers=workspace.headers(key))
    ).status_code == 400


async def test_outbox_events_match_the_spec_payloads(
    client: httpx.AsyncClient, workspace: Workspace, work_item: dict[str, Any], worker: Any
) -> None:
    key = await workspace.key("owner", admin=True)
    run = (await create_run(client, workspace, key, work_item["id"], ["description", "estimate"])).json()["data"]
    applied = await _apply(client, workspace, key, run["id"], [run["drafts"][0]["id"]], work_item["version"])
    assert applied.status_code == 200, applied.text
    events = [e for e in await outbox.events_for_workspace(workspace.id) if e.resource_id == run["id"]]
    types = [e.type for e in events]
    assert types[0] == "work_item_enhancement.queued"
    assert types.count("work_item_enhancement.action_completed") == 2
    assert types.count("work_item_enhancement.draft_created") == 2
    assert types.count("work_item_enhancement.completed") == 1 and types[-1] == "work_item_enhancement.applied"
    # Each action's drafts before its completion, and the run's completion after every action's.
    assert types.index("work_item_enhancement.completed") == len(types) - 2
    for position, kind in enumerate(types):
        if kind == "work_item_enhancement.draft_created":
            assert "work_item_enhancement.action_completed" in types[position + 1 :]
    keys = {
        "work_item_enhancement.queued": {"run_id", "target_type", "target_id", "requested_actions", "queued_at"},
        "work_item_enhancement.action_completed": {"run_id", "action", "draft_ids", "artifact_ids", "completed_at"},
        "work_item_enhancement.draft_created": {"run_id", "draft_id", "field", "target_id", "created_at"},
        "work_item_enhancement.completed": {"run_id", "target_id", "draft_count", "artifact_count", "completed_at"},
        "work_item_enhancement.applied": {"run_id", "target_id", "applied_draft_ids", "target_version", "applied_at"},
    }
    for event in events:
        assert set(event.payload) == keys[event.type], event
        assert event.resource_type == "work_item_enhancement_run" and event.event_id.startswith("evt_")
    queued = events[0].payload
    assert queued["target_type"] == "work_item" and queued["requested_actions"] == ["description", "estimate"]
    done = next(e for e in events if e.type == "work_item_enhancement.completed").payload
    assert done["draft_count"] == 2 and done["artifact_count"] == len(run["artifacts"])
    final = events[-1].payload
    assert final["target_version"] == applied.json()["data"]["target"]["version"]
    assert final["applied_draft_ids"] == [run["drafts"][0]["id"]]
    before = len(await outbox.events_for_workspace(workspace.id))
    await client.get(f"/api/v1/work-item-enhancements/{run['id']}", headers=workspace.headers(key))
    await client.get(f"/api/v1/operations/{run['id']}", headers=workspace.headers(key))
    assert len(await outbox.events_for_workspace(workspace.id)) == before  # reads never emit events


async def test_run_expires_at_the_end_of_its_review_window(
    settings: Any, temporal_client: Any, workspace: Workspace, work_item: dict[str, Any], worker: Any
) -> None:
    key = await workspace.key("owner", admin=True)
    async with serving(replace(settings, review_window_seconds=1)) as url, httpx.AsyncClient(base_url=url) as short:
        run = (await create_run(short, workspace, key, work_item["id"], ["description"])).json()["data"]
        assert run["state"] == "ready_for_review"
        await temporal_client.get_workflow_handle(run["id"]).result()
        expired = (
            await short.get(f"/api/v1/work-item-enhancements/{run['id']}", headers=workspace.headers(key))
        ).json()["data"]
        assert expired["state"] == "expired" and expired["drafts"][0]["applyEligible"] is False
        assert [a["id"] for a in expired["allowedActions"]] == ["read"]
        response = await _apply(short, workspace, key, run["id"], [run["drafts"][0]["id"]], work_item["version"])
        assert response.status_code == 409 and response.json()["code"] == "run_not_reviewable"
        action = await short.post(
            f"/api/v1/work-item-enhancements/{run['id']}/actions",
            json={"action": "estimate", "confirm": True},
            headers=workspace.headers(key, **idem()),
        )
        assert action.status_code == 409 and action.json()["code"] == "run_not_reviewable"


async def test_two_applies_of_the_same_draft_one_wins_the_other_is_409(
    api_url: str, client: httpx.AsyncClient, workspace: Workspace, work_item: dict[str, Any], worker: Any
) -> None:
    key = await workspace.key("owner", admin=True)
    run = (await create_run(client, workspace, key, work_item["id"], ["description"])).json()["data"]
    draft = run["drafts"][0]["id"]
    async with (
        httpx.AsyncClient(base_url=api_url, timeout=30) as a,
        httpx.AsyncClient(base_url=api_url, timeout=30) as b,
    ):
        responses = await asyncio.gather(
            _apply(a, workspace, key, run["id"], [draft], work_item["version"]),
            _apply(b, workspace, key, run["id"], [draft], work_item["version"]),
        )
    assert sorted(r.status_code for r in responses) == [200, 409], [r.text for r in responses]


async def test_an_apply_only_key_can_apply_through_graphql(
    client: httpx.AsyncClient, workspace: Workspace, work_item: dict[str, Any], worker: Any
) -> None:
    owner = await workspace.key("owner", admin=True)
    run = (await create_run(client, workspace, owner, work_item["id"], ["estimate"])).json()["data"]
    applier = await workspace.key("applier", ["work-item-enhance:apply"], admin=True)
    mutation = """mutation ($input: ApplyWorkItemEnhancementDraftsInput!) {
      applyWorkItemEnhancementDrafts(input: $input) { ok errors { code } run { state appliedDraftIds } } }"""
    variables = {
        "input": {
            "runId": run["id"],
            "draftIds": [run["drafts"][0]["id"]],
            "expectedTargetVersion": work_item["version"],
            "confirm": True,
            "idempotencyKey": uuid.uuid4().hex,
        }
    }
    answer = (
        await client.post(
            "/graphql", json={"query": mutation, "variables": variables}, headers=workspace.headers(applier)
        )
    ).json()
    payload = answer["data"]["applyWorkItemEnhancementDrafts"]
    assert payload["ok"] and payload["run"]["state"] == "applied"
