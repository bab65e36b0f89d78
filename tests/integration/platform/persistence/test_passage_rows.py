"""Passages carry copies of their source's workspace, project and source, and belong to the segmentation that cut
them: its key (version, segmenter version) keeps them, and removes them with their version."""

from __future__ import annotations

from typing import Any

import asyncpg
import httpx
import pytest

from groundwork.persistence import db
from tests.conftest import Workspace
from tests.integration.evidence_search.helpers import contribute

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

    # No foreign key of its own: the passages go with their source, through the version's segmentation.
    await db.execute("DELETE FROM corpus_sources WHERE project_id = $1", workspace.projects["ALPHA"])
    left = await db.fetch("SELECT project_id FROM corpus_passages WHERE workspace_id = $1", rows[0]["workspace_id"])
    assert {r["project_id"] for r in left} == {workspace.projects["BETA"]}


async def test_a_passage_cannot_be_stored_without_the_segmentation_that_cut_it(
    client: httpx.AsyncClient, workspace: Workspace, worker: Any
) -> None:
    added = await contribute(workspace, "ALPHA", "runbooks/settlement.md", RUNBOOK)
    version = added["version"]["id"]
    row = await db.fetchrow(
        "SELECT workspace_id, project_id, source_id, segmenter_id FROM corpus_passages WHERE source_version_id = $1"
        " LIMIT 1",
        version,
    )
    assert row is not None
    # The same version under a segmenter version that never cut it: no segmentation row, so no passage. (In a
    # transaction rolled back after, so the extra segmenter version never reaches another test.)
    with pytest.raises(_RolledBack):
        async with db.transaction():
            await db.execute(
                "INSERT INTO corpus_segmenters (id, name, version) VALUES ('paragraph@99', 'paragraph', 99)"
            )
            with pytest.raises(asyncpg.ForeignKeyViolationError):
                await db.execute(
                    "INSERT INTO corpus_passages (id, workspace_id, project_id, source_id, source_version_id,"
                    " segmenter_id, ordinal, char_start, char_end, text, provenance_quality)"
                    " VALUES ('psg_orphan', $1, $2, $3, $4, 'paragraph@99', 0, 0, 5, 'hello', 'exact_text')",
                    row["workspace_id"],
                    row["project_id"],
                    row["source_id"],
                    version,
                )
            raise _RolledBack
    assert await db.fetchrow("SELECT id FROM corpus_passages WHERE id = 'psg_orphan'") is None
    counted = await db.fetchrow("SELECT count(*) AS n FROM corpus_passages WHERE source_version_id = $1", version)
    assert counted is not None and counted["n"] == 2


class _RolledBack(Exception):
    """Ends a transaction the test wants undone."""
