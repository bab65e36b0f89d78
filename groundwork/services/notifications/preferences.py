"""The caller's channel and delivery preferences; a chat webhook URL is stored sealed (AES-GCM)."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from groundwork.domain.errors import ServiceUnavailable
from groundwork.domain.notifications.preferences import Preferences, parse_preferences
from groundwork.domain.tenancy.principals import Principal
from groundwork.persistence.repositories.notifications import preferences as repo
from groundwork.persistence.repositories.notifications.preferences import PreferencesRow
from groundwork.platform.secrets.keyring import KeyRing, KeyRingError
from groundwork.platform.temporal.client import current_connection

# The key-ring purpose of sealed chat webhook URLs (an incoming-webhook URL is a credential).
CHAT_URL_PURPOSE = "notification-chat-webhook-url"


def _aad(principal_id: str) -> bytes:
    # Bound to its owner: a sealed URL copied to another principal's row does not open.
    return principal_id.encode()


def preferences_from_row(row: PreferencesRow | None, keyring: KeyRing | None) -> Preferences:
    """Preferences from their stored row (defaults when none); the chat URL is opened with the key ring."""
    if row is None:
        return Preferences()
    url = None
    if row.chat_webhook_url is not None:
        if keyring is None:
            raise ServiceUnavailable("GROUNDWORK_SECRET_KEY is not configured: the chat webhook URL cannot be read.")
        url = keyring.decrypt(CHAT_URL_PURPOSE, bytes(row.chat_webhook_url), _aad(row.principal_id)).decode()
    return Preferences(
        email_enabled=row.email_enabled,
        email_address=row.email_address,
        email_digest=row.email_digest,
        chat_enabled=row.chat_enabled,
        chat_webhook_url=url,
        events=row.events,
    )


def preferences_for_sending(row: PreferencesRow | None, keyring: KeyRing | None) -> tuple[Preferences, str | None]:
    """Preferences for deciding and making sends: a chat URL that cannot be opened (no key ring, or the key
    that sealed it was removed) leaves chat unavailable, with the reason, and never stops e-mail or in-app."""
    try:
        return preferences_from_row(row, keyring), None
    except (ServiceUnavailable, KeyRingError) as exc:
        assert row is not None
        reason = exc.detail if isinstance(exc, ServiceUnavailable) else str(exc)
        return preferences_from_row(replace(row, chat_webhook_url=None), None), reason


def _keyring() -> KeyRing | None:
    return current_connection().settings.keyring


async def get_preferences(principal: Principal) -> Preferences:
    """The caller's preferences (the defaults until it saves some)."""
    return preferences_from_row(await repo.get_preferences(principal.id), _keyring())


async def put_preferences(principal: Principal, document: Any) -> Preferences:
    """Replace the caller's preferences with a validated document; in-app cannot be turned off."""
    settings = current_connection().settings
    chosen = parse_preferences(document, allow_private=settings.webhook_allow_private)
    sealed = None
    if chosen.chat_webhook_url is not None:
        keyring = settings.keyring
        if keyring is None:
            raise ServiceUnavailable("GROUNDWORK_SECRET_KEY is not configured: a chat webhook URL cannot be stored.")
        sealed = keyring.encrypt(CHAT_URL_PURPOSE, chosen.chat_webhook_url.encode(), _aad(principal.id))
    await repo.save_preferences(
        principal_id=principal.id,
        workspace_id=principal.workspace_id,
        email_enabled=chosen.email_enabled,
        email_address=chosen.email_address,
        email_digest=chosen.email_digest,
        chat_enabled=chosen.chat_enabled,
        chat_webhook_url=sealed,
        events=chosen.events,
    )
    return chosen


async def reseal_chat_urls(keyring: KeyRing) -> tuple[int, int]:
    """Re-encrypt every sealed chat webhook URL under the ring's first key: (resealed, unreadable)."""
    urls = unreadable = 0
    for row in await repo.sealed_chat_urls():
        old, aad = bytes(row.chat_webhook_url), _aad(row.principal_id)
        try:
            url = keyring.decrypt(CHAT_URL_PURPOSE, old, aad)
        except KeyRingError:
            unreadable += 1
            continue
        urls += await repo.replace_sealed_chat_url(row.principal_id, old, keyring.encrypt(CHAT_URL_PURPOSE, url, aad))
    return urls, unreadable
