"""services/work_items/importer: each good JSON Lines record becomes an item, each bad one is reported by line and
why."""

from __future__ import annotations

import json

import pytest

from groundwork.domain.errors import GroundworkError
from groundwork.services.tenancy.api_keys import resolve_key
from groundwork.services.work_items import importer, items
from tests.conftest import Workspace


async def test_good_lines_are_created_and_bad_lines_reported_with_their_reason(workspace: Workspace) -> None:
    reader = await resolve_key(await workspace.key("ivy", None, memberships={"ALPHA": "lead"}))
    assert reader is not None
    lines = [
        json.dumps({"project": "ALPHA", "title": "First", "watchers": ["ivy"], "fields": {"estimate": 2}}),
        "",
        "{not json",
        json.dumps({"project": "GAMMA", "title": "Nowhere"}),
        json.dumps({"project": "ALPHA", "title": "Who?", "watchers": ["ghost"]}),
        json.dumps({"project": "ALPHA", "title": "Odd", "colour": "red"}),
        json.dumps({"project": "ALPHA", "title": "Bad status", "status": "shipped"}),
        json.dumps({"project": "ALPHA", "title": "Second", "status": "todo"}),
    ]
    report = await importer.import_work_items(workspace.slug, "ivy", lines, source="import")
    assert len(report.created) == 2 and all(key.startswith("ALPHA-") for key in report.created)
    reasons = dict(report.rejected)
    assert sorted(reasons) == [3, 4, 5, 6, 7]
    assert reasons[3].startswith("not valid JSON")
    assert reasons[4] == "unknown project 'GAMMA'"
    assert reasons[5] == "unknown watcher 'ghost'"
    assert reasons[6].startswith("unknown keys: colour")
    assert reasons[7].startswith("status:")
    listed, _ = await items.list_work_items(reader, project_id=workspace.projects["ALPHA"])
    assert sorted(item.title for item in listed) == ["First", "Second"]
    assert {item.title: item.watchers for item in listed}["First"] == (workspace.principals["ivy"],)


async def test_an_unknown_workspace_or_principal_is_refused_before_any_line(workspace: Workspace) -> None:
    await workspace.key("ivy", None)
    with pytest.raises(GroundworkError, match="No workspace"):
        await importer.import_work_items(f"{workspace.slug}-absent", "ivy", ["{}"])
    with pytest.raises(GroundworkError, match="No principal 'nobody'"):
        await importer.import_work_items(workspace.slug, "nobody", ["{}"])
