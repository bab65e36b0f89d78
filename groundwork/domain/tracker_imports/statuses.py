"""How a tracker's statuses become canonical ones: a documented default map, overridden by the team's own."""

from __future__ import annotations

from groundwork.domain.work_items import STATUSES

# Keys are compared case-insensitively. GitHub: `open`, `closed`, or `closed:<state_reason>`.
DEFAULT_STATUS_MAPS: dict[str, dict[str, str]] = {
    "github": {"open": "todo", "closed": "done", "closed:completed": "done", "closed:not_planned": "done"},
    "jira": {
        "backlog": "backlog",
        "open": "todo",
        "to do": "todo",
        "selected for development": "todo",
        "reopened": "todo",
        "in progress": "in_progress",
        "in review": "in_review",
        "code review": "in_review",
        "review": "in_review",
        "done": "done",
        "closed": "done",
        "resolved": "done",
    },
}
# What a status neither map knows becomes (reported as a warning, so the team can map it).
UNMAPPED_STATUS = "backlog"


def checked_overrides(overrides: dict[str, str]) -> dict[str, str]:
    """A team's status map with its keys folded; ValueError naming a value that is not a canonical status."""
    bad = sorted({v for v in overrides.values() if v not in STATUSES})
    if bad:
        raise ValueError(f"status map values must be one of {', '.join(STATUSES)}; not {', '.join(map(repr, bad))}")
    return {str(k).strip().lower(): v for k, v in overrides.items()}


def canonical_status(kind: str, raw: str, overrides: dict[str, str]) -> tuple[str, bool]:
    """The canonical status of a tracker status, and whether a map knew it."""
    folded = raw.strip().lower()
    for table in (overrides, DEFAULT_STATUS_MAPS[kind]):
        if folded in table:
            return table[folded], True
        if ":" in folded and folded.split(":", 1)[0] in table:
            return table[folded.split(":", 1)[0]], True
    return UNMAPPED_STATUS, False
