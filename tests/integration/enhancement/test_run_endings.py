"""services/enhancement/run_endings: an open run ends once, with one `failed` event; a final run stays as it is."""

from __future__ import annotations

import asyncio
from typing import Any

import httpx

from groundwork.services.enhancement import run_endings
from tests.conftest import Workspace
from tests.integration.enhancement.conftest import create_run, run_events


async def test_ending_a_run_twice_at_once_ends_it_once_with_one_event(
    client: httpx.AsyncClient, workspace: Workspace, work_item: dict[str, Any], worker: Any
) -> None:
    key = await workspace.key("owner", admin=True)
    run = (await create_run(client, workspace, key, work_item["id"], ["estimate"])).json()["data"]
    ended = await asyncio.gather(
        *(run_endings.end_run(run["id"], "failed", "workflow_failed", "Failed outside the code.") for _ in range(3))
    )
    later = await run_endings.end_run(run["id"], "cancelled", "cancelled", run_endings.CANCELLED_MESSAGE)
    assert sorted(now for _, now in ended) == [False, False, True]
    assert later == ("failed", False)  # a final run is left as it is
    failed = [p for t, p in await run_events(workspace, run["id"]) if t == "work_item_enhancement.failed"]
    assert [p["error_code"] for p in failed] == ["workflow_failed"]
