"""Reading tracker exports: Jira's times and repeated columns, GitHub's pull requests, and the status maps."""

from __future__ import annotations

from datetime import datetime

import pytest

from groundwork.domain.tracker_imports.github import parse_github
from groundwork.domain.tracker_imports.jira import parse_jira, parse_jira_time
from groundwork.domain.tracker_imports.records import UnreadableExport
from groundwork.domain.tracker_imports.statuses import canonical_status, checked_overrides


def test_jira_times_are_read_as_jira_writes_them_and_as_iso() -> None:
    assert parse_jira_time("28/Nov/26 9:05 AM") == datetime(2026, 11, 28, 9, 5)
    assert parse_jira_time("28/Nov/26 9:05 PM") == datetime(2026, 11, 28, 21, 5)
    assert parse_jira_time("2026-11-28T09:05:00+00:00") is not None
    assert parse_jira_time("") is None
    with pytest.raises(ValueError, match="31/Foo/26"):
        parse_jira_time("31/Foo/26 9:05 AM")


def test_jira_repeated_sprint_and_label_columns_and_either_points_column() -> None:
    text = (
        "Issue key,Summary,Status,Sprint,Sprint,Labels,Labels,Story Points\n"
        "PAY-1,One,To Do,S1,S2,a,b,2.5\n"
        "PAY-2,Two,Done,,,,,x\n"
    )
    parsed = parse_jira(text)
    [item] = parsed.items
    assert (item.sprint, item.labels, item.estimate) == ("S2", ("a", "b"), 2.5)
    assert parsed.rejected == [(3, "story points 'x' is not a number")]


def test_a_file_that_is_no_export_is_refused_whole() -> None:
    with pytest.raises(UnreadableExport):
        parse_jira("a,b\n1,2\n")
    with pytest.raises(UnreadableExport):
        parse_github('{"number": 1}')


def test_github_pull_requests_are_counted_not_imported() -> None:
    parsed = parse_github(
        '[{"number": 1, "title": "Bug", "state": "open"},'
        ' {"number": 2, "title": "PR", "state": "open", "pull_request": {}}, "junk"]'
    )
    assert [i.external_id for i in parsed.items] == ["1"]
    assert parsed.pull_requests_skipped == 1 and parsed.rejected == [(3, "an entry must be a JSON object")]


def test_status_maps_fold_case_and_the_teams_map_wins() -> None:
    assert canonical_status("jira", "In Progress", {}) == ("in_progress", True)
    assert canonical_status("jira", "Blocked", {}) == ("backlog", False)
    assert canonical_status("jira", "Blocked", checked_overrides({"BLOCKED": "in_progress"})) == ("in_progress", True)
    assert canonical_status("github", "closed:duplicate", {}) == ("done", True)
    with pytest.raises(ValueError, match="started"):
        checked_overrides({"open": "started"})
