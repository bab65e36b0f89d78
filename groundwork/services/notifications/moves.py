"""Recording notification moves: one function for every command (lifecycle, snooze, unsnooze, bulk, a snooze's end).

In the caller's transaction, on rows it locked and changed: the operation (`op_`), one audit entry and
one event per move, the live feed's changes, the unread counters (unread and not snoozed), and the end
of any snooze a move ended. Nothing else writes these, so every door records a move the same way.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Any

from groundwork.domain.notifications.snooze import WAKE
from groundwork.domain.tenancy.principals import AppGrant
from groundwork.domain.times import format_timestamp
from groundwork.persistence.repositories.notifications import changes, moves, snoozes
from groundwork.persistence.repositories.notifications import inbox as repo
from groundwork.persistence.repositories.notifications.inbox import NotificationRow
from groundwork.persistence.repositories.platform import outbox


@dataclass(frozen=True)
class Move:
    """One notification before and after a command (`read`, ..., `snooze`, `unsnooze`, `wake`)."""

    before: NotificationRow
    after: NotificationRow
    command: str
    event_type: str

    @property
    def changed_fields(self) -> list[str]:
        """The resource fields the move changed, as `notification.updated` names them."""
        fields = ["status"] if self.before.status != self.after.status else []
        return fields + (["snoozedUntil"] if self.before.snoozed_until != self.after.snoozed_until else [])


@dataclass(frozen=True)
class Actor:
    """Who moves: a principal through a door (and its app), or a snooze's timer on its recipient's behalf."""

    id: str
    workspace_id: str
    via: str
    app: AppGrant | None = None

    @property
    def event_actor(self) -> str | None:
        """The envelope's `actor.id`: the caller, or nobody for a timer."""
        return None if self.via == "timer" else self.id


@dataclass(frozen=True)
class Recorded:
    """What recording produced: the operation and the audit id of each move, in the order given."""

    operation_id: str
    audit_ids: list[str]


def _event(move: Move, actor: Actor) -> dict[str, Any]:
    after = move.after
    occurred = format_timestamp(after.updated_at)
    if move.event_type == "notification.acknowledged":
        payload: dict[str, Any] = {
            "notification_id": after.id,
            "prior_status": move.before.status,
            "status": after.status,
            "occurred_at": occurred,
        }
    else:
        payload = {
            "notification_id": after.id,
            "changed_fields": move.changed_fields,
            "version": after.version,
            "occurred_at": occurred,
        }
    return {
        "type": move.event_type,
        "workspace_id": after.workspace_id,
        "resource_type": "notification",
        "resource_id": after.id,
        "actor_id": actor.event_actor,
        "payload": payload,
        "source": {"via": actor.via, "app_id": actor.app.id if actor.app else None},
        "occurred_at": after.updated_at,
        "project_id": None,
        # A notification is its recipient's alone: only the recipient's endpoints hear of it.
        "private_to": after.recipient_id,
    }


def change_of(move: Move) -> changes.NewChange:
    """The live feed's entry for a move."""
    after = move.after
    return changes.NewChange(
        recipient_id=after.recipient_id,
        notification_id=after.id,
        event_type=move.event_type,
        changed_fields=tuple(move.changed_fields),
        status=after.status,
        version=after.version,
        snoozed_until=after.snoozed_until,
        occurred_at=after.updated_at,
    )


async def record_moves(
    moved: list[Move],
    actor: Actor,
    *,
    operation_command: str,
    reason: str | None,
    result: list[dict[str, Any]] | None = None,
) -> Recorded:
    """Record moves already made on locked rows as one operation (call inside their transaction)."""
    app = actor.app
    operation = await moves.insert_operation(
        workspace_id=actor.workspace_id,
        actor_id=actor.id,
        command=operation_command,
        via=actor.via,
        app_id=app.id if app else None,
        notification_ids=[m.after.id for m in moved],
        result=result,
    )
    audit_ids = await moves.insert_audit(
        [
            moves.AuditEntry(
                m.after.id, m.command, m.before.status, m.after.status, m.after.version, m.after.snoozed_until
            )
            for m in moved
        ],
        operation_id=operation.id,
        actor_id=actor.id,
        via=actor.via,
        app_id=app.id if app else None,
        provenance=app.provenance if app else None,
        reason=reason,
    )
    await outbox.append_events([_event(m, actor) for m in moved])
    deltas: Counter[str] = Counter()
    for m in moved:
        deltas[m.after.recipient_id] += int(m.after.visible_unread) - int(m.before.visible_unread)
    await repo.adjust_unread({k: v for k, v in deltas.items() if v})
    await changes.append_changes([change_of(m) for m in moved])
    ended = [m.before.snooze_id for m in moved if m.before.snooze_id and m.before.snooze_id != m.after.snooze_id]
    if ended:
        await snoozes.end_snoozes(ended, "woken" if moved[0].command == WAKE else "ended")
    return Recorded(operation.id, audit_ids)
