"""Snooze and unsnooze a notification, and bring it back when its snooze ends.

A snooze is a move like the lifecycle commands (version check, audit, operation, event, live feed), in
one transaction that also records the snooze whose timer is to start: the outbox relay starts its
`NotificationSnoozeWorkflow` after the commit (`snooze_timers.py`), and the workflow's durable timer
calls `wake` at the snooze's end, across worker and Temporal restarts. A timer whose snooze was replaced
or ended since finds another (or no) snooze id on the notification and changes nothing.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from groundwork.domain.ids import new_id
from groundwork.domain.notifications.inbox import (
    SINK_COMMANDS,
    SINK_VIA,
    InvalidTransition,
    allowed_actions,
    check_snooze_confirmation,
    check_version,
    validate_command_input,
)
from groundwork.domain.notifications.snooze import SNOOZE, UNSNOOZE, WAKE, snooze_end, snooze_refusal
from groundwork.domain.tenancy.connected_apps import check_field_authority, check_sink_command
from groundwork.domain.tenancy.principals import Principal
from groundwork.persistence import db
from groundwork.persistence.repositories.notifications import inbox as repo
from groundwork.persistence.repositories.notifications import moves, snoozes
from groundwork.persistence.repositories.notifications.inbox import NotificationRow
from groundwork.platform.idempotency import request_results
from groundwork.services.notifications.inbox import (
    CommandResult,
    actor,
    earlier_move,
    locked_notification,
    sink_only,
)
from groundwork.services.notifications.moves import Actor, Move, record_moves


def check_snooze_move(principal: Principal, command: str, row: NotificationRow, via: str) -> None:
    """409 `invalid_transition` when `command` (snooze, unsnooze) cannot run on the notification now."""
    snoozed = row.snoozed_until is not None
    refusal = snooze_refusal(command, row.status, snoozed)
    if refusal is not None:
        allowed = allowed_actions(row.status, may_operate=True, sink_only=sink_only(principal, via), snoozed=snoozed)
        raise InvalidTransition(command, row.status, [c.id for c in allowed], refusal)


def _check_caller(principal: Principal, command: str, via: str) -> None:
    if via in SINK_VIA:
        raise ValueError(f"{via!r} cannot {command}")  # only our own action links use e-mail and chat
    check_sink_command(principal, command, SINK_COMMANDS)
    # An app's authority over a notification is its `status`: snoozing is part of that lifecycle.
    check_field_authority(principal, ["status"])


async def snooze_rows(rows: list[NotificationRow], until: datetime) -> list[NotificationRow]:
    """Snooze locked notifications until `until` and record each snooze whose timer the relay is to start."""
    rows = sorted(rows, key=lambda r: r.id)
    ids = [new_id("snz") for _ in rows]
    moved = await moves.snooze_many([r.id for r in rows], ids, until)
    await snoozes.insert_snoozes(
        [
            snoozes.SnoozeRow(
                id=snooze_id,
                notification_id=row.id,
                workspace_id=row.workspace_id,
                recipient_id=row.recipient_id,
                until=until,
                workflow_id=snoozes.snooze_workflow_id(snooze_id),
            )
            for snooze_id, row in zip(ids, rows, strict=True)
        ]
    )
    return moved


async def snooze_notification(
    principal: Principal,
    notification_id: str,
    *,
    expected_version: Any,
    until: Any = None,
    for_: Any = None,
    reason: Any = None,
    confirm: Any = None,
    via: str,
    now: datetime | None = None,
) -> CommandResult:
    """Hide one of the caller's notifications until `until` (or for the duration `for_`); it comes back then."""
    expected, why = validate_command_input(expected_version, reason)
    end = snooze_end(until, for_, now or datetime.now(UTC))
    _check_caller(principal, SNOOZE.id, via)
    earlier = await earlier_move(principal, notification_id)
    if earlier is not None:
        return earlier
    async with db.transaction():
        row = await locked_notification(principal, notification_id)
        check_version(row.version, expected)
        check_snooze_move(principal, SNOOZE.id, row, via)
        check_snooze_confirmation(confirm, end, notification_id)
        [after] = await snooze_rows([row], end)
        recorded = await record_moves(
            [Move(row, after, SNOOZE.id, SNOOZE.event_type)],
            actor(principal, via),
            operation_command=SNOOZE.id,
            reason=why,
        )
        await request_results.record_result("notification_move", recorded.audit_ids[0])
    return CommandResult(
        after.id, after.status, after.version, recorded.operation_id, recorded.audit_ids[0], SNOOZE.id, end
    )


async def unsnooze_notification(
    principal: Principal, notification_id: str, *, expected_version: Any, reason: Any = None, via: str
) -> CommandResult:
    """Bring one of the caller's snoozed notifications back now (its timer then finds nothing to do)."""
    expected, why = validate_command_input(expected_version, reason)
    _check_caller(principal, UNSNOOZE.id, via)
    earlier = await earlier_move(principal, notification_id)
    if earlier is not None:
        return earlier
    async with db.transaction():
        row = await locked_notification(principal, notification_id)
        check_version(row.version, expected)
        check_snooze_move(principal, UNSNOOZE.id, row, via)
        after = await moves.unsnooze(row.id)
        recorded = await record_moves(
            [Move(row, after, UNSNOOZE.id, UNSNOOZE.event_type)],
            actor(principal, via),
            operation_command=UNSNOOZE.id,
            reason=why,
        )
        await request_results.record_result("notification_move", recorded.audit_ids[0])
    return CommandResult(
        after.id, after.status, after.version, recorded.operation_id, recorded.audit_ids[0], UNSNOOZE.id
    )


async def wake(snooze_id: str) -> str:
    """End a snooze at its time (its timer's activity): `woken`, or `ended` when it was ended before (retry-safe)."""
    snooze = await snoozes.get_snooze(snooze_id)
    if snooze is None:
        return "ended"  # its notification is gone
    async with db.transaction():
        row = await repo.get_notification(snooze.recipient_id, snooze.notification_id, for_update=True)
        if row is None or row.snooze_id != snooze_id:
            return "ended"
        after = await moves.unsnooze(row.id)
        await record_moves(
            [Move(row, after, WAKE, SNOOZE.event_type)],
            Actor(snooze.recipient_id, row.workspace_id, "timer"),
            operation_command=WAKE,
            reason=None,
        )
    return "woken"
