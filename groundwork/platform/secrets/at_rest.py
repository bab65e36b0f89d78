"""Secrets at rest: sealing under the key ring, and the stored answers that replay a secret.

Sealing is AES-GCM under `GROUNDWORK_SECRET_KEY` (`platform.secrets.keyring.KeyRing`), each kind with its
own purpose label and bound to its row (associated data), so a sealed value copied elsewhere does not
open. The domains seal their own values through it (webhook signing secrets: `services.webhooks.secrets`;
chat webhook URLs: `services.notifications.preferences`); this module seals the idempotent answers that
replay one, and re-encrypts them under the ring's first key (`groundwork secrets reseal`).
"""

from __future__ import annotations

from groundwork.domain.errors import ServiceUnavailable
from groundwork.persistence.repositories.platform import idempotency as idempotency_repo
from groundwork.platform.secrets.keyring import KeyRing, KeyRingError

IDEMPOTENT_ANSWER_PURPOSE = "idempotent-answer"


def require_keyring(keyring: KeyRing | None) -> KeyRing:
    """The key ring, or 503 when this process has none (a secret is never stored in the clear)."""
    if keyring is None:
        raise ServiceUnavailable(
            "GROUNDWORK_SECRET_KEY is not configured on this server: webhook signing secrets cannot be stored "
            "encrypted, so none is issued."
        )
    return keyring


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


async def reseal_answers(keyring: KeyRing) -> tuple[int, int]:
    """Re-encrypt every sealed idempotent answer under the ring's first key: (resealed, unreadable)."""
    answers = unreadable = 0
    for row in await idempotency_repo.sealed_answers():
        old = bytes(row.response_body)
        try:
            body = open_answer(keyring, row.api_key_id, row.key, old)
        except KeyRingError:
            unreadable += 1
            continue
        new = seal_answer(keyring, row.api_key_id, row.key, body)
        answers += await idempotency_repo.replace_sealed_answer(row.id, old, new)
    return answers, unreadable
