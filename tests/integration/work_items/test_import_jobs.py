"""services/work_items/import_jobs: an export too large to import in one request runs as a Temporal workflow in
batches, its progress and report readable while it runs, and its re-import changes nothing."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import httpx

from tests.conftest import Workspace, idem


async def _count(client: httpx.AsyncClient, workspace: Workspace, key: str) -> int:
    count, cursor = 0, None
    while True:
        params: dict[str, str | int] = {"project_id": workspace.projects["ALPHA"], "limit": 100}
        if cursor:
            params["cursor"] = cursor
        page = (await client.get("/api/v1/work-items", params=params, headers=workspace.headers(key))).json()
        count += len(page["data"])
        cursor = page["page"].get("nextCursor", page["page"].get("next_cursor"))
        if not cursor:
            return count


async def _finished(client: httpx.AsyncClient, workspace: Workspace, key: str, location: str) -> dict[str, Any]:
    deadline = asyncio.get_running_loop().time() + 60
    while True:
        seen = (await client.get(location, headers=workspace.headers(key))).json()["data"]
        if seen["status"] == "succeeded":
            return dict(seen)
        assert asyncio.get_running_loop().time() < deadline, seen
        await asyncio.sleep(0.2)


async def test_a_large_export_runs_as_a_workflow_with_progress_and_its_reimport_changes_nothing(
    client: httpx.AsyncClient, workspace: Workspace, worker: Any
) -> None:
    admin = await workspace.key("admin", admin=True)
    issues = [{"number": n, "title": f"Issue {n}", "state": "open"} for n in range(1, 251)]
    issues.append({"number": 999, "state": "open"})  # no title
    body = {"format": "github", "content": json.dumps(issues)}
    url = f"/api/v1/projects/{workspace.projects['ALPHA']}/imports"
    queued = await client.post(url, json=body, headers=workspace.headers(admin, **idem()))
    assert queued.status_code == 202, queued.text
    location = queued.headers["location"]
    assert location == f"{url}/{queued.json()['data']['id']}"
    assert queued.json()["data"]["progress"]["total"] == 250
    done = await _finished(client, workspace, admin, location)
    assert done["progress"] == {"processed": 250, "total": 250}
    assert len(done["report"]["created"]) == 250 and done["report"]["updated"] == []
    assert done["report"]["rejected"] == [{"position": 251, "reason": "title is missing"}]
    assert await _count(client, workspace, admin) == 250

    again = await client.post(url, json=body, headers=workspace.headers(admin, **idem()))
    repeat = await _finished(client, workspace, admin, again.headers["location"])
    assert (len(repeat["report"]["unchanged"]), repeat["report"]["created"]) == (250, [])
    assert await _count(client, workspace, admin) == 250  # no duplicates
    other = await client.get(
        location.replace(workspace.projects["ALPHA"], workspace.projects["BETA"]), headers=workspace.headers(admin)
    )
    assert other.status_code == 404
