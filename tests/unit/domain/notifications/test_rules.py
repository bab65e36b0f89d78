"""Pure rules: the lifecycle table, preferences, app declarations, digest windows, key ring, action tokens."""

from __future__ import annotations

import asyncio
import base64
from datetime import UTC, datetime, timedelta

import aiosmtplib
import pytest

from groundwork.domain.enhancement.model import ConfirmationRequired
from groundwork.domain.errors import InsufficientScope, ValidationFailed, VersionConflict
from groundwork.domain.notifications.inbox import (
    COMMANDS,
    InvalidTransition,
    allowed_actions,
    check_command,
    check_confirmation,
    digest_window,
    message_posted,
    validate_command_input,
)
from groundwork.domain.notifications.preferences import Preferences, parse_preferences
from groundwork.domain.tenancy.connected_apps import (
    DIRECTION_SCOPES,
    AppDirectionForbidden,
    effective_scopes,
    scope_refusal,
    validate_declaration,
)
from groundwork.domain.tenancy.principals import AppGrant, Principal
from groundwork.domain.tenancy.scopes import ALL_SCOPES
from groundwork.platform.secrets.keyring import KeyRing, KeyRingError, ensure_key_file
from groundwork.services.notifications.actions import issue_token, verify_token
from groundwork.stack.smtp_sink import SmtpSink


@pytest.mark.parametrize(
    ("status", "expected"),
    [
        ("unread", ["read", "snooze"]),
        ("read", ["acknowledge", "snooze"]),
        ("acknowledged", ["dismiss", "snooze"]),
        ("dismissed", []),
    ],
)
def test_allowed_actions_follow_the_table_one_step_at_a_time_then_snooze(status: str, expected: list[str]) -> None:
    assert [c.id for c in allowed_actions(status, may_operate=True)] == expected
    assert allowed_actions(status, may_operate=False) == []


def test_a_snoozed_notification_offers_unsnooze_and_snoozing_again() -> None:
    assert [c.id for c in allowed_actions("read", may_operate=True, snoozed=True)] == [
        "acknowledge",
        "snooze",
        "unsnooze",
    ]


def test_a_sink_is_never_offered_dismiss_or_snooze() -> None:
    assert allowed_actions("acknowledged", may_operate=True, sink_only=True) == []
    assert [c.id for c in allowed_actions("read", may_operate=True, sink_only=True, snoozed=True)] == ["acknowledge"]


def test_check_command_reports_a_stale_version_before_a_forbidden_move() -> None:
    with pytest.raises(VersionConflict) as stale:
        check_command("dismiss", "unread", 3, 2, sink_only=False)
    assert stale.value.extra == {"current_version": 3}
    with pytest.raises(InvalidTransition) as forbidden:
        check_command("dismiss", "unread", 3, 3, sink_only=False)
    assert forbidden.value.extra == {"current_status": "unread", "allowed_actions": ["read", "snooze"]}
    assert check_command("read", "unread", 1, 1, sink_only=False) is COMMANDS["read"]


def test_only_acknowledge_and_dismiss_need_confirmation() -> None:
    check_confirmation(COMMANDS["read"], None, "notification_x")
    for name in ("acknowledge", "dismiss"):
        with pytest.raises(ConfirmationRequired):
            check_confirmation(COMMANDS[name], False, "notification_x")
        check_confirmation(COMMANDS[name], True, "notification_x")


@pytest.mark.parametrize("version", [None, "2", True, 0, -1, 2**31])
def test_expected_version_must_be_a_positive_integer(version: object) -> None:
    with pytest.raises(ValidationFailed):
        validate_command_input(version, None)


def test_message_notifications_quote_a_short_excerpt() -> None:
    content = message_posted(
        thread_id="thread_1", thread_title="T", message_id="msg_1", sender_name="Ann", body="word " * 200
    )
    assert len(content.body) <= 280 and content.body.endswith("…")


def test_preferences_in_app_always_and_channels_per_event_type() -> None:
    prefs = parse_preferences(
        {
            "channels": {"email": {"enabled": True, "address": "a@example.test"}},
            "events": {"message.posted": {"email": False}},
        },
        allow_private=False,
    )
    assert prefs.wants("message.posted", "in_app") and not prefs.wants("message.posted", "email")
    assert prefs.wants("work_item_enhancement.completed", "email")
    assert not prefs.wants("work_item_enhancement.completed", "chat")
    assert not Preferences(email_enabled=True).wants("message.posted", "email")  # no address, no e-mail
    with pytest.raises(ValidationFailed) as refused:
        parse_preferences(
            {"channels": {"chat": {"enabled": True, "webhook_url": "http://127.0.0.1/x"}}}, allow_private=False
        )
    assert refused.value.errors[0].path == "channels.chat.webhook_url"


def test_digest_windows_are_utc_aligned() -> None:
    start, end = digest_window(datetime(2026, 11, 23, 14, 37, 5, tzinfo=UTC), 3600)
    assert (start, end) == (datetime(2026, 11, 23, 14, tzinfo=UTC), datetime(2026, 11, 23, 15, tzinfo=UTC))
    start, _ = digest_window(datetime(2026, 11, 23, 23, 59, tzinfo=UTC), 86400)
    assert start == datetime(2026, 11, 23, tzinfo=UTC)


def test_an_app_declaration_must_fit_its_kind() -> None:
    declared = validate_declaration("Bot", "chat", "deliver", ["status", "status"], "bridge", "reject")
    assert declared.field_authority == ("status",)
    with pytest.raises(ValidationFailed) as wrong:
        validate_declaration("Bot", "assistant", "deliver", ["description"], "", "merge")
    assert {e.path for e in wrong.value.errors} == {"direction", "field_authority", "provenance", "conflict"}
    with pytest.raises(ValidationFailed):
        validate_declaration("Reader", "ide", "read", ["status"], "x", "reject")


def test_an_app_s_direction_bounds_its_key_s_scopes() -> None:
    assert effective_scopes(frozenset(ALL_SCOPES), None) == frozenset(ALL_SCOPES)
    read = effective_scopes(frozenset(ALL_SCOPES), "read")
    assert read == DIRECTION_SCOPES["read"] and "notifications:write" not in read
    assert "work-item-enhance:apply" not in effective_scopes(frozenset(ALL_SCOPES), "propose")
    grant = AppGrant("app_1", "Reader", "assistant", "read", frozenset(), "x")
    principal = Principal("prn_1", "ws_1", "bob", "user", False, "key_1", read, app=grant)
    assert isinstance(scope_refusal(principal, "notifications:operate"), AppDirectionForbidden)
    plain = Principal("prn_1", "ws_1", "bob", "user", False, "key_1", frozenset())
    assert isinstance(scope_refusal(plain, "notifications:operate"), InsufficientScope)


def test_every_notification_scope_is_grantable() -> None:
    assert {"notifications:read", "notifications:write", "notifications:operate"} <= set(ALL_SCOPES)


def test_a_key_ring_rotates_the_newest_key_signs_and_seals_every_key_opens() -> None:
    old, new = KeyRing.generate_text(), KeyRing.generate_text()
    before = KeyRing.parse(old)
    after = KeyRing.parse(f"{new}, {old}")
    signature = before.sign("links", b"message")
    assert after.verify("links", b"message", signature)
    assert not after.verify("other-purpose", b"message", signature)
    sealed = before.encrypt("urls", b"https://hooks.example/x", b"prn_1")
    assert after.decrypt("urls", sealed, b"prn_1") == b"https://hooks.example/x"
    with pytest.raises(KeyRingError):
        after.decrypt("urls", sealed, b"prn_2")
    with pytest.raises(KeyRingError):
        KeyRing.parse(new).decrypt("urls", sealed, b"prn_1")
    assert not KeyRing.parse(new).verify("links", b"message", signature)


def test_a_key_ring_refuses_short_or_malformed_keys(tmp_path: object) -> None:
    short = base64.urlsafe_b64encode(b"x" * 16).decode()
    for text in ("", short, "!!!not base64!!!"):
        with pytest.raises(KeyRingError):
            KeyRing.parse(text)


def test_up_generates_a_private_key_file_once(tmp_path: object) -> None:
    from pathlib import Path

    folder = Path(str(tmp_path))
    first = ensure_key_file(folder)
    assert ensure_key_file(folder) == first
    assert (folder / "secret_key").stat().st_mode & 0o777 == 0o600
    KeyRing.parse(first)


def test_action_tokens_verify_only_with_the_ring_and_carry_their_expiry() -> None:
    ring = KeyRing.parse(KeyRing.generate_text())
    now = datetime(2026, 11, 23, tzinfo=UTC)
    token = issue_token(
        ring, notification_id="notification_1", recipient_id="prn_1", version=4, channel="chat", now=now
    )
    link = verify_token(ring, token)
    assert (link.notification_id, link.recipient_id, link.version, link.channel) == (
        "notification_1",
        "prn_1",
        4,
        "chat",
    )
    assert link.expires_at == now + timedelta(days=7)
    body, signature = token.split(".")
    tampered = base64.urlsafe_b64encode(base64.urlsafe_b64decode(body + "==").replace(b'"v":4', b'"v":5')).decode()
    for bad in (f"{tampered.rstrip('=')}.{signature}", token + "x", "nodot", ""):
        with pytest.raises(Exception) as refused:
            verify_token(ring, bad)
        assert getattr(refused.value, "code", None) == "not_found"
    with pytest.raises(ValueError):
        issue_token(ring, notification_id="n", recipient_id="p", version=1, channel="rest", now=now)


async def test_the_smtp_sink_prints_what_it_receives() -> None:
    from email.message import EmailMessage

    from tests.conftest import free_port

    printed: list[str] = []
    sink = SmtpSink("127.0.0.1", free_port(), printed.append)
    sink.start()
    try:
        message = EmailMessage()
        message["From"], message["To"], message["Subject"] = "gw@example.test", "bob@example.test", "Hello"
        message.set_content("Acknowledge: http://x/y")
        await aiosmtplib.send(message, hostname="127.0.0.1", port=sink.port)
        await asyncio.sleep(0.05)
    finally:
        sink.stop()
    assert printed and "to bob@example.test" in printed[0] and "Subject: Hello" in printed[0]
    assert "Acknowledge: http://x/y\n" in printed[0] and "\r" not in printed[0]
