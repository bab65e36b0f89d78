"""services/enhancement/heard_runs: a run row is reused from memory only until PostgreSQL says it changed."""

from __future__ import annotations

import uuid

from groundwork.domain.work_items import format_version
from groundwork.persistence import change_feed, db
from groundwork.persistence.repositories.enhancement import runs
from groundwork.services.enhancement import heard_runs
from groundwork.services.tenancy.api_keys import resolve_key
from groundwork.services.work_items import items
from tests.conftest import Workspace


async def _queued_run(workspace: Workspace) -> tuple[str, str]:
    owner = await resolve_key(await workspace.key("owner", admin=True))
    assert owner is not None
    item = await items.create_work_item(owner, items.NewWorkItem(workspace.projects["ALPHA"], "Target"), source="rest")
    run_id = f"run_{uuid.uuid4().hex}"
    async with db.transaction():
        await runs.insert_run(
            run_id=run_id,
            workspace_id=workspace.id,
            project_id=workspace.projects["ALPHA"],
            target_id=item.id,
            actions=["description"],
            instructions="",
            requested_by=owner.id,
            code_context=False,
            generator="extractive",
        )
    return run_id, item.id


async def test_a_state_change_is_seen_by_the_next_read_once_the_feed_heard_it(workspace: Workspace) -> None:
    run_id, _ = await _queued_run(workspace)
    first = await heard_runs.heard_run_row(workspace.id, run_id)
    assert first is not None and first.state == "queued"
    assert await runs.set_run_state(run_id, "running", from_states=("queued",))
    await change_feed.caught_up()
    again = await heard_runs.heard_run_row(workspace.id, run_id)
    assert again is not None and again.state == "running"


async def test_a_change_of_the_target_work_item_drops_the_runs_targeting_it(workspace: Workspace) -> None:
    run_id, item_id = await _queued_run(workspace)
    before = await heard_runs.heard_run_row(workspace.id, run_id)
    assert before is not None
    owner = await resolve_key(await workspace.key("owner", admin=True))
    assert owner is not None
    current = await items.get_work_item(owner, item_id)
    await items.update_work_item(
        owner, item_id, items.WorkItemChanges(format_version(current.version), title="Renamed"), source="rest"
    )
    after = await heard_runs.heard_run_row(workspace.id, run_id)
    assert after is not None and after.target_version != before.target_version


async def test_a_run_of_another_workspace_is_never_answered_from_memory(workspace: Workspace) -> None:
    run_id, _ = await _queued_run(workspace)
    assert await heard_runs.heard_run_row(workspace.id, run_id) is not None
    assert await heard_runs.heard_run_row("ws_another", run_id) is None
