"""GitHub Issues: the JSON array that the REST API's "list repository issues" returns (and `gh issue list --json`).

Fields read: `number`, `title`, `body`, `state`/`state_reason`, `labels[].name`, `assignees[].login`,
`milestone.title`, `created_at`, `updated_at`, `closed_at`, `html_url` (`url` from `gh`). Entries with
`pull_request` are pull requests: skipped and counted.
"""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

from groundwork.domain.tracker_imports.records import ExternalItem, ParsedExport, UnreadableExport


def _instant(value: Any, name: str) -> datetime | None:
    if value in (None, ""):
        return None
    try:
        return datetime.fromisoformat(str(value).replace("Z", "+00:00"))
    except ValueError:
        raise ValueError(f"{name} is not an ISO 8601 time: {value!r}") from None


def _names(values: Any, key: str, name: str) -> tuple[str, ...]:
    if values in (None, ""):
        return ()
    if not isinstance(values, list):
        raise ValueError(f"{name} must be a list")
    found = []
    for value in values:
        text = value.get(key) if isinstance(value, dict) else value if isinstance(value, str) else None
        if not isinstance(text, str) or not text:
            raise ValueError(f"{name} holds an entry without {key!r}")
        found.append(text)
    return tuple(found)


def _status(entry: dict[str, Any]) -> str:
    state = str(entry.get("state") or "").lower()
    if state not in ("open", "closed"):
        raise ValueError(f"state must be open or closed, not {entry.get('state')!r}")
    reason = entry.get("state_reason") or entry.get("stateReason")
    return f"{state}:{str(reason).lower()}" if state == "closed" and reason else state


def _item(position: int, entry: dict[str, Any]) -> ExternalItem:
    number = entry.get("number")
    if not isinstance(number, int) or isinstance(number, bool):
        raise ValueError("number is missing or not an integer")
    title = entry.get("title")
    if not isinstance(title, str) or not title.strip():
        raise ValueError("title is missing")
    body = entry.get("body")
    if body is not None and not isinstance(body, str):
        raise ValueError("body must be text")
    milestone = entry.get("milestone")
    if milestone is not None and not isinstance(milestone, dict):
        raise ValueError("milestone must be an object")
    _instant(entry.get("created_at", entry.get("createdAt")), "created_at")
    _instant(entry.get("closed_at", entry.get("closedAt")), "closed_at")
    return ExternalItem(
        position=position,
        external_id=str(number),
        url=entry.get("html_url") or entry.get("url"),
        title=title.strip(),
        raw_status=_status(entry),
        description=body or None,
        estimate=None,
        labels=_names(entry.get("labels"), "name", "labels"),
        sprint=(milestone or {}).get("title") or None,
        people=_names(entry.get("assignees"), "login", "assignees"),
        updated_at=_instant(entry.get("updated_at", entry.get("updatedAt")), "updated_at"),
    )


def parse_github(text: str) -> ParsedExport:
    """Read a GitHub issues export; each bad entry is refused with its position (1-based), the rest kept."""
    try:
        entries = json.loads(text)
    except json.JSONDecodeError as exc:
        raise UnreadableExport(f"not JSON ({exc.msg} at line {exc.lineno}, column {exc.colno})") from None
    if not isinstance(entries, list):
        raise UnreadableExport("a GitHub export is a JSON array of issues")
    parsed = ParsedExport()
    for position, entry in enumerate(entries, start=1):
        if not isinstance(entry, dict):
            parsed.rejected.append((position, "an entry must be a JSON object"))
            continue
        if entry.get("pull_request") is not None:
            parsed.pull_requests_skipped += 1
            continue
        try:
            parsed.items.append(_item(position, entry))
        except ValueError as exc:
            parsed.rejected.append((position, str(exc)))
    return parsed
