"""services/notifications/sink_messages: an e-mail, a digest and a chat message carry the notification, a signed View
link and, while it may be acknowledged, its signed acknowledge link — nothing that needs an API key."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime

from groundwork.persistence.repositories.notifications.deliveries import DeliveryContextRow
from groundwork.platform.secrets.keyring import KeyRing
from groundwork.services.notifications import actions, view_links
from groundwork.services.notifications.signed_tokens import read_token
from groundwork.services.notifications.sink_messages import Composer

RING = KeyRing.parse(KeyRing.generate_text())
NOW = datetime(2026, 11, 28, 9, 0, tzinfo=UTC)
CONTEXT = DeliveryContextRow(
    id=1, workspace_id="ws_1", notification_id="ntf_1", recipient_id="prn_bob", channel="email", status="pending",
    attempts=0, digest_id=None, title="Alice wrote to you", body="Can you review the plan?",
    notification_status="unread", notification_version=1, event_type="message.posted",
    resource_type="message_thread", resource_id="thr_1", source_kind="message", source_external_id="msg_1",
    notification_created_at=NOW, preferences=None,
)  # fmt: skip


def _link(text: str, label: str) -> str | None:
    found = [line.split(": ", 1)[1] for line in text.splitlines() if line.strip().startswith(f"{label}: ")]
    return found[0] if found else None


def test_an_email_links_a_signed_page_of_that_notification_and_its_acknowledge_link() -> None:
    mail = Composer("groundwork@example.com", "https://gw.example.com", RING).email(
        CONTEXT, "bob@example.com", NOW, "<m1>"
    )
    text = mail.get_content()
    assert mail["To"] == "bob@example.com" and mail["Subject"] == "Alice wrote to you"
    assert "Can you review the plan?" in text
    view = _link(text, "View")
    assert view is not None and view.startswith("https://gw.example.com" + view_links.VIEW_PATH)
    payload = read_token(RING, view_links.PURPOSE, view.rsplit("/", 1)[1])
    assert payload is not None and (payload["n"], payload["r"]) == ("ntf_1", "prn_bob")
    acknowledge = _link(text, "Acknowledge")
    assert acknowledge is not None
    link = actions.verify_token(RING, acknowledge.rsplit("/", 1)[1])
    assert (link.notification_id, link.version, link.channel) == ("ntf_1", 1, "email")


def test_a_dismissed_notification_s_message_offers_no_acknowledge_link() -> None:
    dismissed = replace(CONTEXT, notification_status="dismissed", notification_version=4)
    chat = Composer("groundwork@example.com", "https://gw.example.com", RING).chat(dismissed, NOW)
    assert "View: https://gw.example.com/api/v1/notification-views/" in chat["text"]
    assert "Acknowledge:" not in chat["text"]


def test_without_a_key_ring_the_view_link_is_the_api_address_and_there_is_no_action_link() -> None:
    digest = Composer("groundwork@example.com", "https://gw.example.com/", None).digest(
        [CONTEXT, replace(CONTEXT, notification_id="ntf_2", title="Second")], "bob@example.com", "hourly", NOW, "<d1>"
    )
    text = digest.get_content()
    assert digest["Subject"] == "Groundwork hourly digest: 2 notification(s)"
    assert "View: https://gw.example.com/api/v1/notifications/ntf_1" in text
    assert "View: https://gw.example.com/api/v1/notifications/ntf_2" in text
    assert "Acknowledge:" not in text
