"""An API process keeps its own search replica: built from PostgreSQL before it is ready, woken by the
change log's NOTIFY, its lag visible in /health/ready, and consistent on its own while it lags."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import replace
from pathlib import Path
from typing import Any

import httpx
import pytest
from ulid import ULID

from groundwork.config import Settings
from groundwork.persistence.repositories.evidence_search import index_log
from groundwork.platform.search_replica import replica as search_replica
from groundwork.platform.search_replica.corpus_projection import catch_up_index
from groundwork.platform.search_replica.replica import SearchReplica
from groundwork.search import corpus_index
from groundwork.search.corpus_index import SCHEMA_VERSION, CorpusGenerationWriter, CorpusIndex, build_schema
from groundwork.search.failures import IndexUnreadable
from groundwork.search.passages import project_passages
from groundwork.search.replica_directory import claim_directory
from groundwork.services.evidence_search.sources import SourceUpload, ingest_without_index, receive_source
from tests.conftest import Workspace, serving
from tests.integration.evidence_search.helpers import search

DEADLINE = 30.0


async def _until(check: Callable[[], Awaitable[Any]], what: str) -> Any:
    deadline = time.monotonic() + DEADLINE
    while True:
        value = await check()
        if value:
            return value
        assert time.monotonic() < deadline, f"{what} within {DEADLINE:.0f} s"
        await asyncio.sleep(0.05)


async def _ingest_in_postgresql_only(workspace: Workspace, uri: str, text: str) -> str:
    """A source made active in PostgreSQL (publish, activate) with no index step: only a follower indexes it."""
    received = await receive_source(
        SourceUpload(workspace.projects["ALPHA"], uri, "text", text.encode()),
        workspace_id=workspace.id,
        received_by="test",
    )
    result = await ingest_without_index(received.version_id)
    assert result.status == "active"
    return received.version_id


@asynccontextmanager
async def _api_with_replica(settings: Settings, index_dir: Path) -> AsyncIterator[httpx.AsyncClient]:
    own = replace(settings, index_dir=index_dir, search_replica=True)
    try:
        async with serving(own) as url, httpx.AsyncClient(base_url=url, timeout=30) as http:
            yield http
    finally:
        # The session's app and worker go back to the session's index.
        corpus_index.configure(settings.index_dir)


async def test_a_fresh_api_process_builds_its_replica_before_it_is_ready_then_follows_the_log(
    settings: Settings, workspace: Workspace, tmp_path: Path
) -> None:
    key = await workspace.key(admin=True)
    await _ingest_in_postgresql_only(workspace, "notes/quokka.txt", "The quokka ledger closes on Mondays.")
    replica_dir = tmp_path / "api-replica"
    build = CorpusIndex.at(replica_dir).write_lock()
    await build.acquire()  # the build cannot start yet: the process must not claim to be ready
    try:
        async with _api_with_replica(settings, replica_dir) as http:
            await asyncio.sleep(0.5)
            held = await http.get("/health/ready")
            assert held.status_code == 503, held.text
            assert held.json()["checks"]["search"] == "catching_up"
            assert held.json()["search"]["replica_ready"] is False
            build.release()
            ready = await _until(lambda: _ready(http), "the replica was built and the process ready")
            assert ready["checks"] == {"postgres": "ok", "temporal": "ok", "search": "ok"}
            # Ready means caught up: the source written before start is found on the first search.
            found = await search(http, workspace, key, "quokka")
            assert [p["text"] for p in found["data"]] == ["The quokka ledger closes on Mondays."]
            assert (replica_dir / "corpus" / "CURRENT").exists() and (replica_dir / "packages" / "CURRENT").exists()

            # Nobody calls an index step: the change log's NOTIFY wakes this process's replica.
            await _ingest_in_postgresql_only(workspace, "notes/wombat.txt", "The wombat ledger closes on Fridays.")
            hits = await _until(lambda: _texts(http, workspace, key, "wombat"), "the new source searchable")
            assert hits == ["The wombat ledger closes on Fridays."]
            lag = (await _until(lambda: _caught_up(http), "the lag back to zero"))["corpus"]
            assert lag["changes_behind"] == 0 and lag["seconds_behind"] == 0
            assert lag["applied_seq"] == lag["head_seq"] > 0
    finally:
        if build.locked():
            build.release()


async def test_segment_files_damaged_under_a_serving_replica_answer_503_never_an_empty_page(
    settings: Settings, workspace: Workspace, tmp_path: Path
) -> None:
    key = await workspace.key(admin=True)
    await _ingest_in_postgresql_only(workspace, "notes/kiwi.txt", "The kiwi ledger closes on Sundays.")
    replica_dir = tmp_path / "damaged"
    async with _api_with_replica(settings, replica_dir) as http:
        await _until(lambda: _ready(http), "the replica ready")
        assert await _texts(http, workspace, key, "kiwi") == ["The kiwi ledger closes on Sundays."]
        corpus = replica_dir / "corpus"
        damaged = corpus / (corpus / "CURRENT").read_text().strip()
        for term_file in damaged.glob("*.term"):
            # Zeroed in place, as a crash can leave blocks of a file: the process's memory maps now show a term
            # dictionary that reads as "no such word" without failing.
            with term_file.open("r+b") as handle:
                handle.write(bytes(term_file.stat().st_size))

        refused = await search(http, workspace, key, "kiwi", expect=503)
        assert refused["code"] == "service_unavailable"  # not a 200 saying that nothing matched
        # The failed search has the replica check its files at its next round and rebuild them from PostgreSQL.
        hits = await _until(lambda: _texts_when_served(http, workspace, key, "kiwi"), "the source found again")
        assert hits == ["The kiwi ledger closes on Sundays."]
        assert (corpus / "CURRENT").read_text().strip() != damaged.name


async def test_a_runs_evidence_is_never_gathered_from_damaged_or_missing_index_files(
    settings: Settings, workspace: Workspace, tmp_path: Path
) -> None:
    await _ingest_in_postgresql_only(workspace, "notes/kiwi.txt", "The kiwi ledger closes on Sundays.")
    alpha = workspace.projects["ALPHA"]
    try:
        # A process whose replica is not built yet: passages exist, so "no evidence" would be a lie that a run
        # keeps (its first step stores what it gathered); the step fails and Temporal retries it.
        corpus_index.configure(tmp_path / "replica")
        with pytest.raises(IndexUnreadable, match="being rebuilt"):
            await project_passages(workspace.id, alpha, "kiwi ledger")

        await catch_up_index(corpus_index.corpus_index())
        [found] = await project_passages(workspace.id, alpha, "kiwi ledger")
        assert found.text == "The kiwi ledger closes on Sundays."

        corpus = tmp_path / "replica" / "corpus"
        for term_file in (corpus / (corpus / "CURRENT").read_text().strip()).glob("*.term"):
            with term_file.open("r+b") as handle:  # zeroed in place: reads as "no such word" without failing
                handle.write(bytes(term_file.stat().st_size))
        with pytest.raises(IndexUnreadable):
            await project_passages(workspace.id, alpha, "kiwi ledger")
        assert corpus_index.corpus_index().unreadable  # this process's replica checks its files at once
    finally:
        corpus_index.configure(settings.index_dir)


async def _texts_when_served(http: httpx.AsyncClient, workspace: Workspace, key: str, query: str) -> list[str]:
    response = await http.post(
        "/api/v1/context/search",
        json={"subject_ref": {"type": "project", "id": workspace.projects["ALPHA"]}, "query": query},
        headers=workspace.headers(key),
    )
    assert response.status_code in (200, 503), response.text
    if response.status_code == 503:
        return []
    texts = [p["text"] for p in response.json()["data"]]
    assert texts, "a 200 without the source: until the rebuild, every answer must be a 503"
    return texts


async def _ready(http: httpx.AsyncClient) -> dict[str, Any] | None:
    response = await http.get("/health/ready")
    return response.json() if response.status_code == 200 else None


async def _texts(http: httpx.AsyncClient, workspace: Workspace, key: str, query: str) -> list[str]:
    return [p["text"] for p in (await search(http, workspace, key, query))["data"]]


async def _caught_up(http: httpx.AsyncClient) -> dict[str, Any] | None:
    indexes: dict[str, Any] = (await http.get("/health/ready")).json()["search"]["indexes"]
    return indexes if all(i["changes_behind"] == 0 for i in indexes.values()) else None


async def _lagging(http: httpx.AsyncClient) -> dict[str, Any] | None:
    corpus: dict[str, Any] = (await http.get("/health/ready")).json()["search"]["indexes"]["corpus"]
    return corpus if corpus["changes_behind"] >= 1 and corpus["seconds_behind"] > 0 else None


def _document(season: str, paragraphs: int) -> str:
    return "\n\n".join(f"Heron count {i} of the {season} survey." for i in range(paragraphs))


async def test_a_lagging_replica_reports_its_lag_and_answers_consistently_from_what_it_holds(
    settings: Settings, workspace: Workspace, tmp_path: Path
) -> None:
    key = await workspace.key(admin=True)
    old_version = await _ingest_in_postgresql_only(workspace, "survey.txt", _document("spring", 6))
    replica_dir = tmp_path / "lagging"
    async with _api_with_replica(settings, replica_dir) as http:
        await _until(lambda: _ready(http), "the replica ready")
        index = CorpusIndex.at(replica_dir)
        async with index.write_lock():  # this replica falls behind: it cannot apply anything meanwhile
            new_version = await _ingest_in_postgresql_only(workspace, "survey.txt", _document("autumn", 3))
            lag = await _until(lambda: _lagging(http), "the lag reported")
            assert lag["head_seq"] > lag["applied_seq"]
            ready = await http.get("/health/ready")
            assert ready.status_code == 200  # caught up once: lag is reported, the process stays in service
            # PostgreSQL made the new version active; this replica has not applied it yet, so it answers
            # wholly from what it holds: the old version, every page agreeing with its count.
            answer = await search(http, workspace, key, "heron survey", limit=50)
            assert {p["source"]["versionId"] for p in answer["data"]} == {old_version}
            assert answer["totalCount"] == len(answer["data"]) == 6
        hits = await _until(
            lambda: _versions_when(http, workspace, key, {new_version}), "the new version served once caught up"
        )
        assert hits["totalCount"] == len(hits["data"]) == 3
        await _until(lambda: _caught_up(http), "the lag back to zero")


async def _versions_when(
    http: httpx.AsyncClient, workspace: Workspace, key: str, versions: set[str]
) -> dict[str, Any] | None:
    answer = await search(http, workspace, key, "heron survey", limit=50)
    assert len({p["source"]["versionId"] for p in answer["data"]}) == 1, "one source serves one version"
    return answer if {p["source"]["versionId"] for p in answer["data"]} == versions else None


async def _run_until_ready(replica: SearchReplica) -> None:
    stop = asyncio.Event()
    task = asyncio.create_task(replica.run(stop))
    try:
        await asyncio.wait_for(replica.wait_ready(), DEADLINE)
    finally:
        stop.set()
        await task


async def test_a_replica_ahead_of_the_change_log_rebuilds_instead_of_missing_changes(
    workspace: Workspace, tmp_path: Path
) -> None:
    await _ingest_in_postgresql_only(workspace, "notes/ibis.txt", "The ibis ledger closes on Tuesdays.")
    await _run_until_ready(SearchReplica(tmp_path, poll_seconds=0.05))
    corpus = tmp_path / "corpus"
    built = (corpus / "CURRENT").read_text().strip()
    # As after PostgreSQL is restored from an older backup: the replica says it applied positions the log
    # has not reached (new changes would get those positions and be skipped).
    state_file = corpus / built / "groundwork.json"
    state = json.loads(state_file.read_text())
    state_file.write_text(json.dumps({**state, "applied_seq": state["applied_seq"] + 1_000_000}))

    replica = SearchReplica(tmp_path, poll_seconds=0.05)
    await _run_until_ready(replica)
    assert (corpus / "CURRENT").read_text().strip() != built  # a new generation, built from PostgreSQL
    lag = {i.index: i for i in replica.lag()}["corpus"]
    assert lag.applied_seq == lag.head_seq and lag.changes_behind == 0
    hits = CorpusIndex.at(tmp_path).snapshot()
    assert hits is not None and hits.applied_seq == lag.head_seq


def test_a_second_process_asking_for_a_held_directory_gets_a_sibling_of_its_own(tmp_path: Path) -> None:
    requested = tmp_path / "index"
    first = claim_directory(requested)
    second = claim_directory(requested)
    try:
        assert first.path == requested
        assert second.path == tmp_path / "index-2"
        first.release()
        third = claim_directory(requested)  # a released directory is found again (a restart reuses it)
        assert third.path == requested
        third.release()
    finally:
        first.release()
        second.release()


def test_a_process_without_a_replica_reports_no_lag() -> None:
    assert search_replica.search_replica_state() is None
    assert search_replica.search_index_lag() == []


@pytest.fixture(autouse=True)
def _no_replica_left_running() -> None:
    assert search_replica.search_replica_state() is None


async def _write_earlier_analysis_generation(index_dir: Path, version: int) -> str:
    """A corpus generation built by an earlier analysis version (its schema, its writer), serving: as a replica
    left by the release before this one."""
    folder = index_dir / "corpus"
    path = folder / f"gen-{ULID()}"
    path.mkdir(parents=True)
    writer = CorpusGenerationWriter(path, build_schema(version), heap_bytes=50_000_000, schema_version=version)
    writer.add_passages(await index_log.indexable_passages_after(0, 1_000_000))
    writer.commit(await index_log.last_index_change())
    writer.close()
    (folder / "CURRENT").write_text(path.name)
    return path.name


def _serving_version(index_dir: Path) -> int:
    folder = index_dir / "corpus"
    state = json.loads((folder / (folder / "CURRENT").read_text().strip() / "groundwork.json").read_text())
    return int(state["schema_version"])


async def test_a_new_analysis_is_built_beside_the_old_one_and_every_source_stays_findable_until_the_switch(
    settings: Settings, workspace: Workspace, tmp_path: Path
) -> None:
    key = await workspace.key(admin=True)
    await _ingest_in_postgresql_only(workspace, "notes/quokka.txt", "The quokka ledger closes on Mondays.")
    earlier = min(CorpusGenerationWriter.earlier_schema_versions)
    old = await _write_earlier_analysis_generation(tmp_path, earlier)
    build = CorpusIndex.at(tmp_path).write_lock()
    await build.acquire()  # the replica cannot rebuild yet: the earlier analysis must answer meanwhile
    try:
        async with _api_with_replica(settings, tmp_path) as http:
            assert await _texts(http, workspace, key, "what is the quokka ledger") == [
                "The quokka ledger closes on Mondays."
            ]
            assert _serving_version(tmp_path) == earlier
            build.release()
            served = []
            deadline = time.monotonic() + DEADLINE
            # The version is read before each search: read after it, it may already be the switched-in one.
            while (serving := _serving_version(tmp_path)) != SCHEMA_VERSION:
                served.append(serving)
                # Never an empty answer and never a 503 while the new analysis is built beside the old one.
                assert await _texts(http, workspace, key, "quokka ledger") == ["The quokka ledger closes on Mondays."]
                assert time.monotonic() < deadline, "the new analysis was not switched in"
                await asyncio.sleep(0.01)
            assert await _texts(http, workspace, key, "quokka ledger") == ["The quokka ledger closes on Mondays."]
            assert (tmp_path / "corpus" / "CURRENT").read_text().strip() != old
            assert set(served) <= {earlier}
    finally:
        if build.locked():
            build.release()
