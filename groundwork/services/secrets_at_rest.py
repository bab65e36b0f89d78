"""Secrets at rest: webhook signing secrets and answers that replay one are sealed under the key ring.

Sealing is AES-GCM under `GROUNDWORK_SECRET_KEY` (`secrets_keyring.KeyRing`), each kind with its own
purpose label and bound to its row (associated data), so a sealed value copied elsewhere does not
open. A sealed webhook secret is stored as text, `gwsealed1:<base64>`; a secret stored before sealing
existed (`whsec_...`) still opens as itself until `seal_legacy_webhook_secrets` seals it, which
`groundwork migrate` and every worker start run (SQL cannot encrypt, so the migration cannot).
`reseal_everything` re-encrypts every sealed value under the ring's first key, so a removed key
leaves nothing unreadable behind (`groundwork secrets reseal`).
"""

from __future__ import annotations

import base64
import logging
from dataclasses import dataclass
from typing import Any

from groundwork.domain.errors import ServiceUnavailable
from groundwork.persistence.repositories import idempotency as idempotency_repo
from groundwork.persistence.repositories import notifications as notifications_repo
from groundwork.persistence.repositories import webhooks as webhooks_repo
from groundwork.secrets_keyring import KeyRing, KeyRingError
from groundwork.services.notification_preferences import CHAT_URL_PURPOSE

log = logging.getLogger("groundwork.secrets")

WEBHOOK_SECRET_PURPOSE = "webhook-signing-secret"
IDEMPOTENT_ANSWER_PURPOSE = "idempotent-answer"
SEALED_PREFIX = "gwsealed1:"


def require_keyring(keyring: KeyRing | None) -> KeyRing:
    """The key ring, or 503 when this process has none (a secret is never stored in the clear)."""
    if keyring is None:
        raise ServiceUnavailable(
            "GROUNDWORK_SECRET_KEY is not configured on this server: webhook signing secrets cannot be stored "
            "encrypted, so none is issued."
        )
    return keyring


def is_sealed(stored: str) -> bool:
    """Whether a stored webhook secret is sealed (rather than a `whsec_` left from before sealing)."""
    return stored.startswith(SEALED_PREFIX)


def seal_webhook_secret(keyring: KeyRing, endpoint_id: str, secret: str) -> str:
    """The stored form of an endpoint's signing secret."""
    sealed = keyring.encrypt(WEBHOOK_SECRET_PURPOSE, secret.encode(), endpoint_id.encode())
    return SEALED_PREFIX + base64.b64encode(sealed).decode()


def open_webhook_secret(keyring: KeyRing | None, endpoint_id: str, stored: str) -> str:
    """The `whsec_` secret a stored value stands for (raises `KeyRingError` if no key of the ring opens it)."""
    if not is_sealed(stored):
        return stored  # issued before sealing; sealed at the next migrate or worker start
    if keyring is None:
        raise ServiceUnavailable("GROUNDWORK_SECRET_KEY is not configured: webhook signing secrets cannot be opened.")
    raw = base64.b64decode(stored.removeprefix(SEALED_PREFIX))
    return keyring.decrypt(WEBHOOK_SECRET_PURPOSE, raw, endpoint_id.encode()).decode()


def _idempotency_aad(api_key_id: str, key: str) -> bytes:
    return f"{api_key_id}\x00{key}".encode()


def seal_answer(keyring: KeyRing, api_key_id: str, key: str, body: bytes) -> bytes:
    """A stored idempotent answer that holds a secret, sealed and bound to its (API key, Idempotency-Key)."""
    return keyring.encrypt(IDEMPOTENT_ANSWER_PURPOSE, body, _idempotency_aad(api_key_id, key))


def open_answer(keyring: KeyRing | None, api_key_id: str, key: str, sealed: bytes) -> bytes:
    """The answer `seal_answer` sealed."""
    if keyring is None:
        raise ServiceUnavailable("GROUNDWORK_SECRET_KEY is not configured: this stored answer cannot be replayed.")
    return keyring.decrypt(IDEMPOTENT_ANSWER_PURPOSE, sealed, _idempotency_aad(api_key_id, key))


def _stored_secrets(row: dict[str, Any]) -> webhooks_repo.StoredSecrets:
    return webhooks_repo.StoredSecrets(row["secret"], row["previous_secret"], row["older_secrets"])


def _resealed(keyring: KeyRing, endpoint_id: str, stored: str | None, *, legacy_only: bool) -> str | None:
    if stored is None or (legacy_only and is_sealed(stored)):
        return stored
    return seal_webhook_secret(keyring, endpoint_id, open_webhook_secret(keyring, endpoint_id, stored))


async def _rewrite_webhook_secrets(keyring: KeyRing, *, legacy_only: bool) -> tuple[int, int]:
    """(endpoints rewritten, endpoints with a secret no key opens) over every endpoint that needs it."""
    changed = unreadable = 0
    after = ""
    while rows := await webhooks_repo.endpoint_secrets_page(after, 200, legacy_only=legacy_only):
        for row in rows:
            old = _stored_secrets(row)
            try:
                new = webhooks_repo.StoredSecrets(
                    _resealed(keyring, row["id"], old.secret, legacy_only=legacy_only) or old.secret,
                    _resealed(keyring, row["id"], old.previous_secret, legacy_only=legacy_only),
                    [
                        {**o, "secret": _resealed(keyring, row["id"], o["secret"], legacy_only=legacy_only)}
                        for o in old.older_secrets
                    ],
                )
            except KeyRingError:
                unreadable += 1
                log.error("webhook endpoint %s has a secret no key of the ring opens", row["id"])
                continue
            # Compare-and-set: a rotation that raced us wins (its new secret is sealed under the current key).
            if await webhooks_repo.replace_secrets(row["id"], old, new):
                changed += 1
        after = rows[-1]["id"]
    return changed, unreadable


async def seal_legacy_webhook_secrets(keyring: KeyRing | None) -> int:
    """Seal every webhook secret still stored as issued; returns how many endpoints changed."""
    if keyring is None:
        if await webhooks_repo.endpoint_secrets_page("", 1, legacy_only=True):
            log.warning("webhook signing secrets are stored unsealed: set GROUNDWORK_SECRET_KEY and run `migrate`")
        return 0
    changed, _ = await _rewrite_webhook_secrets(keyring, legacy_only=True)
    if changed:
        log.info("sealed the signing secrets of %d webhook endpoint(s)", changed)
    return changed


@dataclass(frozen=True)
class ResealReport:
    """What `reseal_everything` re-encrypted under the current key, and what no key of the ring opens."""

    webhook_endpoints: int
    idempotent_answers: int
    chat_webhook_urls: int
    unreadable: int


async def reseal_everything(keyring: KeyRing) -> ResealReport:
    """Re-encrypt every sealed value under the ring's first key (after a new key was put first)."""
    endpoints, unreadable = await _rewrite_webhook_secrets(keyring, legacy_only=False)
    answers = 0
    for row in await idempotency_repo.sealed_answers():
        old = bytes(row["response_body"])
        try:
            body = open_answer(keyring, row["api_key_id"], row["key"], old)
        except KeyRingError:
            unreadable += 1
            continue
        new = seal_answer(keyring, row["api_key_id"], row["key"], body)
        answers += await idempotency_repo.replace_sealed_answer(row["id"], old, new)
    urls = 0
    for row in await notifications_repo.sealed_chat_urls():
        old, aad = bytes(row["chat_webhook_url"]), row["principal_id"].encode()
        try:
            url = keyring.decrypt(CHAT_URL_PURPOSE, old, aad)
        except KeyRingError:
            unreadable += 1
            continue
        new = keyring.encrypt(CHAT_URL_PURPOSE, url, aad)
        urls += await notifications_repo.replace_sealed_chat_url(row["principal_id"], old, new)
    return ResealReport(endpoints, answers, urls, unreadable)
