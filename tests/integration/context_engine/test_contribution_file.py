"""services/context_engine/contribution_file: every line is checked before any is written, a bad line is reported by
number and contributes nothing, and a line seen before changes nothing."""

from __future__ import annotations

import json

import pytest

from groundwork.domain.errors import GroundworkError
from groundwork.persistence import db
from groundwork.services.context_engine.contribution_file import LineOutcome, contribute_lines
from tests.conftest import Workspace
from tests.integration.context_engine.helpers import body, context_events, register


async def test_good_lines_contribute_in_process_and_bad_ones_are_reported_by_number(workspace: Workspace) -> None:
    provider = await register(workspace, "radar")
    good = body(provider, workspace.projects["ALPHA"], "Okapi migration", "The okapi migration overruns.")
    lines = ["", json.dumps(good), "[1, 2", json.dumps({**good, "provider_id": "prov_nope"})]
    heard: list[LineOutcome] = []
    report = await contribute_lines(workspace.slug, lines, client=None, task_queue="unused", progress=heard.append)
    assert [(line.number, line.outcome) for line in report.lines] == [(2, "created"), (3, "failed"), (4, "failed")]
    assert report.failed[0].reason is not None and report.failed[0].reason.startswith("not valid JSON")
    assert report.failed[1].reason == "provider_id: no such provider in this workspace"
    assert sorted(outcome.number for outcome in heard) == [2, 3, 4]  # progress hears every line once
    rows = await db.fetch(
        "SELECT body->>'term' AS term FROM context_contributions WHERE workspace_id = $1", workspace.id
    )
    assert [row["term"] for row in rows] == ["Okapi migration"]

    events = len(await context_events(workspace))
    assert events > 0
    again = await contribute_lines(workspace.slug, lines, client=None, task_queue="unused")
    assert [line.outcome for line in again.lines] == ["unchanged", "failed", "failed"]
    assert again.lines[0].entry_id == report.lines[0].entry_id
    assert len(await context_events(workspace)) == events  # nothing new was emitted
    assert len(await db.fetch("SELECT 1 FROM context_contributions WHERE workspace_id = $1", workspace.id)) == 1


async def test_an_unknown_workspace_is_refused_before_any_line() -> None:
    with pytest.raises(GroundworkError, match="No workspace with the slug"):
        await contribute_lines("no-such-workspace", ["{}"], client=None, task_queue="unused")
