"""services/notifications/actions: an acknowledge link names one notification at one version, expires, and a forged
or foreign link finds nothing."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from groundwork.domain.errors import NotFound
from groundwork.platform.secrets.keyring import KeyRing
from groundwork.services.notifications import actions

RING = KeyRing.parse(KeyRing.generate_text())
NOW = datetime(2026, 11, 28, 9, 0, tzinfo=UTC)


def test_a_link_names_its_notification_recipient_version_and_channel_for_seven_days() -> None:
    token = actions.issue_token(
        RING, notification_id="ntf_1", recipient_id="prn_1", version=2, channel="email", now=NOW
    )
    link = actions.verify_token(RING, token)
    assert (link.notification_id, link.recipient_id, link.version, link.channel) == ("ntf_1", "prn_1", 2, "email")
    assert link.expires_at == NOW + timedelta(days=7)
    sooner = actions.issue_token(
        RING, notification_id="ntf_1", recipient_id="prn_1", version=2, channel="chat", now=NOW,
        expires_at=NOW + timedelta(hours=1),
    )  # fmt: skip
    assert actions.verify_token(RING, sooner).expires_at == NOW + timedelta(hours=1)


def test_two_links_for_one_notification_are_different_links() -> None:
    first, second = (
        actions.issue_token(RING, notification_id="ntf_1", recipient_id="prn_1", version=1, channel="email", now=NOW)
        for _ in range(2)
    )
    assert actions.verify_token(RING, first).link_id != actions.verify_token(RING, second).link_id


def test_a_forged_or_foreign_link_is_not_found() -> None:
    token = actions.issue_token(
        RING, notification_id="ntf_1", recipient_id="prn_1", version=1, channel="email", now=NOW
    )
    other_ring = KeyRing.parse(KeyRing.generate_text())
    for ring, bad in ((other_ring, token), (RING, token[:-2] + "xx"), (None, token)):
        with pytest.raises(NotFound):
            actions.verify_token(ring, bad)


def test_a_link_is_offered_only_while_the_notification_may_be_acknowledged() -> None:
    def link(status: str, ring: KeyRing | None = RING) -> str | None:
        return actions.link_for(
            ring, "https://gw.example.com/", notification_id="ntf_1", recipient_id="prn_1", status=status,
            version=1, channel="email", now=NOW,
        )  # fmt: skip

    offered = link("unread")
    assert offered is not None and offered.startswith("https://gw.example.com/api/v1/notification-actions/")
    assert link("dismissed") is None and link("acknowledged") is None and link("unread", None) is None


def test_an_unknown_channel_is_a_programming_error() -> None:
    with pytest.raises(ValueError):
        actions.issue_token(RING, notification_id="n", recipient_id="r", version=1, channel="pigeon", now=NOW)
