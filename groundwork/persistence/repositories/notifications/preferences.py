"""A principal's stored channel and delivery preferences; the chat webhook URL is stored sealed."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from asyncpg import Record

from groundwork.persistence import db


@dataclass(frozen=True, slots=True)
class PreferencesRow:
    """A principal's stored preferences, `events` decoded; the chat webhook URL still sealed."""

    principal_id: str
    email_enabled: bool
    email_address: str | None
    email_digest: str
    chat_enabled: bool
    chat_webhook_url: bytes | None
    events: dict[str, Any]


@dataclass(frozen=True, slots=True)
class SealedChatUrlRow:
    """A sealed chat webhook URL with the principal it is bound to."""

    principal_id: str
    chat_webhook_url: bytes


def preferences_row(row: Record, principal_id: str) -> PreferencesRow:
    """A principal's stored preferences from a row holding the `notification_preferences` columns."""
    return PreferencesRow(
        principal_id=principal_id,
        email_enabled=row["email_enabled"],
        email_address=row["email_address"],
        email_digest=row["email_digest"],
        chat_enabled=row["chat_enabled"],
        chat_webhook_url=row["chat_webhook_url"],
        events=json.loads(row["events"]) if row["events"] else {},
    )


async def get_preferences(principal_id: str) -> PreferencesRow | None:
    """The stored preferences row, if the principal ever saved one."""
    row = await db.fetchrow("SELECT * FROM notification_preferences WHERE principal_id = $1", principal_id)
    return preferences_row(row, row["principal_id"]) if row else None


async def preferences_of(principal_ids: list[str]) -> dict[str, PreferencesRow]:
    """Stored preferences of several principals, by principal id."""
    rows = await db.fetch("SELECT * FROM notification_preferences WHERE principal_id = ANY($1::text[])", principal_ids)
    return {row["principal_id"]: preferences_row(row, row["principal_id"]) for row in rows}


async def save_preferences(
    *,
    principal_id: str,
    workspace_id: str,
    email_enabled: bool,
    email_address: str | None,
    email_digest: str,
    chat_enabled: bool,
    chat_webhook_url: bytes | None,
    events: dict[str, dict[str, bool]],
) -> PreferencesRow:
    """Replace a principal's preferences."""
    row = await db.fetchrow(
        """
        INSERT INTO notification_preferences (principal_id, workspace_id, email_enabled, email_address, email_digest,
            chat_enabled, chat_webhook_url, events)
        VALUES ($1, $2, $3, $4, $5, $6, $7, $8::jsonb)
        ON CONFLICT (principal_id) DO UPDATE SET email_enabled = EXCLUDED.email_enabled,
            email_address = EXCLUDED.email_address, email_digest = EXCLUDED.email_digest,
            chat_enabled = EXCLUDED.chat_enabled, chat_webhook_url = EXCLUDED.chat_webhook_url,
            events = EXCLUDED.events, updated_at = clock_timestamp()
        RETURNING *
        """,
        principal_id,
        workspace_id,
        email_enabled,
        email_address,
        email_digest,
        chat_enabled,
        chat_webhook_url,
        json.dumps(events),
    )
    assert row is not None
    return preferences_row(row, row["principal_id"])


async def sealed_chat_urls() -> list[SealedChatUrlRow]:
    """Every stored (sealed) chat webhook URL with its owner (the value it is bound to)."""
    rows = await db.fetch(
        "SELECT principal_id, chat_webhook_url FROM notification_preferences WHERE chat_webhook_url IS NOT NULL"
    )
    return [SealedChatUrlRow(principal_id=r["principal_id"], chat_webhook_url=r["chat_webhook_url"]) for r in rows]


async def replace_sealed_chat_url(principal_id: str, old: bytes, new: bytes) -> bool:
    """Swap a sealed chat webhook URL if it is still `old` (a change by its owner in between wins)."""
    status = await db.execute(
        "UPDATE notification_preferences SET chat_webhook_url = $3 WHERE principal_id = $1 AND chat_webhook_url = $2",
        principal_id,
        old,
        new,
    )
    return status.endswith(" 1")
