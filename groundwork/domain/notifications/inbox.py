"""Notifications: the lifecycle, its commands and their rules, sources, and what a notification says."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from groundwork.domain.enhancement.model import ConfirmationRequired
from groundwork.domain.errors import FieldError, GroundworkError, ValidationFailed, VersionConflict
from groundwork.domain.notifications.snooze import SnoozeCommand, snooze_actions
from groundwork.domain.times import TIMESTAMP_ACCEPTED, format_timestamp
from groundwork.domain.work_items import parse_version

SCOPE_READ = "notifications:read"
SCOPE_WRITE = "notifications:write"
SCOPE_OPERATE = "notifications:operate"

STATUSES = ("unread", "read", "acknowledged", "dismissed")
# The originating service of a notification (`source.kind`).
SOURCE_KINDS = ("work_item_enhancement", "webhooks", "context_engine", "messages")
# Through which door a command came. `demo` is the seed of `groundwork up --demo`, never a caller; `timer` is
# a snooze's end bringing a notification back.
VIA = ("rest", "graphql", "mcp", "email", "chat", "demo", "timer")
SINK_VIA = ("email", "chat")

MAX_REASON = 500
MAX_TITLE = 200
MAX_BODY = 2000
MAX_EXCERPT = 280
MAX_READ_ALL = 1000
MAX_EXPECTED_VERSION = 2**31 - 1

# Outbox events that feed notifications but are not part of the public webhook catalogue: the
# contract names no message or endpoint-disabled events, and a message event on a workspace's
# webhook endpoints would leak private threads to whoever manages those endpoints.
MESSAGE_POSTED = "message.posted"
ENDPOINT_DISABLED = "webhook_endpoint.disabled"
INTERNAL_EVENT_TYPES = (MESSAGE_POSTED, ENDPOINT_DISABLED)

# Every event type a notification can come from; preferences are kept per type and channel.
NOTIFYING_EVENT_TYPES = (
    "work_item_enhancement.completed",
    "work_item_enhancement.failed",
    "work_item_enhancement.applied",
    ENDPOINT_DISABLED,
    MESSAGE_POSTED,
    "context_engine.entry_superseded",
)


@dataclass(frozen=True)
class Command:
    """A lifecycle command: the one move it makes, whether it needs `confirm: true`, its event."""

    id: str
    from_status: str
    to_status: str
    label: str
    requires_confirmation: bool
    event_type: str


COMMANDS: dict[str, Command] = {
    c.id: c
    for c in (
        Command("read", "unread", "read", "Mark as read", False, "notification.updated"),
        Command("acknowledge", "read", "acknowledged", "Acknowledge", True, "notification.acknowledged"),
        Command("dismiss", "acknowledged", "dismissed", "Dismiss", True, "notification.updated"),
    )
}
# A requested outcome (GraphQL / MCP drafts) names the status; the command that reaches it.
OUTCOME_COMMANDS: dict[str, str] = {c.to_status: c.id for c in COMMANDS.values()}
# What an action sink (e-mail, chat, a `deliver` app) may do: never dismiss (the spec's open decision).
SINK_COMMANDS = frozenset({"read", "acknowledge"})


class InvalidTransition(GroundworkError):
    """The command is not allowed from the notification's current status."""

    status = 409
    code = "invalid_transition"
    title = "Invalid transition"

    def __init__(self, command: str, current_status: str, allowed: list[str], detail: str | None = None) -> None:
        super().__init__(
            detail or f"`{command}` is not allowed while the notification is {current_status}.",
            extra={"current_status": current_status, "allowed_actions": allowed},
        )


def next_command(status: str) -> Command | None:
    """The one command the table allows from `status` (None once dismissed)."""
    return next((c for c in COMMANDS.values() if c.from_status == status), None)


def allowed_actions(
    status: str, *, may_operate: bool, sink_only: bool = False, snoozed: bool = False
) -> list[Command | SnoozeCommand]:
    """Exactly what the caller may do next: the next command of the table, then snooze or unsnooze, if it holds
    the scope and may issue them (an action sink only reads and acknowledges)."""
    if not may_operate:
        return []
    command = next_command(status)
    moves: list[Command | SnoozeCommand] = [] if command is None else [command]
    if sink_only:
        return [c for c in moves if c.id in SINK_COMMANDS]
    return moves + snooze_actions(status, snoozed)


def check_version(version: int, expected_version: int) -> None:
    """A stale `expected_version` is 409 `version_conflict` with the current version."""
    if expected_version != version:
        raise VersionConflict(
            f"The notification is at version {version}, not {expected_version}; read it again.", version
        )


def check_command(
    command_id: str, status: str, version: int, expected_version: int, *, sink_only: bool, snoozed: bool = False
) -> Command:
    """The command to run, or the coded error: stale version first, then a move the table forbids."""
    check_version(version, expected_version)
    command = COMMANDS[command_id]
    if command.from_status != status:
        allowed = allowed_actions(status, may_operate=True, sink_only=sink_only, snoozed=snoozed)
        raise InvalidTransition(command_id, status, [c.id for c in allowed])
    return command


def check_confirmation(command: Command, confirm: Any, notification_id: str) -> None:
    """Acknowledge and dismiss need `confirm: true`; the error names the exact move to confirm."""
    if command.requires_confirmation and confirm is not True:
        raise ConfirmationRequired(
            f"`{command.id}` changes the notification from {command.from_status} to {command.to_status}; "
            "send the same request with `confirm: true`.",
            extra={
                "notification_id": notification_id,
                "command": command.id,
                "from_status": command.from_status,
                "to_status": command.to_status,
            },
        )


def check_snooze_confirmation(confirm: Any, until: datetime, notification_id: str | None) -> None:
    """Snoozing hides a notification until `until`: it needs `confirm: true`, and the error says until when."""
    if confirm is not True:
        what = "the notification" if notification_id else "the notifications"
        when = format_timestamp(until)
        raise ConfirmationRequired(
            f"`snooze` hides {what} from the inbox until {when}; send the same request with `confirm: true`.",
            extra={"command": "snooze", "until": when}
            | ({"notification_id": notification_id} if notification_id else {}),
        )


def validate_command_input(expected_version: Any, reason: Any) -> tuple[int, str | None]:
    """`expected_version` (a positive integer, required) and `reason` (optional, at most 500 characters)."""
    errors = []
    if isinstance(expected_version, bool) or not isinstance(expected_version, int):
        errors.append(FieldError("expected_version", "is required and must be an integer"))
    elif not 1 <= expected_version <= MAX_EXPECTED_VERSION:
        errors.append(FieldError("expected_version", "must be a positive integer"))
    if reason is not None and not isinstance(reason, str):
        errors.append(FieldError("reason", "must be a string"))
    elif isinstance(reason, str) and len(reason) > MAX_REASON:
        errors.append(FieldError("reason", f"at most {MAX_REASON} characters"))
    if errors:
        raise ValidationFailed("Invalid command.", errors)
    return int(expected_version), (reason or None)


def parse_time(value: Any, path: str) -> datetime:
    """An ISO 8601 time with an offset (as every time Groundwork writes); a 422 otherwise."""
    if not isinstance(value, str):
        raise ValidationFailed("Invalid time.", [FieldError(path, f"must be {TIMESTAMP_ACCEPTED}")])
    try:
        return parse_version(value)
    except ValueError as exc:
        raise ValidationFailed("Invalid time.", [FieldError(path, str(exc))]) from None


# ---------------------------------------------------------------------------------------------- content


@dataclass(frozen=True)
class Content:
    """What a notification says and what it is about: title, short Markdown body, resource and source."""

    title: str
    body: str
    source_kind: str
    source_external_id: str
    resource_type: str
    resource_id: str


def _clip(text: str, limit: int) -> str:
    text = " ".join(text.split()) if "\n" not in text else text.strip()
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def _content(title: str, body: str, **rest: str) -> Content:
    # A title is one line wherever it goes (an e-mail subject, a chat message's first line).
    return Content(title=_clip(" ".join(title.split()), MAX_TITLE), body=_clip(body, MAX_BODY), **rest)


def run_finished(
    *,
    run_id: str,
    outcome: str,
    work_item_id: str,
    work_item_key: str,
    work_item_title: str,
    draft_count: int | None = None,
    artifact_count: int | None = None,
    action: str | None = None,
    error_code: str | None = None,
) -> Content:
    """A run you requested completed, or it (or one of its actions) failed."""
    if outcome == "completed":
        title = f"Enhancement run ready for review: {work_item_key} {work_item_title}"
        body = (
            f"{draft_count or 0} draft(s) and {artifact_count or 0} artifact(s) for **{work_item_key}** are ready "
            f"for review in run `{run_id}`. Nothing changes the work item until a draft is applied."
        )
    else:
        what = f"The `{action}` action" if action else "The run"
        title = f"Enhancement run failed: {work_item_key} {work_item_title}"
        body = f"{what} of run `{run_id}` on **{work_item_key}** failed (`{error_code or 'unknown'}`)."
    return _content(
        title,
        body,
        source_kind="work_item_enhancement",
        source_external_id=run_id,
        resource_type="work_item_enhancement_run",
        resource_id=run_id,
    )


def drafts_applied(
    *, run_id: str, work_item_id: str, work_item_key: str, work_item_title: str, applied_count: int, requester: bool
) -> Content:
    """Drafts were applied to a work item: the requester's run, or an item the recipient watches."""
    why = "from your enhancement run" if requester else "to a work item you watch"
    return _content(
        f"Drafts applied: {work_item_key} {work_item_title}",
        f"{applied_count} draft(s) {why} were applied to **{work_item_key}** (run `{run_id}`).",
        source_kind="work_item_enhancement",
        source_external_id=run_id,
        resource_type="work_item",
        resource_id=work_item_id,
    )


_DISABLED_WHY = {
    "gone": "the receiver answered 410 Gone",
    "failing": "every delivery failed for too long",
    "manual": "it was disabled by hand",
}


def endpoint_disabled(*, endpoint_id: str, url: str, reason: str) -> Content:
    """A webhook endpoint of the workspace was disabled."""
    return _content(
        "Webhook endpoint disabled",
        f"The webhook endpoint `{endpoint_id}` ({url}) was disabled because {_DISABLED_WHY.get(reason, reason)}. "
        "Nothing more is sent to it until it is enabled again.",
        source_kind="webhooks",
        source_external_id=endpoint_id,
        resource_type="webhook_endpoint",
        resource_id=endpoint_id,
    )


def message_posted(*, thread_id: str, thread_title: str, message_id: str, sender_name: str, body: str) -> Content:
    """A new message in a thread the recipient takes part in."""
    return _content(
        f"New message from {sender_name}: {thread_title}",
        _clip(body, MAX_EXCERPT),
        source_kind="messages",
        source_external_id=message_id,
        resource_type="message_thread",
        resource_id=thread_id,
    )


def entry_superseded(
    *, entry_id: str, successor_id: str | None, project_key: str, term: str, contribution_type: str, restricted: bool
) -> Content:
    """A context entry of a project the recipient leads was superseded by a governed successor.

    A financial or staffing entry is named by its id and class only: a notification outlives the key
    that reads it, so it never carries restricted content.
    """
    what = f"a {contribution_type} entry" if restricted else f"the {contribution_type} entry “{term}”"
    successor = f" by `{successor_id}`" if successor_id else ""
    return _content(
        f"Context entry superseded in {project_key}" + ("" if restricted else f": {term}"),
        f"In **{project_key}**, {what} (`{entry_id}`) was superseded{successor}. "
        "Briefings and package lists now show its successor.",
        source_kind="context_engine",
        source_external_id=entry_id,
        resource_type="context_package",
        resource_id=entry_id,
    )


# ---------------------------------------------------------------------------------------------- digests


def digest_window(now: datetime, seconds: int) -> tuple[datetime, datetime]:
    """The UTC-aligned window of `seconds` holding `now` (hours start on the hour, days at midnight UTC)."""
    stamp = int(now.timestamp())
    start = stamp - stamp % seconds
    return datetime.fromtimestamp(start, UTC), datetime.fromtimestamp(start + seconds, UTC)
