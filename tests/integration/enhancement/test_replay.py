"""The run workflow is deterministic: its own histories, and those recorded before this version, replay on it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
from temporalio.client import WorkflowHistory
from temporalio.worker import Replayer

from groundwork.platform.temporal.payloads import data_converter
from groundwork.workflows.enhancement import ApplyDraftsWorkflow, EnhancementRunWorkflow
from tests.conftest import Workspace, idem
from tests.integration.enhancement.conftest import activity_tasks, create_run, run_action

# A run (two initial actions, one review-time action, one apply) executed by the workflow code of the
# previous version (sequential actions, apply as a child workflow), exported with `fetch_history()`.
BEFORE = Path(__file__).with_name("enhancement_run_recorded_before_depth.json")
# A run (three initial actions, one review-time action, one apply) executed by the version before the
# initial actions shared one activity (one `enhancement_perform_action` activity per action).
BEFORE_ONE_ACTIVITY = Path(__file__).with_name("enhancement_run_recorded_before_one_activity.json")
# A run (three initial actions, one review-time action, one apply) executed by the version before the
# first step performed an in-process generator's actions (they ran in `enhancement_perform_actions`).
BEFORE_LOCAL_ACTIONS = Path(__file__).with_name("enhancement_run_recorded_before_local_actions.json")


def _replayer() -> Replayer:
    return Replayer(workflows=[EnhancementRunWorkflow, ApplyDraftsWorkflow], data_converter=data_converter)


async def test_a_run_recorded_before_this_version_replays_on_the_new_code() -> None:
    history = WorkflowHistory.from_json("wie_recorded", BEFORE.read_text())
    result = await _replayer().replay_workflow(history, raise_on_replay_failure=True)
    assert result.replay_failure is None


async def test_a_run_recorded_with_one_activity_per_action_replays_on_the_new_code() -> None:
    history = WorkflowHistory.from_json("wie_recorded", BEFORE_ONE_ACTIVITY.read_text())
    assert BEFORE_ONE_ACTIVITY.read_text().count('"enhancement_perform_action"') == 4
    result = await _replayer().replay_workflow(history, raise_on_replay_failure=True)
    assert result.replay_failure is None


async def test_a_run_recorded_with_the_actions_in_their_own_activity_replays_on_the_new_code() -> None:
    history = WorkflowHistory.from_json("wie_recorded", BEFORE_LOCAL_ACTIONS.read_text())
    assert BEFORE_LOCAL_ACTIONS.read_text().count('"enhancement_perform_actions"') == 1
    result = await _replayer().replay_workflow(history, raise_on_replay_failure=True)
    assert result.replay_failure is None


async def test_a_run_of_this_version_replays_deterministically(
    client: httpx.AsyncClient, temporal_client: Any, workspace: Workspace, work_item: dict[str, Any], worker: Any
) -> None:
    key = await workspace.key("owner", admin=True)
    run = (await create_run(client, workspace, key, work_item["id"], ["requirements", "estimate", "risk_check"])).json()
    run_id = run["data"]["id"]
    assert (await run_action(client, workspace, key, run_id, "design")).status_code == 200
    estimate = next(d for d in run["data"]["drafts"] if d["field"] == "estimate")
    applied = await client.post(
        f"/api/v1/work-item-enhancements/{run_id}/apply",
        json={"draft_ids": [estimate["id"]], "expected_target_version": work_item["version"], "confirm": True},
        headers=workspace.headers(key, **idem()),
    )
    assert applied.status_code == 200
    history = await temporal_client.get_workflow_handle(run_id).fetch_history()
    # The three initial actions ran in the first, local step (the extractive generator is in process);
    # the review-time action and the apply ran in activities of their own.
    scheduled, _ = activity_tasks(history)
    assert scheduled == ["enhancement_perform_action", "enhancement_apply_drafts"]
    result = await _replayer().replay_workflow(history, raise_on_replay_failure=True)
    assert result.replay_failure is None
