"""Jira's "Export CSV (all fields)": one row per issue, `Sprint` and `Labels` repeated as columns.

Columns read: `Issue key`, `Summary`, `Description`, `Status`, `Issue Type`, `Priority`, `Assignee`,
`Reporter`, `Created`, `Updated`, every `Sprint` and `Labels` column, and the story points column
(`Custom field (Story Points)` or `Story Points`). Times as Jira writes them (`28/Nov/26 9:05 AM`) or ISO 8601.
"""

from __future__ import annotations

import csv
import io
from datetime import datetime

from groundwork.domain.tracker_imports.records import ExternalItem, ParsedExport, UnreadableExport

POINTS_COLUMNS = ("Custom field (Story Points)", "Story Points")
REQUIRED = ("Issue key", "Summary", "Status")
JIRA_TIME_FORMATS = ("%d/%b/%y %I:%M %p", "%d/%b/%Y %I:%M %p", "%d/%b/%y %H:%M", "%Y-%m-%d %H:%M")


def parse_jira_time(text: str) -> datetime | None:
    """A time as Jira writes it in exports, or ISO 8601; None for an empty cell; ValueError otherwise."""
    value = text.strip()
    if not value:
        return None
    for pattern in JIRA_TIME_FORMATS:
        try:
            return datetime.strptime(value, pattern)
        except ValueError:
            continue
    try:
        return datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        raise ValueError(f"{value!r} is not a time Jira writes (28/Nov/26 9:05 AM, or ISO 8601)") from None


def _points(cell: str | None) -> float | None:
    if cell is None or not cell.strip():
        return None
    try:
        points = float(cell.strip())
    except ValueError:
        raise ValueError(f"story points {cell!r} is not a number") from None
    if points < 0:
        raise ValueError(f"story points {cell!r} is negative")
    return points


def _row(number: int, header: list[str], row: list[str]) -> ExternalItem:
    if len(row) != len(header):
        raise ValueError(f"has {len(row)} cells where the header has {len(header)}")
    cells: dict[str, list[str]] = {}
    for name, value in zip(header, row, strict=True):
        cells.setdefault(name.strip(), []).append(value)

    def one(name: str) -> str:
        return (cells.get(name) or [""])[0].strip()

    def many(name: str) -> tuple[str, ...]:
        return tuple(v.strip() for v in cells.get(name, []) if v.strip())

    for name in REQUIRED:
        if not one(name):
            raise ValueError(f"{name} is empty")
    parse_jira_time(one("Created"))
    updated = parse_jira_time(one("Updated"))
    points = next((_points(one(c)) for c in POINTS_COLUMNS if one(c)), None)
    sprints = many("Sprint")
    people = tuple(dict.fromkeys(p for p in (one("Assignee"), one("Reporter")) if p))
    return ExternalItem(
        position=number,
        external_id=one("Issue key"),
        url=None,
        title=one("Summary"),
        raw_status=one("Status"),
        description=one("Description") or None,
        estimate=points,
        labels=many("Labels"),
        sprint=sprints[-1] if sprints else None,  # the latest sprint the issue was in
        people=people,
        updated_at=updated,
    )


def parse_jira(text: str) -> ParsedExport:
    """Read a Jira CSV export; each bad row is refused with its row number (the header is row 1)."""
    reader = csv.reader(io.StringIO(text.lstrip("\ufeff")))
    try:
        header = next(reader)
    except StopIteration:
        raise UnreadableExport("the file is empty") from None
    except csv.Error as exc:
        raise UnreadableExport(f"not CSV ({exc})") from None
    if missing := [name for name in REQUIRED if name not in [h.strip() for h in header]]:
        raise UnreadableExport(f"not a Jira export: no column {', '.join(missing)}")
    parsed = ParsedExport()
    number = 1
    while True:
        try:
            row = next(reader)
        except StopIteration:
            break
        except csv.Error as exc:
            number += 1
            parsed.rejected.append((number, f"not CSV ({exc})"))
            continue
        number += 1
        if not any(cell.strip() for cell in row):
            continue
        try:
            parsed.items.append(_row(number, header, row))
        except ValueError as exc:
            parsed.rejected.append((number, str(exc)))
    return parsed
