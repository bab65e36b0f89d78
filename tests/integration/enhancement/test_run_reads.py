"""Reading a run: a process reuses a run's rendered view only while nothing it shows has changed."""

from __future__ import annotations

import asyncio
from typing import Any

import httpx

from groundwork.persistence import db
from tests.conftest import Workspace, idem
from tests.integration.enhancement.conftest import create_run


async def _read(client: httpx.AsyncClient, workspace: Workspace, key: str, run_id: str) -> dict[str, Any]:
    response = await client.get(f"/api/v1/work-item-enhancements/{run_id}", headers=workspace.headers(key))
    assert response.status_code == 200, response.text
    assert response.headers["content-type"].startswith("application/json")
    return dict(response.json()["data"])


def _allowed(run: dict[str, Any]) -> list[str]:
    return [a["id"] for a in run["allowedActions"]]


async def test_reading_a_run_again_shows_each_change_and_each_callers_rights_at_once(
    client: httpx.AsyncClient, workspace: Workspace, work_item: dict[str, Any], worker: Any
) -> None:
    admin = await workspace.key("owner", admin=True)
    viewer = await workspace.key("viewer", memberships={"ALPHA": "viewer"})
    run = (await create_run(client, workspace, admin, work_item["id"], ["description", "estimate"])).json()["data"]
    assert run["state"] == "ready_for_review"

    first = await _read(client, workspace, admin, run["id"])
    assert await _read(client, workspace, admin, run["id"]) == first
    assert "apply" in _allowed(first)
    # Another caller's rights are never answered from the admin's view, nor the admin's from the viewer's.
    seen_by_viewer = await _read(client, workspace, viewer, run["id"])
    assert "apply" not in _allowed(seen_by_viewer) and seen_by_viewer["drafts"] == first["drafts"]
    assert "apply" in _allowed(await _read(client, workspace, admin, run["id"]))

    # The target changes without the run: its live title and version show at once.
    edited = await client.patch(
        f"/api/v1/work-items/{work_item['id']}",
        json={"expected_version": work_item["version"], "title": "Edited meanwhile"},
        headers=workspace.headers(admin),
    )
    assert edited.status_code == 200, edited.text
    after_edit = await _read(client, workspace, admin, run["id"])
    assert after_edit["target"]["title"] == "Edited meanwhile"
    assert after_edit["target"]["version"] == edited.json()["data"]["version"] != first["target"]["version"]

    # An apply changes the run's drafts: the next read shows it applied and no longer eligible.
    draft = next(d for d in after_edit["drafts"] if d["field"] == "description")
    applied = await client.post(
        f"/api/v1/work-item-enhancements/{run['id']}/apply",
        json={"draft_ids": [draft["id"]], "expected_target_version": after_edit["target"]["version"], "confirm": True},
        headers=workspace.headers(admin, **idem()),
    )
    assert applied.status_code == 200, applied.text
    after_apply = await _read(client, workspace, admin, run["id"])
    assert after_apply["appliedDraftIds"] == [draft["id"]]
    assert next(d for d in after_apply["drafts"] if d["id"] == draft["id"])["applyEligible"] is False
    assert after_apply["target"]["version"] == applied.json()["data"]["target"]["version"]


async def test_a_run_read_before_its_review_window_ends_is_not_reused_after_it_ends(
    client: httpx.AsyncClient, workspace: Workspace, work_item: dict[str, Any], worker: Any
) -> None:
    admin = await workspace.key("owner", admin=True)
    run = (await create_run(client, workspace, admin, work_item["id"], ["description"])).json()["data"]
    # The window ends in a moment while the run row stays as it is (its workflow's timer is hours away).
    await db.execute(
        "UPDATE enhancement_runs SET review_expires_at = clock_timestamp() + interval '1 second' WHERE id = $1",
        run["id"],
    )
    before = await _read(client, workspace, admin, run["id"])
    assert "apply" in _allowed(before) and before["drafts"][0]["applyEligible"] is True
    await asyncio.sleep(1.2)
    after = await _read(client, workspace, admin, run["id"])
    assert after["updatedAt"] == before["updatedAt"]  # nothing changed in the database
    assert _allowed(after) == ["read"]
    assert after["drafts"][0]["applyEligible"] is False
