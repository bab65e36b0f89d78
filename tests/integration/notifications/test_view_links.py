"""services/notifications/view_links: a View link opens its one notification for its recipient until it expires;
a forged link, or one naming someone else as recipient, finds nothing."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from groundwork.config import Settings
from groundwork.domain.errors import NotFound
from groundwork.services.notifications import view_links
from tests.integration.notifications.conftest import People


async def test_a_view_link_shows_its_notification_with_an_acknowledge_link_until_it_expires(
    people: People, notify: Any, settings: Settings
) -> None:
    keyring = settings.keyring
    assert keyring is not None
    made = await notify()
    now = datetime.now(UTC)
    url = view_links.view_url(
        keyring, "https://gw.example.com", notification_id=made["id"], recipient_id=people.bob.id, now=now
    )
    token = url.rsplit("/", 1)[1]
    page = await view_links.view(keyring, "https://gw.example.com", token, now=now)
    assert page.notification.id == made["id"] and page.expires_at > now + timedelta(days=6)
    assert page.acknowledge_url is not None and "/api/v1/notification-actions/" in page.acknowledge_url
    with pytest.raises(view_links.ViewLinkExpired):
        await view_links.view(keyring, "https://gw.example.com", token, now=now + timedelta(days=8))


async def test_a_forged_link_or_one_naming_another_recipient_finds_nothing(
    people: People, notify: Any, settings: Settings
) -> None:
    keyring = settings.keyring
    assert keyring is not None
    made = await notify()
    now = datetime.now(UTC)
    carols = view_links.view_url(
        keyring, "https://x", notification_id=made["id"], recipient_id=people.carol.id, now=now
    )
    for token in (carols.rsplit("/", 1)[1], "forged.token", carols.rsplit("/", 1)[1][:-3] + "abc"):
        with pytest.raises(NotFound):
            await view_links.view(keyring, "https://x", token, now=now)
    with pytest.raises(NotFound):
        await view_links.view(None, "https://x", carols.rsplit("/", 1)[1], now=now)
