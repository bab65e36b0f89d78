"""services/evidence_search/admin: `groundwork ingest` takes folders and files, reports each file's outcome, and a
file ingested again changes nothing."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from groundwork.domain.errors import NotFound
from groundwork.persistence.repositories.tenancy import workspaces as tenancy
from groundwork.services.evidence_search import admin
from tests.conftest import Workspace


def test_a_folder_is_walked_for_its_visible_files_with_uris_relative_to_it(tmp_path: Path) -> None:
    (tmp_path / "runbooks").mkdir()
    (tmp_path / "runbooks" / "sftp.md").write_text("# SFTP\n")
    (tmp_path / "notes.txt").write_text("notes\n")
    (tmp_path / "logo.png").write_bytes(b"\x89PNG")
    (tmp_path / ".git").mkdir()
    (tmp_path / ".git" / "config").write_text("hidden\n")
    found = admin.collect_files([tmp_path])
    assert [(f.uri, f.kind is not None) for f in found] == [
        ("logo.png", False),
        ("notes.txt", True),
        ("runbooks/sftp.md", True),
    ]


def test_a_uri_names_exactly_one_file(tmp_path: Path) -> None:
    one = tmp_path / "a.md"
    one.write_text("a")
    assert [f.uri for f in admin.collect_files([one], uri="handbook/a.md")] == ["handbook/a.md"]
    with pytest.raises(ValueError, match="exactly one file"):
        admin.collect_files([tmp_path], uri="x.md")


async def test_a_project_is_found_by_key_in_its_workspace_or_by_id(workspace: Workspace) -> None:
    by_key = await admin.resolve_project("ALPHA", workspace.slug)
    assert by_key.id == workspace.projects["ALPHA"]
    assert (await admin.resolve_project(by_key.id, None)).key == "ALPHA"
    with pytest.raises(NotFound, match="give --workspace"):
        await admin.resolve_project("ALPHA", None)
    with pytest.raises(NotFound, match="no project 'GAMMA'"):
        await admin.resolve_project("GAMMA", workspace.slug)


async def test_each_file_gets_its_outcome_and_a_second_ingest_changes_nothing(
    workspace: Workspace, tmp_path: Path
) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "sftp.md").write_text("# SFTP settlement\n\nThe PSP publishes the settlement file at 02:00.\n")
    (docs / "image.png").write_bytes(b"\x89PNG")
    project = await tenancy.project_by_id(workspace.projects["ALPHA"])
    assert project is not None
    files = admin.collect_files([docs])
    heard: list[Any] = []
    first = await admin.ingest_files(
        project, files, owner="ops", client=None, task_queue="unused", index=False, progress=heard.append
    )
    outcomes = {f.uri: (f.outcome, f.reason) for f in first.files}
    assert outcomes["image.png"] == ("skipped", "unsupported file type .png")
    assert outcomes["sftp.md"] == ("added", None) and first.passages_added >= 1
    assert sorted(f.uri for f in heard) == ["image.png", "sftp.md"]
    again = await admin.ingest_files(project, files, owner="ops", client=None, task_queue="unused", index=False)
    assert {f.uri: f.outcome for f in again.files} == {"image.png": "skipped", "sftp.md": "unchanged"}
    assert again.passages_added == 0


async def test_two_files_with_one_uri_ingest_the_first_only(workspace: Workspace, tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    (tmp_path / "a" / "same.md").write_text("# One\n\nFirst text.\n")
    (tmp_path / "b" / "same.md").write_text("# Two\n\nSecond text.\n")
    project = await tenancy.project_by_id(workspace.projects["BETA"])
    assert project is not None
    files = [admin.FileSource(tmp_path / name / "same.md", "same.md", "markdown") for name in ("a", "b")]
    report = await admin.ingest_files(project, files, owner="ops", client=None, task_queue="unused", index=False)
    assert sorted(f.outcome for f in report.files) == ["added", "failed"]
    assert [f.reason for f in report.files if f.outcome == "failed"] == ["another file has the same uri"]
