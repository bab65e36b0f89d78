"""A run's life on the real stack: concurrent actions, failures, deadlines, continue-as-new, Temporal down."""

from __future__ import annotations

import asyncio
import uuid
from dataclasses import replace
from typing import Any

import httpx
import pytest
from temporalio.client import WorkflowUpdateFailedError, WorkflowUpdateStage
from temporalio.exceptions import ApplicationError
from temporalio.testing import ActivityEnvironment

from groundwork.activities import enhancement as enhancement_activities
from groundwork.activities.enhancement import EnhancementActivities
from groundwork.config import Settings
from groundwork.domain.enhancement.enhancer import EnhancementContext, EnhancementFailure, Evidence, ReferenceItem
from groundwork.domain.enhancement.extractive import ExtractiveEnhancer
from groundwork.domain.enhancement.model import ACTION_ERROR_CODES, ActionOutput
from groundwork.domain.ids import new_id
from groundwork.persistence import db
from groundwork.persistence.repositories.enhancement import run_evidence, runs
from groundwork.persistence.repositories.platform import outbox
from groundwork.persistence.repositories.platform.outbox import OutboxEventRow
from groundwork.services.enhancement import run_updates
from groundwork.services.enhancement import runs as service
from groundwork.services.enhancement.chat_completions import ChatCompletionsEnhancer
from groundwork.services.enhancement.evidence import CorpusEvidence
from groundwork.workflows.enhancement import EnhancementRunWorkflow
from groundwork.workflows.enhancement_contract import ActionsRequest, EnhancementRunInput, RunActionUpdate
from tests.conftest import Workspace, free_port, idem, serving
from tests.fakes.chat_completions import Script, chat_completions_endpoint
from tests.integration.enhancement.conftest import activity_tasks, create_run, own_queue, run_action

ANSWER = {
    "drafts": [{"value": "- Tokens only; never store card numbers. [1]", "confidence": 0.8, "evidence": [1]}],
    "artifacts": [],
}


class CountingEvidence(CorpusEvidence):
    """The real corpus evidence, counting how often a run's evidence is gathered."""

    def __init__(self) -> None:
        super().__init__()
        self.calls = 0

    async def gather(self, *args: Any, **kwargs: Any) -> Any:
        self.calls += 1
        return await super().gather(*args, **kwargs)


class BrokenEnhancer:
    """A generator with a bug: it raises something nobody anticipated."""

    name = "broken"
    in_process = True

    async def enhance(self, context: EnhancementContext) -> ActionOutput:
        raise KeyError("choices")


async def _events(workspace: Workspace, run_id: str) -> list[OutboxEventRow]:
    return [e for e in await outbox.events_for_workspace(workspace.id) if e.resource_id == run_id]


async def _settled(http: httpx.AsyncClient, workspace: Workspace, key: str, run_id: str) -> dict[str, Any]:
    for _ in range(300):
        run = (await http.get(f"/api/v1/work-item-enhancements/{run_id}", headers=workspace.headers(key))).json()
        if run["data"]["state"] not in ("queued", "running") and not any(
            a["state"] == "pending" for a in run["data"]["actions"]
        ):
            return dict(run["data"])
        await asyncio.sleep(0.05)
    raise AssertionError(f"run {run_id} never settled")


async def test_a_runs_actions_run_concurrently_on_evidence_gathered_once(
    settings: Settings, temporal_client: Any, workspace: Workspace, work_item: dict[str, Any]
) -> None:
    key = await workspace.key("owner", admin=True)
    script = Script(answer=ANSWER, delay_seconds=0.4)
    evidence = CountingEvidence()
    actions = ["requirements", "description", "design", "test_plan"]
    with chat_completions_endpoint(script) as base_url:
        enhancer = ChatCompletionsEnhancer(base_url, "test-model", None)
        async with (
            own_queue(settings, temporal_client, enhancer, evidence=evidence) as (url, _),
            httpx.AsyncClient(base_url=url, timeout=30) as http,
        ):
            run = (await create_run(http, workspace, key, work_item["id"], actions)).json()["data"]
    assert run["state"] == "ready_for_review"
    assert [a["state"] for a in run["actions"]] == ["completed"] * 4
    assert script.most_in_flight >= 2  # the actions' generations overlapped
    assert evidence.calls == 1  # gathered once for the run, shared by its four actions
    stored = await run_evidence.get_run_evidence(run["id"])
    assert stored is not None
    types = [e.type for e in await _events(workspace, run["id"])]
    assert types.count("work_item_enhancement.action_completed") == 4
    assert types.count("work_item_enhancement.completed") == 1  # exactly one of them finished the run


async def test_a_failed_review_time_action_leaves_the_run_reviewable(
    settings: Settings, temporal_client: Any, workspace: Workspace, work_item: dict[str, Any]
) -> None:
    key = await workspace.key("owner", admin=True)
    script = Script(answer=ANSWER)
    with chat_completions_endpoint(script) as base_url:
        enhancer = ChatCompletionsEnhancer(base_url, "test-model", None)
        async with (
            own_queue(settings, temporal_client, enhancer) as (url, _),
            httpx.AsyncClient(base_url=url, timeout=30) as http,
        ):
            run = (await create_run(http, workspace, key, work_item["id"], ["requirements"])).json()["data"]
            script.status = 400  # the endpoint now refuses: the review-time action fails at once
            response = await run_action(http, workspace, key, run["id"], "design")
            after = response.json()["data"]
            draft = run["drafts"][0]["id"]
            applied = await http.post(
                f"/api/v1/work-item-enhancements/{run['id']}/apply",
                json={"draft_ids": [draft], "expected_target_version": work_item["version"], "confirm": True},
                headers=workspace.headers(key, **idem()),
            )
    assert response.status_code == 200
    assert after["state"] == "ready_for_review" and after["error"] is None
    assert [(a["action"], a["state"], a["errorCode"]) for a in after["actions"]] == [
        ("requirements", "completed", None),
        ("design", "failed", "generation_rejected"),
    ]
    assert [a["id"] for a in after["allowedActions"]] == ["read", "run_action", "apply"]
    failed = [e for e in await _events(workspace, run["id"]) if e.type == "work_item_enhancement.failed"]
    assert [e.payload["action"] for e in failed] == ["design"]
    assert failed[0].payload["error_code"] == "generation_rejected"
    assert applied.status_code == 200 and applied.json()["data"]["state"] == "applied"


async def test_an_unexpected_failure_is_coded_internal_error_never_a_class_name(
    settings: Settings, temporal_client: Any, workspace: Workspace, work_item: dict[str, Any]
) -> None:
    key = await workspace.key("owner", admin=True)
    async with (
        own_queue(settings, temporal_client, BrokenEnhancer()) as (url, _),
        httpx.AsyncClient(base_url=url, timeout=60) as http,
    ):
        run = (await create_run(http, workspace, key, work_item["id"], ["design"], wait=30)).json()["data"]
    assert run["state"] == "failed"
    assert run["error"]["code"] == "internal_error" and "KeyError" not in run["error"]["message"]
    assert run["actions"][0]["errorCode"] == "internal_error"
    [failed] = [e for e in await _events(workspace, run["id"]) if e.type == "work_item_enhancement.failed"]
    assert failed.payload["error_code"] in ACTION_ERROR_CODES


async def test_an_update_accepted_while_the_initial_action_fails_is_answered_not_abandoned(
    settings: Settings, temporal_client: Any, workspace: Workspace, work_item: dict[str, Any]
) -> None:
    key = await workspace.key("owner", admin=True)
    script = Script(status=400, delay_seconds=1.0)
    with chat_completions_endpoint(script) as base_url:
        enhancer = ChatCompletionsEnhancer(base_url, "test-model", None)
        async with (
            own_queue(settings, temporal_client, enhancer) as (url, _),
            httpx.AsyncClient(base_url=url, timeout=30) as http,
        ):
            run = (await create_run(http, workspace, key, work_item["id"], ["design"], wait=0)).json()["data"]
            assert await asyncio.to_thread(script.received.wait, 20)
            handle = temporal_client.get_workflow_handle(run["id"])
            # The run is still running: the validator accepts, the handler waits for the run to settle.
            update = await handle.start_update(
                EnhancementRunWorkflow.run_action,
                RunActionUpdate(new_id("op"), "estimate", ""),
                wait_for_stage=WorkflowUpdateStage.ACCEPTED,
            )
            with pytest.raises(WorkflowUpdateFailedError) as refused:
                await asyncio.wait_for(update.result(), 20)
            assert await asyncio.wait_for(handle.result(), 20) == "failed"
    cause = refused.value.cause
    assert isinstance(cause, ApplicationError) and cause.type == "run_not_reviewable"


async def test_an_action_past_its_wait_answers_202_with_the_operation_and_finishes(
    settings: Settings, temporal_client: Any, workspace: Workspace, work_item: dict[str, Any]
) -> None:
    key = await workspace.key("owner", admin=True)
    script = Script(answer=ANSWER)
    with chat_completions_endpoint(script) as base_url:
        enhancer = ChatCompletionsEnhancer(base_url, "test-model", None)
        async with (
            own_queue(settings, temporal_client, enhancer) as (url, _),
            httpx.AsyncClient(base_url=url, timeout=30) as http,
        ):
            run = (await create_run(http, workspace, key, work_item["id"], ["requirements"])).json()["data"]
            script.delay_seconds = 3.0  # long enough that the operation is read while the action still runs
            response = await run_action(http, workspace, key, run["id"], "design", wait=0)
            assert response.status_code == 202
            assert response.headers["location"] == f"/api/v1/operations/{run['id']}"
            operation = (await http.get(f"/api/v1/operations/{run['id']}", headers=workspace.headers(key))).json()
            settled = await _settled(http, workspace, key, run["id"])
    assert operation["data"]["pendingActions"] == ["design"]
    assert [a["state"] for a in settled["actions"]] == ["completed", "completed"]


async def test_apply_while_an_action_runs_is_refused_and_changes_nothing_then_applies(
    settings: Settings, temporal_client: Any, workspace: Workspace, work_item: dict[str, Any]
) -> None:
    key = await workspace.key("owner", admin=True)
    script = Script(answer=ANSWER)
    body = {"expected_target_version": work_item["version"], "confirm": True}
    with chat_completions_endpoint(script) as base_url:
        enhancer = ChatCompletionsEnhancer(base_url, "test-model", None)
        async with (
            own_queue(settings, temporal_client, enhancer) as (url, _),
            httpx.AsyncClient(base_url=url, timeout=30) as http,
        ):
            run = (await create_run(http, workspace, key, work_item["id"], ["requirements"])).json()["data"]
            body["draft_ids"] = [run["drafts"][0]["id"]]
            script.delay_seconds = 1.0
            script.received.clear()
            action = await run_action(http, workspace, key, run["id"], "design", wait=0)
            assert action.status_code == 202
            assert await asyncio.to_thread(script.received.wait, 20)  # the action is generating now
            during = await http.post(
                f"/api/v1/work-item-enhancements/{run['id']}/apply", json=body, headers=workspace.headers(key, **idem())
            )
            item = (await http.get(f"/api/v1/work-items/{work_item['id']}", headers=workspace.headers(key))).json()
            settled = await _settled(http, workspace, key, run["id"])
            after = await http.post(
                f"/api/v1/work-item-enhancements/{run['id']}/apply", json=body, headers=workspace.headers(key, **idem())
            )
    assert during.status_code == 409 and during.json()["code"] == "run_not_reviewable"
    assert item["data"] == work_item  # nothing changed
    assert [a["state"] for a in settled["actions"]] == ["completed", "completed"]  # the action was not disturbed
    assert after.status_code == 200, after.text
    assert after.json()["data"]["state"] == "applied"


async def test_an_apply_past_its_deadline_answers_202_and_still_happens(
    client: httpx.AsyncClient,
    workspace: Workspace,
    work_item: dict[str, Any],
    worker: Any,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    key = await workspace.key("owner", admin=True)
    run = (await create_run(client, workspace, key, work_item["id"], ["estimate"])).json()["data"]
    # A deadline no workflow can meet: the call must answer at once, and the apply carry on.
    monkeypatch.setattr(run_updates, "ACCEPT_SECONDS", 0.001)
    response = await client.post(
        f"/api/v1/work-item-enhancements/{run['id']}/apply",
        json={"draft_ids": [run["drafts"][0]["id"]], "expected_target_version": work_item["version"], "confirm": True},
        headers=workspace.headers(key, **idem()),
    )
    assert response.status_code == 202
    assert response.headers["location"] == f"/api/v1/operations/{run['id']}"
    settled = run
    for _ in range(200):
        settled = (
            await client.get(f"/api/v1/work-item-enhancements/{run['id']}", headers=workspace.headers(key))
        ).json()["data"]
        if settled["state"] == "applied":
            break
        await asyncio.sleep(0.05)
    assert settled["state"] == "applied" and settled["appliedDraftIds"] == [run["drafts"][0]["id"]]


async def test_the_run_workflow_continues_as_new_and_keeps_serving(
    client: httpx.AsyncClient,
    settings: Settings,
    temporal_client: Any,
    workspace: Workspace,
    work_item: dict[str, Any],
    worker: Any,
) -> None:
    key = await workspace.key("owner", admin=True)
    run_id = new_id("wie")
    async with db.transaction():
        await runs.insert_run(
            run_id=run_id,
            workspace_id=workspace.id,
            project_id=work_item["projectId"],
            target_id=work_item["id"],
            actions=["requirements"],
            instructions="",
            requested_by=workspace.principals["owner"],
            code_context=False,
            generator="extractive-v5",
        )
    handle = await temporal_client.start_workflow(
        EnhancementRunWorkflow.run,
        EnhancementRunInput(run_id, workspace.id, work_item["id"], 3600, updates_before_continue_as_new=2),
        id=run_id,
        task_queue=settings.temporal_task_queue,
    )
    first_run = (await handle.describe()).run_id
    await _settled(client, workspace, key, run_id)
    for action in ("design", "estimate"):
        assert (await run_action(client, workspace, key, run_id, action)).status_code == 200
    for _ in range(100):  # after two Updates the workflow continued as new
        if (await temporal_client.get_workflow_handle(run_id).describe()).run_id != first_run:
            break
        await asyncio.sleep(0.05)
    second_run = (await temporal_client.get_workflow_handle(run_id).describe()).run_id
    assert second_run != first_run
    third = await run_action(client, workspace, key, run_id, "risk_check")
    assert third.status_code == 200, third.text
    after = third.json()["data"]
    assert after["state"] == "ready_for_review" and after["reviewExpiresAt"] is not None
    assert [a["action"] for a in after["actions"]] == ["requirements", "design", "estimate", "risk_check"]
    draft = next(d for d in after["drafts"] if d["field"] == "estimate")
    applied = await client.post(
        f"/api/v1/work-item-enhancements/{run_id}/apply",
        json={"draft_ids": [draft["id"]], "expected_target_version": work_item["version"], "confirm": True},
        headers=workspace.headers(key, **idem()),
    )
    assert applied.status_code == 200 and applied.json()["data"]["state"] == "applied"
    assert await temporal_client.get_workflow_handle(run_id).query(EnhancementRunWorkflow.current_state) == "applied"


async def test_create_with_temporal_unreachable_stores_the_run_queued_and_the_sweep_starts_it(
    client: httpx.AsyncClient,
    settings: Settings,
    temporal_client: Any,
    workspace: Workspace,
    work_item: dict[str, Any],
    worker: Any,
) -> None:
    key = await workspace.key("owner", admin=True)
    down = replace(settings, temporal_address=f"127.0.0.1:{free_port()}")  # nothing listens there
    async with serving(down) as url, httpx.AsyncClient(base_url=url, timeout=30) as http:
        response = await create_run(http, workspace, key, work_item["id"], ["estimate"], wait=10)
        assert response.status_code == 202, response.text
        run = response.json()["data"]
        assert response.headers["location"] == f"/api/v1/operations/{run['id']}"
        assert run["state"] == "queued" and run["requestedActions"] == ["estimate"]
        operation = (await http.get(f"/api/v1/operations/{run['id']}", headers=workspace.headers(key))).json()
        assert operation["data"]["status"] == "queued"
    assert [e.type for e in await _events(workspace, run["id"])] == ["work_item_enhancement.queued"]
    assert await service.sweep_queued_runs(temporal_client, settings.temporal_task_queue, 3600, 0) >= 1
    settled = await _settled(client, workspace, key, run["id"])
    assert settled["state"] == "ready_for_review" and len(settled["drafts"]) == 1


async def test_a_second_identical_gathering_changes_nothing(workspace: Workspace, work_item: dict[str, Any]) -> None:
    from groundwork.domain.enhancement.model import EvidenceRef

    await workspace.key("owner", admin=True)
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
            generator="extractive-v5",
        )
    first = [Evidence(EvidenceRef("passage", "psg_1"), "First passage text.", "Doc", "Doc > Risks")]
    references = [ReferenceItem("wi_1", "DSP-1", "Done before", 3, "Estimated at three.")]
    kept = await run_evidence.store_run_evidence(run_id, first, references)
    late = await run_evidence.store_run_evidence(
        run_id, [Evidence(EvidenceRef("passage", f"psg_{uuid.uuid4().hex}"), "x", "y")], []
    )
    stored = await run_evidence.get_run_evidence(run_id)
    assert stored is not None and stored[0] == first
    # The storing call's copy is exactly what every later reader gets (a whole estimate reads back as 3.0).
    assert kept == stored and isinstance(kept[1][0].estimate, float)
    assert late is None  # the later gathering stored nothing


async def test_actions_whose_run_cannot_be_read_fail_once_naming_the_first_request_and_write_nothing(
    settings: Settings, temporal_client: Any, workspace: Workspace, work_item: dict[str, Any]
) -> None:
    key = await workspace.key("owner", admin=True)
    async with (
        own_queue(settings, temporal_client, start_worker=False) as (url, _),
        httpx.AsyncClient(base_url=url, timeout=30) as http,
    ):
        run = (await create_run(http, workspace, key, work_item["id"], ["design", "estimate"], wait=0)).json()["data"]
    rows = await db.fetch("SELECT request_id FROM enhancement_run_actions WHERE run_id = $1 ORDER BY id", run["id"])
    request_ids = [r["request_id"] for r in rows]
    assert len(request_ids) == 2
    await db.execute("DELETE FROM enhancement_runs WHERE id = $1", run["id"])
    activities = EnhancementActivities(ExtractiveEnhancer(), CorpusEvidence())
    # The run, its work item and its evidence are read once for all the actions: one refusal, for the first.
    with pytest.raises(ApplicationError) as refused:
        await ActivityEnvironment().run(activities.perform_actions, ActionsRequest(run["id"], request_ids, 3600))
    assert refused.value.type == "not_found" and refused.value.non_retryable
    assert refused.value.details == (request_ids[0],)
    assert await db.fetch("SELECT id FROM enhancement_drafts WHERE run_id = $1", run["id"]) == []


class FailsOnce:
    """The extractive generator, except that `action` fails retryably the first time it is asked for."""

    name = "fails-once"
    in_process = True

    def __init__(self, action: str) -> None:
        self.action = action
        self.failed = False
        self.asked: list[str] = []
        self.inner = ExtractiveEnhancer()

    async def enhance(self, context: EnhancementContext) -> ActionOutput:
        self.asked.append(context.action)
        if context.action == self.action and not self.failed:
            self.failed = True
            raise EnhancementFailure("generation_failed", "the generator stumbled", retryable=True)
        return await self.inner.enhance(context)


async def test_initial_actions_commit_together_and_a_retry_performs_only_the_one_that_failed(
    settings: Settings, temporal_client: Any, workspace: Workspace, work_item: dict[str, Any]
) -> None:
    key = await workspace.key("owner", admin=True)
    async with (
        own_queue(settings, temporal_client, start_worker=False) as (url, _),
        httpx.AsyncClient(base_url=url, timeout=30) as http,
    ):
        actions = ["requirements", "design", "estimate"]
        run = (await create_run(http, workspace, key, work_item["id"], actions, wait=0)).json()["data"]
    rows = await db.fetch("SELECT request_id FROM enhancement_run_actions WHERE run_id = $1 ORDER BY id", run["id"])
    request_ids = [r["request_id"] for r in rows]
    generator = FailsOnce("design")
    activities = EnhancementActivities(generator, CorpusEvidence())
    await ActivityEnvironment().run(activities.prepare_run, run["id"])

    with pytest.raises(ApplicationError) as failed:
        await ActivityEnvironment().run(activities.perform_actions, ActionsRequest(run["id"], request_ids, 3600))
    assert failed.value.type == "generation_failed" and not failed.value.non_retryable
    assert failed.value.details == (request_ids[1],)
    # The two that succeeded are stored; the run waits for the third and has not finished.
    states = await db.fetch(
        "SELECT action, state FROM enhancement_run_actions WHERE run_id = $1 ORDER BY id", run["id"]
    )
    assert [(r["action"], r["state"]) for r in states] == [
        ("requirements", "completed"),
        ("design", "pending"),
        ("estimate", "completed"),
    ]
    kept = await db.fetch("SELECT id FROM enhancement_drafts WHERE run_id = $1 ORDER BY id", run["id"])
    assert kept and (await runs.get_run_by_id(run["id"])).state == "running"  # type: ignore[union-attr]
    types = [e.type for e in await _events(workspace, run["id"])]
    assert types.count("work_item_enhancement.action_completed") == 2
    assert "work_item_enhancement.completed" not in types

    # The retry generates only the failed action and answers the others from what they stored.
    generator.asked.clear()
    results = await ActivityEnvironment().run(activities.perform_actions, ActionsRequest(run["id"], request_ids, 3600))
    assert generator.asked == ["design"]
    assert [r.action for r in results] == actions
    assert results[1].run_state == "ready_for_review"  # the workflow moves the run on with this
    assert (await runs.get_run_by_id(run["id"])).state == "ready_for_review"  # type: ignore[union-attr]
    drafts = await db.fetch("SELECT id FROM enhancement_drafts WHERE run_id = $1 ORDER BY id", run["id"])
    assert {r["id"] for r in kept} < {r["id"] for r in drafts}  # nothing stored twice, nothing replaced
    assert sorted(d for r in results for d in r.draft_ids) == sorted(r["id"] for r in drafts)
    types = [e.type for e in await _events(workspace, run["id"])]
    assert types.count("work_item_enhancement.action_completed") == 3
    assert types.count("work_item_enhancement.completed") == 1


async def test_an_in_process_generators_actions_run_in_the_first_step_without_an_activity_task(
    client: httpx.AsyncClient, temporal_client: Any, workspace: Workspace, work_item: dict[str, Any], worker: Any
) -> None:
    key = await workspace.key("owner", admin=True)
    actions = ["requirements", "acceptance_criteria", "estimate", "risk_check"]
    run = (await create_run(client, workspace, key, work_item["id"], actions)).json()["data"]
    assert run["state"] == "ready_for_review"
    assert [a["state"] for a in run["actions"]] == ["completed"] * 4
    assert {d["field"] for d in run["drafts"]} >= {"requirements", "acceptance_criteria", "estimate"}
    assert all(d["evidenceRefs"] for d in run["drafts"])
    scheduled, _ = activity_tasks(await temporal_client.get_workflow_handle(run["id"]).fetch_history())
    assert scheduled == []  # the server dispatched no activity
    types = [e.type for e in await _events(workspace, run["id"])]
    assert types.count("work_item_enhancement.action_completed") == 4
    assert types.count("work_item_enhancement.completed") == 1


async def test_an_action_failing_in_the_first_step_is_retried_alone_by_the_actions_activity(
    settings: Settings, temporal_client: Any, workspace: Workspace, work_item: dict[str, Any]
) -> None:
    key = await workspace.key("owner", admin=True)
    generator = FailsOnce("design")
    async with (
        own_queue(settings, temporal_client, generator) as (url, _),
        httpx.AsyncClient(base_url=url, timeout=30) as http,
    ):
        actions = ["requirements", "design", "estimate"]
        run = (await create_run(http, workspace, key, work_item["id"], actions, wait=20)).json()["data"]
    assert run["state"] == "ready_for_review"
    assert [a["state"] for a in run["actions"]] == ["completed"] * 3
    # The first step kept what succeeded; the activity generated only the action that had failed.
    assert sorted(generator.asked) == ["design", "design", "estimate", "requirements"]
    # The failed attempt was the first step's: the activity succeeded at its first.
    assert activity_tasks(await temporal_client.get_workflow_handle(run["id"]).fetch_history()) == (
        ["enhancement_perform_actions"],
        [1],
    )
    types = [e.type for e in await _events(workspace, run["id"])]
    assert types.count("work_item_enhancement.action_completed") == 3
    assert types.count("work_item_enhancement.completed") == 1
    assert "work_item_enhancement.failed" not in types


class SlowOnce:
    """The extractive generator, except that its first answer takes a second (a first step under load)."""

    name = "slow-once"
    in_process = True

    def __init__(self) -> None:
        self.calls = 0
        self.inner = ExtractiveEnhancer()

    async def enhance(self, context: EnhancementContext) -> ActionOutput:
        self.calls += 1
        if self.calls == 1:
            await asyncio.sleep(1.0)
        return await self.inner.enhance(context)


async def _history_with_completed_activity(temporal_client: Any, run_id: str) -> Any:
    deadline = asyncio.get_running_loop().time() + 15
    while True:
        history = await temporal_client.get_workflow_handle(run_id).fetch_history()
        if any(e.HasField("activity_task_completed_event_attributes") for e in history.events):
            return history
        assert asyncio.get_running_loop().time() < deadline, "the activity's completion was never recorded"
        await asyncio.sleep(0.05)


async def test_a_first_step_too_slow_to_perform_the_actions_hands_them_to_their_activity(
    settings: Settings,
    temporal_client: Any,
    workspace: Workspace,
    work_item: dict[str, Any],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(enhancement_activities, "FIRST_STEP_ACTIONS_SECONDS", 0.2)
    key = await workspace.key("owner", admin=True)
    generator = SlowOnce()
    async with (
        own_queue(settings, temporal_client, generator) as (url, _),
        httpx.AsyncClient(base_url=url, timeout=30) as http,
    ):
        run = (await create_run(http, workspace, key, work_item["id"], ["requirements"], wait=20)).json()["data"]
        # The run is ready once the activity committed its drafts; Temporal records the activity's start with its
        # completion, which the worker reports a moment later — so wait for it while that worker still runs.
        history = await _history_with_completed_activity(temporal_client, run["id"])
    assert run["state"] == "ready_for_review" and run["drafts"]
    # The first step gave up (and committed nothing); the activity performed the action at its first attempt.
    assert generator.calls == 2
    assert activity_tasks(history) == (["enhancement_perform_actions"], [1])
    types = [e.type for e in await _events(workspace, run["id"])]
    assert types.count("work_item_enhancement.action_completed") == 1
    assert "work_item_enhancement.failed" not in types


async def test_a_remote_generators_actions_run_in_their_own_activity(
    settings: Settings, temporal_client: Any, workspace: Workspace, work_item: dict[str, Any]
) -> None:
    key = await workspace.key("owner", admin=True)
    with chat_completions_endpoint(Script(answer=ANSWER)) as base_url:
        enhancer = ChatCompletionsEnhancer(base_url, "test-model", None)
        async with own_queue(settings, temporal_client, enhancer) as (url, _), httpx.AsyncClient(base_url=url) as http:
            run = (await create_run(http, workspace, key, work_item["id"], ["requirements"])).json()["data"]
    assert run["state"] == "ready_for_review" and run["drafts"]
    # A network call heartbeats and retries in an activity of its own, never inside the local first step.
    scheduled, _ = activity_tasks(await temporal_client.get_workflow_handle(run["id"]).fetch_history())
    assert scheduled == ["enhancement_perform_actions"]
