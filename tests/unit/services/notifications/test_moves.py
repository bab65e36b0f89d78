"""services/notifications/moves: a move names exactly the fields it changed, its live-feed entry carries the state after
it, and a snooze's timer moves on nobody's behalf."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta

from groundwork.persistence.repositories.notifications.inbox import NotificationRow
from groundwork.services.notifications.moves import Actor, Move, change_of

NOW = datetime(2026, 11, 28, 9, 0, tzinfo=UTC)
UNREAD = NotificationRow(
    id="ntf_1", workspace_id="ws_1", recipient_id="prn_bob", event_id="evt_1", event_type="message.posted",
    source_kind="message", source_external_id="msg_1", resource_type="message_thread", resource_id="thr_1",
    title="Alice wrote", body="Review?", status="unread", version=1, created_at=NOW, updated_at=NOW,
)  # fmt: skip


def test_a_status_move_names_status_and_a_snooze_names_snoozed_until_only() -> None:
    read = replace(UNREAD, status="read", version=2, updated_at=NOW + timedelta(seconds=1))
    assert Move(UNREAD, read, "read", "notification.updated").changed_fields == ["status"]
    snoozed = replace(UNREAD, version=2, snoozed_until=NOW + timedelta(hours=1), snooze_id="snz_1")
    assert Move(UNREAD, snoozed, "snooze", "notification.updated").changed_fields == ["snoozedUntil"]
    both = replace(snoozed, status="read")
    assert Move(UNREAD, both, "read", "notification.updated").changed_fields == ["status", "snoozedUntil"]


def test_the_live_feed_entry_carries_the_state_after_the_move() -> None:
    after = replace(UNREAD, status="acknowledged", version=3, updated_at=NOW + timedelta(minutes=1))
    change = change_of(Move(UNREAD, after, "acknowledge", "notification.acknowledged"))
    assert (change.recipient_id, change.notification_id, change.status, change.version) == (
        "prn_bob",
        "ntf_1",
        "acknowledged",
        3,
    )
    assert change.changed_fields == ("status",) and change.occurred_at == after.updated_at


def test_a_timer_moves_on_nobody_s_behalf_and_a_person_on_their_own() -> None:
    assert Actor("prn_bob", "ws_1", "timer").event_actor is None
    assert Actor("prn_bob", "ws_1", "rest").event_actor == "prn_bob"
