"""services/enhancement/rejections: a rejected draft is never applied, shows its rejection and is counted."""

from __future__ import annotations

import uuid
from typing import Any

import httpx
from prometheus_client import REGISTRY

from tests.conftest import Workspace, mcp_session, tool_json
from tests.integration.enhancement.conftest import apply, create_run, reject, run_events

BASE = "/api/v1/work-item-enhancements"


def _rejections(action: str, field: str) -> float:
    value = REGISTRY.get_sample_value(
        "groundwork_enhancement_draft_rejections_total", {"action": action, "field": field}
    )
    return value or 0.0


async def test_a_rejected_draft_shows_its_rejection_is_never_applied_and_is_counted(
    client: httpx.AsyncClient, workspace: Workspace, work_item: dict[str, Any], worker: Any
) -> None:
    key = await workspace.key("owner", admin=True)
    run = (await create_run(client, workspace, key, work_item["id"], ["description", "estimate"])).json()["data"]
    by_field = {d["field"]: d["id"] for d in run["drafts"]}
    counted = _rejections("description", "description")

    rejected = await reject(client, workspace, key, run["id"], by_field["description"])
    assert rejected.status_code == 200, rejected.text
    draft = next(d for d in rejected.json()["data"]["drafts"] if d["id"] == by_field["description"])
    assert draft["applyEligible"] is False
    assert draft["ineligibleReason"] == "rejected: It repeats the description."
    assert draft["rejection"]["reason"] == "It repeats the description."
    assert draft["rejection"]["rejectedBy"] == workspace.principals["owner"] and draft["rejection"]["rejectedAt"]
    assert _rejections("description", "description") == counted + 1

    refused = await apply(client, workspace, key, run["id"], [by_field["description"]], work_item["version"])
    assert refused.status_code == 422 and refused.json()["code"] == "draft_rejected"
    assert refused.json()["draft_ids"] == [by_field["description"]]
    item = (await client.get(f"/api/v1/work-items/{work_item['id']}", headers=workspace.headers(key))).json()["data"]
    assert item["version"] == work_item["version"]  # nothing was written

    events = [p for t, p in await run_events(workspace, run["id"]) if t == "work_item_enhancement.draft_rejected"]
    assert len(events) == 1
    assert events[0]["draft_id"] == by_field["description"] and events[0]["reason"] == "It repeats the description."
    assert events[0]["field"] == "description" and events[0]["rejected_by"] == workspace.principals["owner"]

    again = await reject(client, workspace, key, run["id"], by_field["description"])
    assert again.status_code == 409 and again.json()["code"] == "draft_not_rejectable"
    applied = await apply(client, workspace, key, run["id"], [by_field["estimate"]], work_item["version"])
    assert applied.status_code == 200, applied.text
    after_apply = await reject(client, workspace, key, run["id"], by_field["estimate"])
    assert after_apply.status_code == 409 and after_apply.json()["code"] == "draft_not_rejectable"
    assert _rejections("description", "description") == counted + 1  # refusals count nothing


async def test_a_rejection_needs_a_reason_and_confirm_through_every_transport(
    api_url: str, client: httpx.AsyncClient, workspace: Workspace, work_item: dict[str, Any], worker: Any
) -> None:
    key = await workspace.key("owner", admin=True)
    run = (await create_run(client, workspace, key, work_item["id"], ["description"])).json()["data"]
    draft_id = run["drafts"][0]["id"]
    too_long = await reject(client, workspace, key, run["id"], draft_id, reason="x" * 501)
    assert too_long.status_code == 422 and too_long.json()["code"] == "validation_failed"
    unconfirmed = await reject(client, workspace, key, run["id"], draft_id, confirm=False)
    assert unconfirmed.status_code == 422 and unconfirmed.json()["code"] == "confirmation_required"
    mutation = """mutation ($input: RejectDraftInput!) {
      rejectDraft(input: $input) { ok errors { code } run { drafts { id applyEligible rejection { reason } } } } }"""
    variables = {
        "input": {"runId": run["id"], "draftId": draft_id, "reason": "Too vague.", "idempotencyKey": uuid.uuid4().hex}
    }
    answer = (
        await client.post("/graphql", json={"query": mutation, "variables": variables}, headers=workspace.headers(key))
    ).json()["data"]["rejectDraft"]
    assert answer["ok"] is False and answer["errors"][0]["code"] == "confirmation_required"
    async with mcp_session(api_url, key) as session:
        via_mcp = tool_json(
            await session.call_tool(
                "reject_draft",
                {
                    "run_id": run["id"],
                    "draft_id": draft_id,
                    "reason": "Too vague.",
                    "confirm": True,
                    "idempotency_key": uuid.uuid4().hex,
                },
            )
        )
    [draft] = via_mcp["data"]["drafts"]
    assert draft["rejection"]["reason"] == "Too vague." and draft["applyEligible"] is False
