"""Every workflow an operator finds in the Temporal UI carries `GroundworkWorkspace`: its workspace's id, or `*`
for one that works across workspaces."""

from __future__ import annotations

import contextlib
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx

from groundwork.config import Settings
from groundwork.persistence.repositories.tenancy import workspaces as tenancy
from groundwork.services.context_engine.providers import run_builtin_providers
from groundwork.services.evidence_search.admin import FileSource, ingest_files
from groundwork.workflows.search_attributes import EVERY_WORKSPACE, WORKSPACE
from tests.conftest import Workspace, idem
from tests.integration.enhancement.conftest import create_run, work_item

__all__ = ["work_item"]


async def test_runs_applies_ingests_and_provider_runs_carry_their_workspace(
    client: httpx.AsyncClient,
    workspace: Workspace,
    work_item: dict[str, Any],
    worker: Any,
    temporal_client: Any,
    settings: Settings,
    tmp_path: Path,
) -> None:
    key = await workspace.key("owner", admin=True)
    started = datetime.now(UTC)
    run = (await create_run(client, workspace, key, work_item["id"], ["estimate"])).json()["data"]
    [draft] = run["drafts"]
    applied = await client.post(
        f"/api/v1/work-item-enhancements/{run['id']}/apply",
        json={"draft_ids": [draft["id"]], "expected_target_version": run["target"]["version"], "confirm": True},
        headers=workspace.headers(key, **idem()),
    )
    assert applied.status_code == 200, applied.text
    note = tmp_path / "note.md"
    note.write_text("# Note\n\nThe quokka ledger closes on Mondays.")
    project = await tenancy.project_by_key(workspace.slug, "ALPHA")
    assert project is not None
    report = await ingest_files(
        project,
        [FileSource(note, "note.md", "markdown")],
        owner="test",
        client=temporal_client,
        task_queue=settings.temporal_task_queue,
    )
    assert [f.outcome for f in report.files] != ["failed"]
    await run_builtin_providers(workspace.slug, client=temporal_client, task_queue=settings.temporal_task_queue)

    ours = workspace.id
    query = f"GroundworkWorkspace = '{ours}'"
    types = {execution.workflow_type async for execution in temporal_client.list_workflows(query)}
    assert {"EnhancementRunWorkflow", "CorpusIngestWorkflow", "ContextProvidersRunWorkflow"} <= types
    # Nothing of any type was started without it.
    since = started.strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    query = f"GroundworkWorkspace IS NULL AND StartTime >= '{since}'"
    missing = [e.id async for e in temporal_client.list_workflows(query)]
    assert missing == []


async def test_the_housekeeping_schedules_start_their_workflows_for_every_workspace(temporal_client: Any) -> None:
    from groundwork.worker import (
        PROVIDERS_SCHEDULE_ID,
        PURGE_SCHEDULE_ID,
        WEBHOOK_HISTORY_SCHEDULE_ID,
        ensure_schedules,
    )

    for schedule_id in (PURGE_SCHEDULE_ID, PROVIDERS_SCHEDULE_ID, WEBHOOK_HISTORY_SCHEDULE_ID):
        with contextlib.suppress(Exception):
            await temporal_client.get_schedule_handle(schedule_id).delete()
    await ensure_schedules(temporal_client, "housekeeping-attributes")
    try:
        for schedule_id in (PURGE_SCHEDULE_ID, PROVIDERS_SCHEDULE_ID, WEBHOOK_HISTORY_SCHEDULE_ID):
            described = await temporal_client.get_schedule_handle(schedule_id).describe()
            assert described.schedule.action.typed_search_attributes.get(WORKSPACE) == EVERY_WORKSPACE
    finally:
        for schedule_id in (PURGE_SCHEDULE_ID, PROVIDERS_SCHEDULE_ID, WEBHOOK_HISTORY_SCHEDULE_ID):
            await temporal_client.get_schedule_handle(schedule_id).delete()
