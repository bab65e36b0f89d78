"""A provider contributes only to projects its role lets it write; an unknown project is 404."""

from __future__ import annotations

from typing import Any

import pytest

from groundwork.persistence import db
from groundwork.persistence.repositories.tenancy import workspaces as tenancy
from tests.conftest import Workspace, idem
from tests.integration.context_engine.helpers import body, context_events, register

SOURCE = "/internal/v1/corpus/sources"
CONTRIBUTION = "/internal/v1/context-engine/contributions"


def _source(project_id: str) -> dict[str, Any]:
    return {"project_id": project_id, "uri": "notes.md", "kind": "markdown", "content": "# Notes\n\nA risk."}


async def _stored_sources(workspace: Workspace) -> int:
    row = await db.fetchrow(
        "SELECT count(*) AS n FROM corpus_sources s JOIN projects p ON p.id = s.project_id WHERE p.workspace_id = $1",
        workspace.id,
    )
    assert row is not None
    return int(row["n"])


@pytest.mark.parametrize("role", ["guest", "viewer"])
async def test_a_provider_whose_role_cannot_write_the_project_is_refused_and_nothing_is_stored(
    workspace: Workspace, worker: Any, role: str
) -> None:
    provider = await register(workspace, "risk-radar")
    reader = await workspace.provider_key(f"{role}-bot", role=role)
    alpha = workspace.projects["ALPHA"]
    for path, payload in (
        (SOURCE, _source(alpha)),
        (CONTRIBUTION, body(provider, alpha, "Vendor risk", "The vendor may slip.")),
    ):
        response = await workspace.internal.post(path, json=payload, headers=workspace.headers(reader, **idem()))
        assert response.status_code == 403, response.text
        assert response.json()["code"] == "permission_denied"
        assert response.json()["required_permission"] == "context:write"
    assert await _stored_sources(workspace) == 0
    assert await context_events(workspace) == []


async def test_an_unknown_or_unseen_project_is_404_for_a_provider(workspace: Workspace, worker: Any) -> None:
    provider = await register(workspace, "risk-radar")
    outsider = await workspace.provider_key("outsider", role=None)  # no role on any project
    writer = await workspace.provider_key()
    alpha = workspace.projects["ALPHA"]
    cases = [
        (writer, SOURCE, _source("prj_nope")),
        (writer, CONTRIBUTION, body(provider, "prj_nope", "T", "S.")),
        (outsider, SOURCE, _source(alpha)),
        (outsider, CONTRIBUTION, body(provider, alpha, "T", "S.")),
    ]
    for key, path, payload in cases:
        response = await workspace.internal.post(path, json=payload, headers=workspace.headers(key, **idem()))
        assert response.status_code == 404, (path, response.text)
        assert response.json()["code"] == "not_found"
    assert await _stored_sources(workspace) == 0
    assert await context_events(workspace) == []


async def test_a_provider_with_a_writing_role_contributes(workspace: Workspace, worker: Any) -> None:
    lead = await workspace.provider_key("lead-bot", role="lead")
    response = await workspace.internal.post(
        SOURCE, params={"wait": 30}, json=_source(workspace.projects["BETA"]), headers=workspace.headers(lead, **idem())
    )
    assert response.status_code == 201, response.text
    assert await _stored_sources(workspace) == 1


async def test_a_contribution_is_404_to_a_provider_that_cannot_see_its_project(
    workspace: Workspace, worker: Any
) -> None:
    provider = await register(workspace, "risk-radar")
    writer = await workspace.provider_key()
    made = await workspace.internal.post(
        CONTRIBUTION,
        params={"wait": 30},
        json=body(provider, workspace.projects["ALPHA"], "Vendor risk", "The vendor may slip."),
        headers=workspace.headers(writer, **idem()),
    )
    assert made.status_code == 201, made.text
    contribution_id = made.json()["data"]["id"]
    outsider = await workspace.provider_key("outsider", role=None)  # no role on any project
    beta_only = await workspace.provider_key("beta-bot", role=None)
    await tenancy.add_membership(workspace.principals["beta-bot"], workspace.projects["BETA"], "lead")
    for key in (outsider, beta_only):
        response = await workspace.internal.get(f"{CONTRIBUTION}/{contribution_id}", headers=workspace.headers(key))
        assert response.status_code == 404 and response.json()["code"] == "not_found", response.text
        assert "Vendor risk" not in response.text and "slip" not in response.text
    seen = await workspace.internal.get(f"{CONTRIBUTION}/{contribution_id}", headers=workspace.headers(writer))
    assert seen.status_code == 200 and seen.json()["data"]["contribution"]["term"] == "Vendor risk"
