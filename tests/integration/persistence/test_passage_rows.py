"""Passages carry copies of their source's workspace, project and source, kept by the version's own key."""

from __future__ import annotations

from typing import Any

import httpx

from groundwork.persistence import db
from tests.conftest import Workspace
from tests.integration.search.helpers import contribute

RUNBOOK = "# Settlement runbook\n\nSettlement files land at 02:00.\n\nA late file pages the on-call.\n"


async def test_passages_copy_their_sources_owners_and_are_removed_with_their_source(
    client: httpx.AsyncClient, workspace: Workspace, worker: Any
) -> None:
    added = await contribute(workspace, "ALPHA", "runbooks/settlement.md", RUNBOOK)
    await contribute(workspace, "BETA", "runbooks/other.md", RUNBOOK)
    rows = await db.fetch(
        "SELECT p.workspace_id, p.project_id, p.source_id, s.workspace_id AS s_ws, s.project_id AS s_project"
        " FROM corpus_passages p JOIN corpus_source_versions v ON v.id = p.source_version_id"
        " JOIN corpus_sources s ON s.id = v.source_id WHERE p.source_version_id = $1",
        added["version"]["id"],
    )
    assert len(rows) == 2
    assert {(r["workspace_id"], r["project_id"], r["source_id"]) for r in rows} == {
        (r["s_ws"], r["s_project"], added["source"]["id"]) for r in rows
    }

    # No foreign key of its own: the passages go with their source, through the version's key.
    await db.execute("DELETE FROM corpus_sources WHERE project_id = $1", workspace.projects["ALPHA"])
    left = await db.fetch("SELECT project_id FROM corpus_passages WHERE workspace_id = $1", rows[0]["workspace_id"])
    assert {r["project_id"] for r in left} == {workspace.projects["BETA"]}
