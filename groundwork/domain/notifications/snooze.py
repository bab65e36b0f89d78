"""Snooze: a notification leaves the default inbox until a time, then comes back; its status never changes.

A snooze ends at `until` (an instant) or after `for` (an ISO 8601 duration counted from now), at least a
second and at most 90 days ahead. Any notification that is not dismissed may be snoozed, a snoozed one
again (the new end replaces the old); a snoozed one may be unsnoozed. Snoozing hides a notification from
the caller's attention, so it needs `confirm: true`, as acknowledge and dismiss do; unsnoozing, which
brings it back, does not.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from groundwork.domain.errors import FieldError, ValidationFailed
from groundwork.domain.times import TIMESTAMP_ACCEPTED
from groundwork.domain.work_items import parse_version

MIN_SNOOZE = timedelta(seconds=1)
MAX_SNOOZE = timedelta(days=90)
MAX_DURATION_TEXT = 64
DURATION_ACCEPTED = "an ISO 8601 duration in weeks, days, hours, minutes or seconds, such as PT30M, PT1H30M or P1D"

# Weeks, days and a time part; years and months are refused: their length depends on the calendar.
_DURATION = re.compile(
    r"P(?:(?P<weeks>\d+)W)?(?:(?P<days>\d+)D)?"
    r"(?:T(?:(?P<hours>\d+)H)?(?:(?P<minutes>\d+)M)?(?:(?P<seconds>\d+(?:[.,]\d{1,6})?)S)?)?"
)


@dataclass(frozen=True)
class SnoozeCommand:
    """A snooze command as `allowedActions` lists it."""

    id: str
    label: str
    requires_confirmation: bool
    event_type: str = "notification.updated"


SNOOZE = SnoozeCommand("snooze", "Snooze", True)
UNSNOOZE = SnoozeCommand("unsnooze", "Bring back now", False)
SNOOZE_COMMANDS: dict[str, SnoozeCommand] = {SNOOZE.id: SNOOZE, UNSNOOZE.id: UNSNOOZE}
# The move the timer makes when a snooze ends (never a caller's command).
WAKE = "wake"


def parse_duration(text: str) -> timedelta:
    """An ISO 8601 duration (`PT30M`, `P1DT2H`, `P2W`); ValueError naming what is accepted otherwise."""
    match = _DURATION.fullmatch(text.strip().upper()) if len(text) <= MAX_DURATION_TEXT else None
    if match is None or not any(match.groupdict().values()) or text.strip().upper().endswith("T"):
        raise ValueError(f"must be {DURATION_ACCEPTED}")
    parts = {name: float((value or "0").replace(",", ".")) for name, value in match.groupdict().items()}
    try:
        return timedelta(**parts)
    except OverflowError:
        raise ValueError(f"is too long: at most {MAX_SNOOZE.days} days") from None


def snooze_end(until: Any, for_: Any, now: datetime) -> datetime:
    """When a snooze ends: `until`, or `now` + `for` (exactly one of them), 1 second to 90 days ahead; 422 else."""
    if (until is None) == (for_ is None):
        message = "give `until` or `for`, not both" if until is not None else "give `until` (a time) or `for`"
        raise ValidationFailed("Invalid snooze.", [FieldError("until", message)])
    path = "until" if until is not None else "for"
    try:
        if until is not None:
            if not isinstance(until, str):
                raise ValueError(f"must be {TIMESTAMP_ACCEPTED}")
            end = parse_version(until)
        else:
            if not isinstance(for_, str):
                raise ValueError(f"must be {DURATION_ACCEPTED}")
            end = now + parse_duration(for_)
    except (ValueError, OverflowError) as exc:
        text = str(exc) if isinstance(exc, ValueError) else f"is too long: at most {MAX_SNOOZE.days} days"
        raise ValidationFailed("Invalid snooze.", [FieldError(path, text)]) from None
    if end - now < MIN_SNOOZE:
        raise ValidationFailed("Invalid snooze.", [FieldError(path, "must end at least 1 second from now")])
    if end - now > MAX_SNOOZE:
        raise ValidationFailed("Invalid snooze.", [FieldError(path, f"must end within {MAX_SNOOZE.days} days")])
    return end


def may_snooze(status: str) -> bool:
    """Any notification but a dismissed one may be snoozed (again, to move its end)."""
    return status != "dismissed"


def snooze_actions(status: str, snoozed: bool) -> list[SnoozeCommand]:
    """The snooze commands open to a notification: snooze unless dismissed, unsnooze while snoozed."""
    actions = [SNOOZE] if may_snooze(status) else []
    return [*actions, UNSNOOZE] if snoozed else actions


def snooze_refusal(command: str, status: str, snoozed: bool) -> str | None:
    """Why `command` (snooze or unsnooze) cannot run now, or None when it can."""
    if command == SNOOZE.id and not may_snooze(status):
        return "A dismissed notification cannot be snoozed."
    if command == UNSNOOZE.id and not snoozed:
        return "The notification is not snoozed."
    return None
