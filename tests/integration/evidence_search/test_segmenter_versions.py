"""A new segmenter version is rolled out by a workflow; until it is active its passages never surface."""

from __future__ import annotations

import uuid
from typing import Any

import httpx

from groundwork.persistence import db
from groundwork.workflows.evidence_search import CorpusResegmentInput, CorpusResegmentResult, CorpusResegmentWorkflow
from tests.conftest import Workspace
from tests.integration.evidence_search.helpers import contribute, search

LONG = " ".join(f"Sentence {i} about the quarterly tokenisation audit of the card vault." for i in range(18))


async def _resegment(temporal_client: Any, settings: Any, segmenter: str, activate: bool) -> CorpusResegmentResult:
    return await temporal_client.execute_workflow(
        CorpusResegmentWorkflow.run,
        CorpusResegmentInput(segmenter, activate=activate, batch_size=7),
        id=f"test-resegment-{segmenter}-{uuid.uuid4().hex[:8]}",
        task_queue=settings.temporal_task_queue,
    )


async def test_inactive_segmenter_version_never_surfaces_until_activated(
    client: httpx.AsyncClient, workspace: Workspace, worker: Any, temporal_client: Any, settings: Any
) -> None:
    key = await workspace.key(admin=True)
    added = await contribute(workspace, "ALPHA", "audit.md", f"# Audit\n\n{LONG}\n\nShort closing note.")
    version_id = added["version"]["id"]
    before = await search(client, workspace, key, "tokenisation", limit=100)
    assert {p["segmenterVersion"] for p in before["data"]} == {"paragraph@1"}
    assert len(before["data"]) == 1  # the long paragraph fits paragraph@1's limit

    try:
        staged = await _resegment(temporal_client, settings, "paragraph@2", activate=False)
        assert staged.status == "staging"
        stored = await db.fetch(
            "SELECT segmenter_id, count(*) AS n FROM corpus_passages WHERE source_version_id = $1 GROUP BY 1",
            version_id,
        )
        assert {r["segmenter_id"]: r["n"] for r in stored}["paragraph@2"] > 1  # cut finer, stored and indexed
        during = await search(client, workspace, key, "tokenisation", limit=100)
        assert [p["id"] for p in during["data"]] == [p["id"] for p in before["data"]]
        assert during["totalCount"] == before["totalCount"]

        active = await _resegment(temporal_client, settings, "paragraph@2", activate=True)
        assert active.status == "active"
        after = await search(client, workspace, key, "tokenisation", limit=100)
        assert {p["segmenterVersion"] for p in after["data"]} == {"paragraph@2"} and len(after["data"]) > 1
        assert all(len(p["text"]) <= 600 for p in after["data"])

        # A source ingested while paragraph@2 serves is cut by it.
        fresh = await contribute(workspace, "ALPHA", "fresh.md", "Fresh tokenisation guidance.")
        assert fresh["version"]["passageCount"] == 1
        [hit] = (await search(client, workspace, key, "guidance"))["data"]
        assert hit["segmenterVersion"] == "paragraph@2"
    finally:
        restored = await _resegment(temporal_client, settings, "paragraph@1", activate=True)
        assert restored.status == "active"
    back = await search(client, workspace, key, "tokenisation", limit=100)
    assert {p["segmenterVersion"] for p in back["data"]} == {"paragraph@1"}
    assert len(back["data"]) == 2  # the long paragraph and the fresh source, each one passage again
