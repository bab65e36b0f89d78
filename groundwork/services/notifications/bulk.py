"""Bulk moves: one command (`read`, `acknowledge`, `dismiss`, `snooze`) on up to 100 of the caller's
notifications, as one operation, each item on its own.

One transaction locks the listed notifications (in id order), checks each item as the single command
would (its own notification, its `expected_version`, the lifecycle table or the snooze rule), moves the
items that pass and records one operation, with one audit entry, event and feed change per move. An item
that fails changes nothing and says why (`not_found`, `version_conflict` with `current_version`,
`invalid_transition` with `allowed_actions`); the others move. A request without `confirm: true` for a
command that needs it moves nothing. The per-item answer is kept with the operation, so a retry with the
same Idempotency-Key after a lost answer gets the same answer and moves nothing twice.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from groundwork.domain.enhancement.model import ConfirmationRequired
from groundwork.domain.errors import FieldError, GroundworkError, NotFound, ValidationFailed
from groundwork.domain.notifications.feed import validate_bulk
from groundwork.domain.notifications.inbox import (
    COMMANDS,
    SINK_COMMANDS,
    check_command,
    check_snooze_confirmation,
    check_version,
)
from groundwork.domain.notifications.snooze import SNOOZE, snooze_end
from groundwork.domain.tenancy.connected_apps import check_field_authority, check_sink_command
from groundwork.domain.tenancy.principals import Principal
from groundwork.domain.times import timestamp
from groundwork.persistence import db
from groundwork.persistence.repositories.notifications import inbox as repo
from groundwork.persistence.repositories.notifications import moves
from groundwork.persistence.repositories.notifications.inbox import NotificationRow
from groundwork.platform.idempotency import request_results
from groundwork.services.notifications.inbox import actor, sink_only
from groundwork.services.notifications.moves import Move, record_moves
from groundwork.services.notifications.snoozing import check_snooze_move, snooze_rows

RESULT = "notification_bulk"


@dataclass(frozen=True)
class BulkResult:
    """A bulk move's answer: its operation and one entry per item, in the order the items were given."""

    operation_id: str
    command: str
    items: list[dict[str, Any]]

    def answer(self) -> dict[str, Any]:
        """The REST answer's `data`."""
        return {"operation_id": self.operation_id, "command": self.command, "items": self.items}


def _failed(notification_id: str, error: GroundworkError) -> dict[str, Any]:
    return {
        "id": notification_id,
        "moved": False,
        "error": {"code": error.code, "message": error.detail, **error.extra},
    }


def _check_item(principal: Principal, command: str, row: NotificationRow, expected: int) -> None:
    """The single command's checks on one item, raising its coded error."""
    if command == SNOOZE.id:
        check_version(row.version, expected)
        check_snooze_move(principal, command, row, "rest")
    else:
        check_command(
            command,
            row.status,
            row.version,
            expected,
            sink_only=sink_only(principal, "rest"),
            snoozed=row.snoozed_until is not None,
        )


def _check_confirmation(command: str, confirm: Any, until: datetime | None, count: int) -> None:
    if until is not None:
        check_snooze_confirmation(confirm, until, None)
    elif COMMANDS[command].requires_confirmation and confirm is not True:
        move = COMMANDS[command]
        raise ConfirmationRequired(
            f"`{command}` changes {count} notification(s) from {move.from_status} to {move.to_status}; send the "
            "same request with `confirm: true`.",
            extra={"command": command, "count": count},
        )


async def _earlier(principal: Principal) -> BulkResult | None:
    """The answer an earlier attempt of this same request recorded (its answer was lost), if any."""
    operation_id = await request_results.earlier_result(RESULT)
    operation = await moves.get_operation(principal.id, operation_id) if operation_id else None
    if operation is None or operation.result is None:
        return None
    return BulkResult(operation.id, operation.command.removeprefix("bulk_"), operation.result)


async def bulk_move(
    principal: Principal,
    command: Any,
    items: Any,
    *,
    confirm: Any = None,
    reason: Any = None,
    until: Any = None,
    for_: Any = None,
    via: str,
    now: datetime | None = None,
) -> BulkResult:
    """Run one command on each listed notification of the caller, as one operation; each item on its own."""
    name, listed, why = validate_bulk(command, items, reason)
    end: datetime | None = None
    if name == SNOOZE.id:
        end = snooze_end(until, for_, now or datetime.now(UTC))
    elif until is not None or for_ is not None:
        path = "until" if until is not None else "for"
        raise ValidationFailed("Invalid bulk move.", [FieldError(path, "is taken by the snooze command only")])
    check_sink_command(principal, name, SINK_COMMANDS)
    check_field_authority(principal, ["status"])
    earlier = await _earlier(principal)
    if earlier is not None:
        return earlier
    _check_confirmation(name, confirm, end, len(listed))
    async with db.transaction():
        found = {r.id: r for r in await repo.lock_notifications(principal.id, [i.id for i in listed])}
        outcome: dict[str, dict[str, Any]] = {}
        passed: list[NotificationRow] = []
        for item in listed:
            row = found.get(item.id)
            try:
                if row is None or row.workspace_id != principal.workspace_id:
                    raise NotFound("No such notification.")
                _check_item(principal, name, row, item.expected_version)
            except GroundworkError as error:
                outcome[item.id] = _failed(item.id, error)
                continue
            passed.append(row)
        if end is not None:
            after = await snooze_rows(passed, end) if passed else []
            event_type = SNOOZE.event_type
        else:
            after = await moves.move_many([r.id for r in passed], COMMANDS[name].to_status) if passed else []
            event_type = COMMANDS[name].event_type
        before = {r.id: r for r in passed}
        moved = [Move(before[a.id], a, name, event_type) for a in after]
        for m in moved:
            outcome[m.after.id] = {
                "id": m.after.id,
                "moved": True,
                "status": m.after.status,
                "version": m.after.version,
            }
            if end is not None:
                outcome[m.after.id]["snoozed_until"] = timestamp(m.after.snoozed_until)
        answer = [outcome[i.id] for i in listed]
        recorded = await record_moves(
            moved, actor(principal, via), operation_command=f"bulk_{name}", reason=why, result=answer
        )
        await request_results.record_result(RESULT, recorded.operation_id)
    return BulkResult(recorded.operation_id, name, answer)
