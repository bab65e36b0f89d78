"""services/enhancement/outputs: a run's drafts and artifacts filtered and paged, and only for a caller who sees the
run's project."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from groundwork.domain.errors import NotFound, ValidationFailed
from groundwork.services.enhancement import outputs
from groundwork.services.tenancy.api_keys import resolve_key
from tests.conftest import Workspace
from tests.integration.enhancement.conftest import create_run


async def test_drafts_filter_by_field_and_action_and_pages_cover_each_once(
    client: httpx.AsyncClient, workspace: Workspace, work_item: dict[str, Any], worker: Any
) -> None:
    key = await workspace.key("owner", admin=True)
    response = await create_run(client, workspace, key, work_item["id"], ["requirements", "estimate", "risk_check"])
    assert response.status_code == 201, response.text
    run_id = response.json()["data"]["id"]
    owner = await resolve_key(key)
    assert owner is not None
    _, everything, _ = await outputs.list_drafts(owner, run_id, limit=100)
    assert {d.field for d in everything} == {"requirements", "estimate", "risks"}
    _, estimates, _ = await outputs.list_drafts(owner, run_id, field="estimate")
    assert [d.field for d in estimates] == ["estimate"] * len(estimates) and estimates
    _, by_action, _ = await outputs.list_drafts(owner, run_id, action="risk_check")
    assert {d.field for d in by_action} == {"risks"}
    seen: list[str] = []
    cursor = None
    while True:
        _, page, info = await outputs.list_drafts(owner, run_id, limit=1, cursor=cursor)
        seen += [d.id for d in page]
        cursor = info.get("next_cursor")
        if not cursor:
            break
    assert seen == [d.id for d in everything]
    artifacts, _ = await outputs.list_artifacts(owner, run_id, type="evidence_digest")
    assert artifacts and {a.type for a in artifacts} == {"evidence_digest"}
    with pytest.raises(ValidationFailed):
        await outputs.list_drafts(owner, run_id, field="colour")


async def test_a_caller_who_does_not_see_the_project_finds_no_run(
    client: httpx.AsyncClient, workspace: Workspace, work_item: dict[str, Any], worker: Any
) -> None:
    key = await workspace.key("owner", admin=True)
    response = await create_run(client, workspace, key, work_item["id"], ["requirements"])
    run_id = response.json()["data"]["id"]
    stranger = await resolve_key(await workspace.key("stranger", None, memberships={"BETA": "lead"}))
    assert stranger is not None
    with pytest.raises(NotFound):
        await outputs.list_drafts(stranger, run_id)
    with pytest.raises(NotFound):
        await outputs.list_artifacts(stranger, run_id)
