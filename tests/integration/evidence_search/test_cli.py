"""`groundwork ingest` (through the worker, and in-process) and `groundwork reindex`, as a person runs them."""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path
from typing import Any

import httpx

from groundwork.demo.pdf import build_pdf
from tests.conftest import Workspace
from tests.integration.evidence_search.helpers import search


async def _groundwork(*args: str, env: dict[str, str]) -> tuple[int, str, str]:
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "groundwork.cli",
        *args,
        env={**os.environ, **env},
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    out, err = await asyncio.wait_for(process.communicate(), 120)
    return process.returncode or 0, out.decode(), err.decode()


def _folder(root: Path) -> Path:
    docs = root / "docs"
    (docs / "runbooks").mkdir(parents=True)
    (docs / "runbooks" / "failover.md").write_text("# Failover\n\nPromote the standby in Frankfurt first.\n")
    (docs / "notes.txt").write_text("Kickoff notes: the quokka dashboard ships in June.\n")
    (docs / "plan.pdf").write_bytes(
        build_pdf([["Cover page."], ["The marmoset migration runs on weekends."]], title="Plan")
    )
    (docs / "broken.pdf").write_bytes(b"%PDF-1.4 not really")
    (docs / "diagram.png").write_bytes(b"\x89PNG")
    (docs / ".hidden.md").write_text("never ingested")
    return docs


async def test_ingest_through_the_worker_then_search_finds_pages_and_uris(
    client: httpx.AsyncClient, workspace: Workspace, worker: Any, settings: Any, tmp_path: Path
) -> None:
    docs = _folder(tmp_path)
    env = {
        "DATABASE_URL": settings.database_url,
        "TEMPORAL_ADDRESS": settings.temporal_address,
        "TEMPORAL_TASK_QUEUE": settings.temporal_task_queue,
        "GROUNDWORK_INDEX_DIR": str(settings.index_dir),
    }
    code, out, err = await _groundwork(
        "ingest", str(docs), "--project", "ALPHA", "--workspace", workspace.slug, env=env
    )
    assert code == 1, err  # one file failed, and says why
    assert "through the worker (Temporal)" in err
    assert "added      3 source(s), 4 passage(s)" in out
    assert "skipped    1 file(s)" in out and "failed     1 source(s)" in out
    assert "broken.pdf: not a readable PDF" in out

    key = await workspace.key(admin=True)
    [hit] = (await search(client, workspace, key, "marmoset"))["data"]
    assert (hit["source"]["uri"], hit["page"], hit["paragraph"]) == ("plan.pdf", 2, 1)
    [hit] = (await search(client, workspace, key, "standby Frankfurt"))["data"]
    assert hit["source"]["uri"] == "runbooks/failover.md" and hit["section"] == "Failover"
    assert (await search(client, workspace, key, "never ingested"))["data"] == []

    (docs / "broken.pdf").unlink()
    code, out, err = await _groundwork("ingest", str(docs), "--project", workspace.projects["ALPHA"], env=env)
    assert code == 0, err
    assert "added      0 source(s)" in out and "unchanged  3 source(s)" in out

    # A rebuild while the worker holds the index: the API keeps answering, then reads the new generation.
    code, out, err = await _groundwork("reindex", env=env)
    assert code == 0, err
    assert "indexed" in out
    [hit] = (await search(client, workspace, key, "marmoset"))["data"]
    assert hit["page"] == 2
    (docs / "notes.txt").write_text("Kickoff notes: the quokka dashboard ships in July.\n")
    code, out, err = await _groundwork(
        "ingest", str(docs / "notes.txt"), "--project", workspace.projects["ALPHA"], env=env
    )
    assert code == 0 and "added      1 source(s), 1 passage(s)" in out, err
    [hit] = (await search(client, workspace, key, "quokka"))["data"]
    assert hit["text"].endswith("July.") and hit["source"]["uri"] == "notes.txt"


async def test_ingest_in_process_without_a_worker_and_reindex(
    workspace: Workspace, settings: Any, tmp_path: Path
) -> None:
    docs = _folder(tmp_path)
    index_dir = tmp_path / "own-index"
    env = {
        "DATABASE_URL": settings.database_url,
        "GROUNDWORK_INDEX_DIR": str(index_dir),
        "TEMPORAL_ADDRESS": "127.0.0.1:9",
    }
    code, out, err = await _groundwork(
        "ingest",
        str(docs / "notes.txt"),
        "--uri",
        "kickoff/notes.txt",
        "--project",
        workspace.projects["BETA"],
        env=env,
    )
    assert code == 0, err
    assert "in this process" in err and "added      1 source(s), 1 passage(s)" in out
    assert (index_dir / "corpus" / "CURRENT").exists()

    code, out, err = await _groundwork("ingest", str(docs), "--project", "NOPE", "--workspace", workspace.slug, env=env)
    assert code == 2 and "no project 'NOPE'" in err
    code, out, err = await _groundwork("ingest", str(docs), "--uri", "x", "--project", "BETA", env=env)
    assert code == 2 and "--uri names one source" in err

    code, out, err = await _groundwork("reindex", env=env)
    assert code == 0, err
    assert "indexed" in out and "Reindexing" in err
