"""Webhook signing secrets at rest: sealed under the key ring, bound to their endpoint.

A sealed secret is stored as text, `gwsealed1:<base64>`; a secret stored before sealing existed
(`whsec_...`) still opens as itself until `seal_legacy_webhook_secrets` seals it, which `groundwork
migrate` and every worker start run (SQL cannot encrypt, so the migration cannot).
"""

from __future__ import annotations

import base64
import logging

from groundwork.domain.errors import ServiceUnavailable
from groundwork.persistence.repositories.webhooks import endpoints as webhooks_repo
from groundwork.platform.secrets.keyring import KeyRing, KeyRingError

log = logging.getLogger("groundwork.secrets")

WEBHOOK_SECRET_PURPOSE = "webhook-signing-secret"
SEALED_PREFIX = "gwsealed1:"


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
            old = row.secrets
            try:
                new = webhooks_repo.StoredSecrets(
                    _resealed(keyring, row.id, old.secret, legacy_only=legacy_only) or old.secret,
                    _resealed(keyring, row.id, old.previous_secret, legacy_only=legacy_only),
                    [
                        {**o, "secret": _resealed(keyring, row.id, o["secret"], legacy_only=legacy_only)}
                        for o in old.older_secrets
                    ],
                )
            except KeyRingError:
                unreadable += 1
                log.error("webhook endpoint %s has a secret no key of the ring opens", row.id)
                continue
            # Compare-and-set: a rotation that raced us wins (its new secret is sealed under the current key).
            if await webhooks_repo.replace_secrets(row.id, old, new):
                changed += 1
        after = rows[-1].id
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


async def reseal_webhook_secrets(keyring: KeyRing) -> tuple[int, int]:
    """Re-encrypt every endpoint's secrets under the ring's first key: (endpoints resealed, unreadable)."""
    return await _rewrite_webhook_secrets(keyring, legacy_only=False)
