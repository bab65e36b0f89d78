"""services/notifications/preferences: a chat webhook URL is stored sealed to its owner, a URL that cannot be opened
leaves chat unavailable (never e-mail or in-app), and resealing moves every readable URL to the newest key."""

from __future__ import annotations

import pytest

from groundwork.domain.errors import ServiceUnavailable
from groundwork.persistence.repositories.notifications import preferences as repo
from groundwork.platform.secrets.keyring import KeyRing
from groundwork.services.notifications import preferences
from tests.conftest import Workspace

URL = "https://chat.example.com/hooks/T000/B000/secret"


async def _save_sealed(workspace: Workspace, name: str, keyring: KeyRing, *, sealed_for: str | None = None) -> str:
    await workspace.key(name, ["notifications:read"])
    principal_id = workspace.principals[name]
    sealed = keyring.encrypt(preferences.CHAT_URL_PURPOSE, URL.encode(), (sealed_for or principal_id).encode())
    await repo.save_preferences(
        principal_id=principal_id,
        workspace_id=workspace.id,
        email_enabled=True,
        email_address=f"{name}@example.com",
        email_digest="immediate",
        chat_enabled=True,
        chat_webhook_url=sealed,
        events={},
    )
    return principal_id


async def test_a_sealed_url_opens_only_with_the_ring_and_for_its_owner(workspace: Workspace) -> None:
    ring = KeyRing.parse(KeyRing.generate_text())
    owner = await _save_sealed(workspace, "olga", ring)
    copied = await _save_sealed(workspace, "cody", ring, sealed_for=owner)  # a sealed URL copied to another row
    opened = preferences.preferences_from_row(await repo.get_preferences(owner), ring)
    assert opened.chat_webhook_url == URL and opened.email_address == "olga@example.com"
    with pytest.raises(ServiceUnavailable, match="GROUNDWORK_SECRET_KEY"):
        preferences.preferences_from_row(await repo.get_preferences(owner), None)
    sending, reason = preferences.preferences_for_sending(await repo.get_preferences(copied), ring)
    assert sending.chat_webhook_url is None and reason is not None
    assert sending.email_enabled and sending.email_address == "cody@example.com"


def test_without_a_row_the_defaults_are_in_app_only() -> None:
    defaults = preferences.preferences_from_row(None, None)
    assert not defaults.email_enabled and not defaults.chat_enabled and defaults.chat_webhook_url is None


async def test_reseal_moves_readable_urls_to_the_newest_key_and_counts_the_rest(workspace: Workspace) -> None:
    old = KeyRing.parse(KeyRing.generate_text())
    stranger = KeyRing.parse(KeyRing.generate_text())
    readable = await _save_sealed(workspace, "rita", old)
    await _save_sealed(workspace, "udo", stranger)
    new_text = KeyRing.generate_text()
    ring = KeyRing.parse(f"{new_text},{KeyRing.generate_text()}")
    both = KeyRing(ring.keys[:1] + old.keys)
    resealed, unreadable = await preferences.reseal_chat_urls(both)
    assert resealed >= 1 and unreadable >= 1
    newest_only = KeyRing.parse(new_text)
    assert preferences.preferences_from_row(await repo.get_preferences(readable), newest_only).chat_webhook_url == URL
