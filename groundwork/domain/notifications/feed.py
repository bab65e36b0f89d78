"""The live feed of a caller's own notifications, and bulk moves: their limits and the rules of their input.

A recipient's changes are numbered 1, 2, 3, ... in commit order; an event's id is that number. A client
resumes with `Last-Event-ID: n` and gets every change after n, as long as n is within the resume window
(changes are kept at least 24 hours); an id from before the window, or one the stream never sent, gets a
`reset` event: the client lists its inbox again and goes on from there.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from groundwork.domain.errors import FieldError, InvalidRequest, ValidationFailed
from groundwork.domain.notifications.inbox import COMMANDS, MAX_EXPECTED_VERSION, MAX_REASON
from groundwork.domain.notifications.snooze import SNOOZE

# Changes stay resumable at least this long (the worker purges older ones every hour).
RESUME_WINDOW = timedelta(hours=24)
# A stream's lease on its key's connection slots outlives the heartbeat that renews it by this much.
LEASE_GRACE = timedelta(seconds=45)
# At most this many changes are read from the database at once; a longer backlog is sent in batches.
STREAM_BATCH = 200
_MAX_EVENT_ID = 2**63 - 1

MAX_BULK_ITEMS = 100
BULK_COMMANDS = (*COMMANDS, SNOOZE.id)


def parse_last_event_id(value: str | None) -> int | None:
    """The change a client has seen (`Last-Event-ID`), or None; 400 `invalid_request` unless a whole number."""
    if value is None or not value.strip():
        return None
    text = value.strip()
    if not text.isdigit() or len(text) > 19 or int(text) > _MAX_EVENT_ID:
        raise InvalidRequest(
            "Invalid Last-Event-ID.",
            [FieldError("Last-Event-ID", "must be the id of an event this stream sent (a whole number)")],
        )
    return int(text)


@dataclass(frozen=True)
class BulkItem:
    """One notification of a bulk move, with the version the caller read."""

    id: str
    expected_version: int


def validate_bulk(command: Any, items: Any, reason: Any) -> tuple[str, list[BulkItem], str | None]:
    """A bulk move's command, items (1 to 100 distinct notifications) and reason; 422 naming each problem."""
    errors: list[FieldError] = []
    if command not in BULK_COMMANDS:
        errors.append(FieldError("command", f"must be one of {', '.join(BULK_COMMANDS)}"))
    if not isinstance(items, list) or not 1 <= len(items) <= MAX_BULK_ITEMS:
        errors.append(FieldError("items", f"must list 1 to {MAX_BULK_ITEMS} notifications"))
        items = []
    parsed: list[BulkItem] = []
    seen: set[str] = set()
    for index, item in enumerate(items):
        notification_id = item.get("id") if isinstance(item, dict) else None
        version = item.get("expected_version") if isinstance(item, dict) else None
        if not isinstance(notification_id, str) or not notification_id:
            errors.append(FieldError(f"items[{index}].id", "is required: a notification id"))
            continue
        if isinstance(version, bool) or not isinstance(version, int) or not 1 <= version <= MAX_EXPECTED_VERSION:
            errors.append(FieldError(f"items[{index}].expected_version", "is required and must be a positive integer"))
            continue
        if notification_id in seen:
            errors.append(FieldError(f"items[{index}].id", "names a notification already listed; list each once"))
            continue
        seen.add(notification_id)
        parsed.append(BulkItem(notification_id, version))
    if reason is not None and (not isinstance(reason, str) or len(reason) > MAX_REASON):
        errors.append(FieldError("reason", f"must be a string of at most {MAX_REASON} characters"))
    if errors:
        raise ValidationFailed("Invalid bulk move.", errors)
    return str(command), parsed, reason or None
