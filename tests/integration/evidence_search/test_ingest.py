"""services/evidence_search/ingest: activation is consistent from the reader's view: the index serves the new version
in the commit that takes the old one out, PostgreSQL marks it active after that, and a page's count always agrees with
its rows."""

from __future__ import annotations

import asyncio
import contextlib
from pathlib import Path
from typing import Any

import httpx
import pytest
from temporalio.exceptions import ApplicationError

from groundwork.persistence import db
from groundwork.persistence.repositories.evidence_search import sources
from groundwork.persistence.repositories.tenancy import workspaces as tenancy
from groundwork.platform.search_replica.corpus_projection import catch_up_index
from groundwork.search.corpus_index import corpus_index
from groundwork.services.evidence_search import admin as corpus_admin
from groundwork.services.evidence_search.ingest import activate_version, publish_version, segment_version
from groundwork.services.evidence_search.sources import SourceUpload, receive_source
from tests.conftest import Workspace
from tests.integration.evidence_search.helpers import contribute, search


def _document(version: str, paragraphs: int) -> str:
    return "\n\n".join(f"Lantern check {i} of the {version} relay schedule." for i in range(paragraphs))


async def _pages(client: httpx.AsyncClient, workspace: Workspace, key: str, query: str, limit: int) -> list[Any]:
    pages, cursor = [], None
    while True:
        answer = await search(client, workspace, key, query, limit=limit, **({"cursor": cursor} if cursor else {}))
        pages.append(answer)
        cursor = answer["page"]["nextCursor"]
        if cursor is None:
            return pages


def _assert_counts_agree(pages: list[Any]) -> list[str]:
    """Every page's totalCount is the number of rows all pages return; only the last says no more."""
    ids = [p["id"] for page in pages for p in page["data"]]
    assert len(ids) == len(set(ids))
    assert all(page["totalCount"] == len(ids) and page["truncated"] is False for page in pages)
    assert [page["page"]["hasMore"] for page in pages] == [True] * (len(pages) - 1) + [False]
    return ids


async def test_a_changed_source_is_findable_at_every_step_of_its_re_ingest_and_counts_agree(
    client: httpx.AsyncClient, workspace: Workspace, worker: Any
) -> None:
    key = await workspace.key(admin=True)
    first = await contribute(workspace, "ALPHA", "relay.md", _document("spring", 12), kind="text")
    old_version = first["version"]["id"]

    async def served() -> set[str]:
        pages = await _pages(client, workspace, key, "lantern relay", limit=5)
        _assert_counts_agree(pages)
        versions = {p["source"]["versionId"] for page in pages for p in page["data"]}
        assert len(versions) == 1, "one source serves exactly one version"
        return versions

    received = await receive_source(
        SourceUpload(workspace.projects["ALPHA"], "relay.md", "text", _document("autumn", 7).encode()),
        workspace_id=workspace.id,
        received_by="test",
    )
    new_version = received.version_id
    assert await served() == {old_version}
    await segment_version(new_version)
    assert await served() == {old_version}  # stored, not published
    publication = await publish_version(new_version)
    assert publication.status == "published"
    assert await served() == {old_version}  # logged; the index has not committed it yet
    await catch_up_index(corpus_index())
    # The index commit is the activation readers see: the new version, all of it, and nothing of the old.
    assert await served() == {new_version}
    state = await sources.version_state(new_version)
    assert state is not None and state.status == "pending"  # PostgreSQL follows the index
    assert (await activate_version(new_version)).status == "active"
    assert await served() == {new_version}
    assert len(_assert_counts_agree(await _pages(client, workspace, key, "lantern relay", limit=5))) == 7


async def test_a_search_loop_never_comes_back_empty_while_the_new_version_activates(
    client: httpx.AsyncClient, workspace: Workspace, worker: Any
) -> None:
    key = await workspace.key(admin=True)
    await contribute(workspace, "ALPHA", "relay.md", _document("winter", 3), kind="text")
    answers: list[dict[str, Any]] = []
    stop = asyncio.Event()

    async def loop() -> None:
        while not stop.is_set():
            answers.append(await search(client, workspace, key, "lantern", limit=50))

    searching = asyncio.create_task(loop())
    try:
        for season, paragraphs in (("summer", 5), ("harvest", 2), ("thaw", 4)):
            # Through the provider API and the worker's CorpusIngestWorkflow: segment, publish, index, activate.
            done = await contribute(workspace, "ALPHA", "relay.md", _document(season, paragraphs), kind="text")
            assert done["version"]["status"] == "active"
    finally:
        stop.set()
        with contextlib.suppress(Exception):
            await searching
    assert len(answers) > 3
    for answer in answers:
        assert answer["data"], "the source was missing from a search while it had a serving version"
        assert answer["totalCount"] == len(answer["data"])
        assert len({p["source"]["versionId"] for p in answer["data"]}) == 1
    final = await search(client, workspace, key, "lantern", limit=50)
    assert sorted(p["text"] for p in final["data"]) == [
        f"Lantern check {i} of the thaw relay schedule." for i in range(4)
    ]


async def test_an_in_process_import_indexes_every_file_before_it_activates_any(
    workspace: Workspace, worker: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    files = []
    for name in ("north", "south", "east"):
        path = tmp_path / f"{name}.md"
        path.write_text(f"# Heron {name}\n\nThe heron ledger of the {name} depot closes at noon.\n")
        files.append(corpus_admin.FileSource(path, f"ledgers/{name}.md", "markdown"))
    at_activation: list[tuple[str, bool]] = []
    activate = corpus_admin.activate_in_process

    async def watched(published: Any) -> Any:
        state = await sources.version_state(published.version_id)
        snapshot = corpus_index().snapshot()
        assert state is not None
        at_activation.append((state.status, snapshot is not None and snapshot.applied_seq >= published.index_seq))
        return await activate(published)

    monkeypatch.setattr(corpus_admin, "activate_in_process", watched)
    project = await tenancy.project_by_id(workspace.projects["ALPHA"])
    assert project is not None
    report = await corpus_admin.ingest_files(project, files, owner="test", client=None, task_queue="")

    assert [f.outcome for f in report.files] == ["added"] * 3 and report.passages_added == 3
    # Each version was still pending in PostgreSQL, and already in the serving index, when it was activated.
    assert at_activation == [("pending", True)] * 3
    rows = await db.fetch(
        "SELECT v.status FROM corpus_source_versions v JOIN corpus_sources s ON s.id = v.source_id"
        " WHERE s.project_id = $1 AND s.uri LIKE 'ledgers/%'",
        workspace.projects["ALPHA"],
    )
    assert sorted(r["status"] for r in rows) == ["active"] * 3


async def test_an_import_activates_a_few_files_at_once_and_reports_a_failed_activation_alone(
    workspace: Workspace, worker: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    files = []
    for number in range(8):
        path = tmp_path / f"depot-{number}.md"
        path.write_text(f"# Depot {number}\n\nThe kestrel manifest of depot {number} is sealed at dusk.\n")
        files.append(corpus_admin.FileSource(path, f"manifests/depot-{number}.md", "markdown"))
    activate = corpus_admin.activate_in_process
    in_flight, most = 0, 0
    refused: list[str] = []

    async def watched(published: Any) -> Any:
        nonlocal in_flight, most
        in_flight += 1
        most = max(most, in_flight)
        try:
            await asyncio.sleep(0.05)
            if not refused:  # the first activation to arrive fails; the others go on
                refused.append(published.version_id)
                raise ApplicationError("PostgreSQL refused the activation", type="conflict")
            return await activate(published)
        finally:
            in_flight -= 1

    monkeypatch.setattr(corpus_admin, "activate_in_process", watched)
    project = await tenancy.project_by_id(workspace.projects["ALPHA"])
    assert project is not None
    report = await corpus_admin.ingest_files(project, files, owner="test", client=None, task_queue="")

    assert 1 < most <= corpus_admin._CONCURRENT_INGESTS
    failed = [f for f in report.files if f.outcome == "failed"]
    assert len(failed) == 1 and failed[0].reason == "activation failed: PostgreSQL refused the activation"
    assert report.count("added") == 7 and report.passages_added == 7
    rows = await db.fetch(
        "SELECT v.id, v.status FROM corpus_source_versions v JOIN corpus_sources s ON s.id = v.source_id"
        " WHERE s.project_id = $1 AND s.uri LIKE 'manifests/%'",
        workspace.projects["ALPHA"],
    )
    assert sorted((r["id"] in refused, r["status"]) for r in rows) == [(False, "active")] * 7 + [(True, "pending")]
