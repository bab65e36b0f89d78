"""services/enhancement/run_views: reading a run: a process reuses a run's row and rendered view only while nothing it
shows has changed."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import httpx

from groundwork.persistence import change_feed, db
from tests.conftest import Workspace, idem
from tests.integration.enhancement.conftest import create_run


async def _read(client: httpx.AsyncClient, workspace: Workspace, key: str, run_id: str) -> dict[str, Any]:
    response = await client.get(f"/api/v1/work-item-enhancements/{run_id}", headers=workspace.headers(key))
    assert response.status_code == 200, response.text
    assert response.headers["content-type"].startswith("application/json")
    assert response.headers["content-length"] == str(len(response.content))
    assert response.headers["x-request-id"]
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


async def _shows(
    other: httpx.AsyncClient,
    workspace: Workspace,
    key: str,
    run_id: str,
    check: Callable[[dict[str, Any]], bool],
) -> dict[str, Any]:
    """The run as the other process reads it once `check` holds (it was told at the commit; on a loaded machine
    the notification takes a moment), failing after a second, far below any safety expiry."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + 1.0
    while True:
        seen = await _read(other, workspace, key, run_id)
        if check(seen) or loop.time() > deadline:
            return seen
        await asyncio.sleep(0.01)


async def test_another_api_process_reuses_a_run_until_told_of_a_change_to_it_or_its_target(
    client: httpx.AsyncClient, workspace: Workspace, work_item: dict[str, Any], worker: Any, second_api_process: str
) -> None:
    admin = await workspace.key("owner", admin=True)
    run = (await create_run(client, workspace, admin, work_item["id"], ["description"])).json()["data"]
    async with httpx.AsyncClient(base_url=second_api_process, timeout=10) as other:
        first = await _read(other, workspace, admin, run["id"])
        assert await _read(other, workspace, admin, run["id"]) == first

        # Proof that the other process answers from memory: a change it is not told about goes unseen.
        async with db.transaction():
            await db.execute("ALTER TABLE enhancement_runs DISABLE TRIGGER enhancement_runs_cache")
            await db.execute("UPDATE enhancement_runs SET instructions = 'unheard of' WHERE id = $1", run["id"])
        try:
            assert (await _read(other, workspace, admin, run["id"]))["instructions"] == first["instructions"]
        finally:
            async with db.transaction():
                await db.execute(
                    "UPDATE enhancement_runs SET instructions = $2 WHERE id = $1", run["id"], first["instructions"]
                )
                await db.execute("ALTER TABLE enhancement_runs ENABLE TRIGGER enhancement_runs_cache")

        # A change of the run is heard by every listening process at its commit.
        await db.execute("UPDATE enhancement_runs SET instructions = 'heard of' WHERE id = $1", run["id"])
        await change_feed.caught_up()
        changed = await _shows(other, workspace, admin, run["id"], lambda r: r["instructions"] == "heard of")
        assert changed["instructions"] == "heard of"

        # So is a change of its target, whose live title and version the run shows.
        await db.execute(
            "UPDATE work_items SET title = 'Renamed elsewhere', version = version + interval '1 second' WHERE id = $1",
            work_item["id"],
        )
        await change_feed.caught_up()
        renamed = await _shows(
            other, workspace, admin, run["id"], lambda r: r["target"]["title"] == "Renamed elsewhere"
        )
        assert renamed["target"]["title"] == "Renamed elsewhere"
        assert renamed["target"]["version"] != changed["target"]["version"]
        # This process read the run from PostgreSQL each time it changed: it shows the same.
        assert await _read(client, workspace, admin, run["id"]) == renamed
