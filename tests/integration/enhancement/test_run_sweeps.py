"""services/enhancement/run_sweeps: runs whose workflow ended without them are marked failed, once."""

from __future__ import annotations

import asyncio
from typing import Any

import httpx

from groundwork.services.enhancement.run_sweeps import sweep_ended_workflows
from tests.conftest import Workspace
from tests.integration.enhancement.conftest import create_run, run_events

BASE = "/api/v1/work-item-enhancements"


async def test_a_terminated_workflows_run_is_swept_to_failed_once(
    client: httpx.AsyncClient, workspace: Workspace, work_item: dict[str, Any], worker: Any, temporal_client: Any
) -> None:
    key = await workspace.key("owner", admin=True)
    run = (await create_run(client, workspace, key, work_item["id"], ["estimate"])).json()["data"]
    assert run["state"] == "ready_for_review"
    await temporal_client.get_workflow_handle(run["id"]).terminate(reason="an operator's test")
    # Before the sweep, the operation already says how the workflow ended.
    operation = (await client.get(f"/api/v1/operations/{run['id']}", headers=workspace.headers(key))).json()["data"]
    assert operation["status"] == "failed"

    marked = 0
    for _ in range(100):  # Temporal's visibility lists the closed workflow a moment after it closed
        # Two workers sweeping at once, then again: the run is marked by exactly one of them, once.
        marked += sum(
            await asyncio.gather(sweep_ended_workflows(temporal_client), sweep_ended_workflows(temporal_client))
        )
        if marked:
            break
        await asyncio.sleep(0.1)
    marked += await sweep_ended_workflows(temporal_client)
    assert marked == 1

    swept = (await client.get(f"{BASE}/{run['id']}", headers=workspace.headers(key))).json()["data"]
    assert swept["state"] == "failed" and swept["error"]["code"] == "workflow_terminated"
    assert [a["id"] for a in swept["allowedActions"]] == ["read"]
    assert all(not d["applyEligible"] for d in swept["drafts"])
    operation = (await client.get(f"/api/v1/operations/{run['id']}", headers=workspace.headers(key))).json()["data"]
    assert operation["status"] == "failed" and operation["error"]["code"] == "workflow_terminated"
    failed = [p for t, p in await run_events(workspace, run["id"]) if t == "work_item_enhancement.failed"]
    assert [p["error_code"] for p in failed] == ["workflow_terminated"]
