"""The worker's index follower applies changes written by any process (the demo seeder, a CLI without
the index), and a rebuilt generation serves while the old one is replaced."""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any

import httpx

from groundwork.platform.search_replica.corpus_projection import follow_index_changes
from groundwork.services.evidence_search.sources import SourceUpload, ingest_without_index, receive_source
from tests.conftest import Workspace
from tests.integration.evidence_search.helpers import search


async def test_changes_written_to_postgresql_only_become_searchable_through_the_follower(
    client: httpx.AsyncClient, workspace: Workspace, worker: Any
) -> None:
    key = await workspace.key(admin=True)
    received = await receive_source(
        SourceUpload(
            workspace.projects["ALPHA"], "notes/okapi.txt", "text", b"The okapi release train leaves on Fridays."
        ),
        workspace_id=workspace.id,
        received_by="test",
    )
    result = await ingest_without_index(received.version_id)
    assert result.status == "active" and result.passages == 1
    assert (await search(client, workspace, key, "okapi"))["data"] == []  # stored, not yet indexed

    stop = asyncio.Event()
    follower = asyncio.create_task(follow_index_changes(stop, interval_seconds=0.05))
    try:
        for _ in range(100):
            hits = (await search(client, workspace, key, "okapi"))["data"]
            if hits:
                break
            await asyncio.sleep(0.05)
        assert [h["text"] for h in hits] == ["The okapi release train leaves on Fridays."]
    finally:
        stop.set()
        with contextlib.suppress(Exception):
            await follower
