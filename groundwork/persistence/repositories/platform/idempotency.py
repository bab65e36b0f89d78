"""The idempotency store: one row per (API key, Idempotency-Key), claimed before the work runs."""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import timedelta

from groundwork.persistence import db

RETENTION = timedelta(hours=24)
# The process serving a request refreshes its claim every CLAIM_REFRESH (while the request runs); a claim
# not refreshed for ABANDONED_AFTER belongs to a process that died mid-request, and a retry of the same
# request takes it over.
CLAIM_REFRESH = timedelta(seconds=2)
ABANDONED_AFTER = timedelta(seconds=10)


@dataclass(frozen=True)
class StoredResponse:
    status: int
    headers: list[tuple[str, str]]
    body: bytes
    sealed: bool = False  # the body is sealed under the key ring (an answer that holds a secret)


@dataclass(frozen=True, slots=True)
class SealedAnswerRow:
    """A stored answer sealed under the key ring, with what binds it: its API key and Idempotency-Key."""

    id: int
    api_key_id: str
    key: str
    response_body: bytes


@dataclass(frozen=True)
class Claim:
    """The outcome of trying to claim a key: `claimed`, or the row someone else holds."""

    claimed: bool
    fingerprint: str | None = None
    response: StoredResponse | None = None


async def claim(api_key_id: str, key: str, fingerprint: str) -> Claim:
    """Atomically take the key for this request, or report who holds it and what it answered."""
    row = await db.fetchrow(
        """
        INSERT INTO idempotency_keys (api_key_id, key, fingerprint, expires_at)
        VALUES ($1, $2, $3, clock_timestamp() + $4::interval)
        ON CONFLICT (api_key_id, key) DO UPDATE
            SET fingerprint = EXCLUDED.fingerprint, locked_at = clock_timestamp(),
                expires_at = EXCLUDED.expires_at, created_at = clock_timestamp(),
                -- A retry taking over keeps what the request created; an expired key starts afresh.
                resource_type = CASE WHEN idempotency_keys.expires_at < clock_timestamp()
                                     THEN NULL ELSE idempotency_keys.resource_type END,
                resource_id = CASE WHEN idempotency_keys.expires_at < clock_timestamp()
                                   THEN NULL ELSE idempotency_keys.resource_id END
            WHERE idempotency_keys.expires_at < clock_timestamp()
               OR (idempotency_keys.response_status IS NULL
                   AND idempotency_keys.fingerprint = EXCLUDED.fingerprint
                   AND idempotency_keys.locked_at < clock_timestamp() - $5::interval)
        RETURNING true AS claimed
        """,
        api_key_id,
        key,
        fingerprint,
        RETENTION,
        ABANDONED_AFTER,
    )
    if row is not None:
        return Claim(claimed=True)
    held = await db.fetchrow(
        "SELECT fingerprint, response_status, response_headers, response_body, response_sealed"
        " FROM idempotency_keys WHERE api_key_id = $1 AND key = $2",
        api_key_id,
        key,
    )
    if held is None:  # released between our insert and this read: the caller may retry
        return Claim(claimed=False)
    response = None
    if held["response_status"] is not None:
        headers = [(k, v) for k, v in json.loads(held["response_headers"])]
        response = StoredResponse(
            held["response_status"], headers, bytes(held["response_body"]), held["response_sealed"]
        )
    return Claim(claimed=False, fingerprint=held["fingerprint"], response=response)


async def complete(
    api_key_id: str, key: str, status: int, headers: list[tuple[str, str]], body: bytes, *, sealed: bool = False
) -> None:
    """Store the finished response for replay (`sealed`: the body was sealed by the caller)."""
    await db.execute(
        "UPDATE idempotency_keys SET response_status = $3, response_headers = $4::jsonb, response_body = $5,"
        " response_sealed = $6 WHERE api_key_id = $1 AND key = $2",
        api_key_id,
        key,
        status,
        json.dumps(headers),
        body,
        sealed,
    )


async def refresh(api_key_id: str, key: str) -> None:
    """Mark an in-flight claim as still held by a live process."""
    await db.execute(
        "UPDATE idempotency_keys SET locked_at = clock_timestamp()"
        " WHERE api_key_id = $1 AND key = $2 AND response_status IS NULL",
        api_key_id,
        key,
    )


async def release(api_key_id: str, key: str) -> None:
    """Drop an in-flight claim whose answer must not be stored (5xx, 429), so the key can be retried.

    A claim whose request already created something is kept, free for the retry to take over at once,
    so the retry finds what was created instead of creating it again.
    """
    await db.execute(
        "DELETE FROM idempotency_keys WHERE api_key_id = $1 AND key = $2 AND response_status IS NULL"
        " AND resource_id IS NULL",
        api_key_id,
        key,
    )
    await db.execute(
        "UPDATE idempotency_keys SET locked_at = '-infinity'"
        " WHERE api_key_id = $1 AND key = $2 AND response_status IS NULL AND resource_id IS NOT NULL",
        api_key_id,
        key,
    )


async def record_resource(api_key_id: str, key: str, resource_type: str, resource_id: str) -> None:
    """Remember what the request under this claim created; call in the transaction that creates it."""
    await db.execute(
        "UPDATE idempotency_keys SET resource_type = $3, resource_id = $4 WHERE api_key_id = $1 AND key = $2",
        api_key_id,
        key,
        resource_type,
        resource_id,
    )


async def recorded_resource(api_key_id: str, key: str, resource_type: str) -> str | None:
    """The id of the `resource_type` an earlier attempt of this request created, if it committed one."""
    row = await db.fetchrow(
        "SELECT resource_id FROM idempotency_keys WHERE api_key_id = $1 AND key = $2 AND resource_type = $3",
        api_key_id,
        key,
        resource_type,
    )
    return str(row["resource_id"]) if row is not None and row["resource_id"] is not None else None


async def purge_expired() -> int:
    """Delete records past their 24 h retention; returns how many."""
    status = await db.execute("DELETE FROM idempotency_keys WHERE expires_at < clock_timestamp()")
    return int(status.split()[-1])


async def sealed_answers() -> list[SealedAnswerRow]:
    """Stored answers that are sealed (they hold a secret), with what binds them: API key and key."""
    rows = await db.fetch(
        "SELECT id, api_key_id, key, response_body FROM idempotency_keys"
        " WHERE response_sealed AND response_body IS NOT NULL AND expires_at > clock_timestamp()"
    )
    return [
        SealedAnswerRow(id=r["id"], api_key_id=r["api_key_id"], key=r["key"], response_body=r["response_body"])
        for r in rows
    ]


async def replace_sealed_answer(record_id: int, old: bytes, new: bytes) -> bool:
    """Swap a sealed answer if it is still `old`."""
    status = await db.execute(
        "UPDATE idempotency_keys SET response_body = $3 WHERE id = $1 AND response_body = $2", record_id, old, new
    )
    return status.endswith(" 1")
