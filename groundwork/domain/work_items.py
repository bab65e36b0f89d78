"""Canonical work items: the enhanceable fields, statuses, versions and the rules for their values."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from groundwork.domain.errors import FieldError
from groundwork.domain.times import TIMESTAMP_ACCEPTED, format_timestamp

# The keys of `fields`, by the names drafts use.
NUMBER_FIELDS = ("estimate",)
FIELD_NAMES = (
    "description",
    "requirements",
    "design_notes",
    "implementation_plan",
    "acceptance_criteria",
    "test_plan",
    "estimate",
    "risks",
)
STATUSES = ("backlog", "todo", "in_progress", "in_review", "done")

MAX_TITLE = 500
MAX_TEXT_FIELD = 50_000
MAX_SPRINT = 100
MAX_WATCHERS = 100
MAX_ESTIMATE = 1000


@dataclass(frozen=True)
class WorkItem:
    """A canonical work item as the system of record holds it."""

    id: str
    key: str
    title: str
    status: str
    sprint: str | None
    project_id: str
    workspace_id: str
    version: datetime
    watchers: tuple[str, ...]
    fields: dict[str, Any] = field(default_factory=dict)
    # Where an imported item came from: {kind: github|jira, externalId, url, labels}; None when made here.
    source: dict[str, Any] | None = None


def format_version(version: datetime) -> str:
    """Render a version as DESIGN.md fixes it: `2026-11-22T01:27:24.123456Z`."""
    return format_timestamp(version)


def parse_version(text: str) -> datetime:
    """Parse any ISO 8601 spelling with an explicit offset into a UTC instant; ValueError otherwise, whose words
    (`must be ...`) follow the field's name in a refusal."""
    if not isinstance(text, str) or not text.strip():
        raise ValueError(f"must be {TIMESTAMP_ACCEPTED}")
    spelled = text.strip()
    if spelled.endswith(("Z", "z")):
        spelled = spelled[:-1] + "+00:00"
    try:
        parsed = datetime.fromisoformat(spelled)
    except ValueError:
        raise ValueError(f"must be {TIMESTAMP_ACCEPTED}") from None
    if parsed.tzinfo is None:
        raise ValueError(f"needs its UTC offset (a trailing Z): must be {TIMESTAMP_ACCEPTED}")
    try:
        return parsed.astimezone(UTC)
    except OverflowError:
        raise ValueError(f"is out of range: must be {TIMESTAMP_ACCEPTED}") from None


def full_fields(values: dict[str, Any]) -> dict[str, Any]:
    """Every enhanceable field, absent ones as null, in the canonical order."""
    return {name: values.get(name) for name in FIELD_NAMES}


def validate_fields(values: dict[str, Any], path: str = "fields") -> list[FieldError]:
    """Check the values of `fields`: known names, Markdown strings, a non-negative estimate."""
    errors: list[FieldError] = []
    for name, value in values.items():
        where = f"{path}.{name}"
        if name not in FIELD_NAMES:
            errors.append(FieldError(where, f"unknown field; allowed: {', '.join(FIELD_NAMES)}"))
        elif value is None:
            continue
        elif name in NUMBER_FIELDS:
            if isinstance(value, bool) or not isinstance(value, int | float):
                errors.append(FieldError(where, "must be a number of story points"))
            elif not 0 <= value <= MAX_ESTIMATE:
                errors.append(FieldError(where, f"must be between 0 and {MAX_ESTIMATE}"))
        elif not isinstance(value, str):
            errors.append(FieldError(where, "must be a Markdown string"))
        elif len(value) > MAX_TEXT_FIELD:
            errors.append(FieldError(where, f"must be at most {MAX_TEXT_FIELD} characters"))
    return errors


def validate_attributes(
    *,
    title: Any = None,
    status: Any = None,
    sprint: Any = None,
    watchers: Any = None,
    title_required: bool = False,
) -> list[FieldError]:
    """Check title, status, sprint and watchers; `None` means not given (sprint: use validate on set)."""
    errors: list[FieldError] = []
    if title is None:
        if title_required:
            errors.append(FieldError("title", "is required"))
    elif not isinstance(title, str) or not title.strip():
        errors.append(FieldError("title", "must be a non-empty string"))
    elif len(title) > MAX_TITLE:
        errors.append(FieldError("title", f"must be at most {MAX_TITLE} characters"))
    if status is not None and status not in STATUSES:
        errors.append(FieldError("status", f"must be one of {', '.join(STATUSES)}"))
    if sprint is not None and (not isinstance(sprint, str) or len(sprint) > MAX_SPRINT):
        errors.append(FieldError("sprint", f"must be a string of at most {MAX_SPRINT} characters"))
    if watchers is not None:
        if not isinstance(watchers, list) or not all(isinstance(w, str) for w in watchers):
            errors.append(FieldError("watchers", "must be an array of principal ids"))
        elif len(watchers) > MAX_WATCHERS:
            errors.append(FieldError("watchers", f"must have at most {MAX_WATCHERS} entries"))
    return errors


def field_changes(before: dict[str, Any], after: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """The `{name: {from, to}}` record of what differs between two attribute maps."""
    return {
        name: {"from": before.get(name), "to": after.get(name)} for name in after if before.get(name) != after.get(name)
    }
