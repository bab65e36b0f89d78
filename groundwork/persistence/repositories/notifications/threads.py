"""Message threads, their participants and messages."""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime

from asyncpg import Record

from groundwork.domain.ids import new_id
from groundwork.persistence import db


@dataclass(frozen=True, slots=True)
class ParticipantRow:
    """A participant of a thread, as every participant sees them."""

    id: str
    name: str
    display_name: str
    kind: str


@dataclass(frozen=True, slots=True)
class ThreadRow:
    """A thread as one participant sees it: its participants, and that participant's read marker and unread count."""

    id: str
    workspace_id: str
    title: str
    created_by: str
    subject_type: str | None
    subject_id: str | None
    message_count: int
    last_message_id: str | None
    last_message_at: datetime
    created_at: datetime
    last_read_message_id: str | None
    unread_count: int
    participants: list[ParticipantRow]


@dataclass(frozen=True, slots=True)
class MessageRow:
    """A message of a thread; `sender_name` where the read joins the sender (None otherwise)."""

    id: str
    thread_id: str
    sender_id: str
    body: str
    created_at: datetime
    sender_name: str | None


# A thread as one participant sees it: with its participants and that participant's unread count.
_THREAD_FOR = """
    SELECT t.id, t.workspace_id, t.title, t.created_by, t.subject_type, t.subject_id, t.message_count,
           t.last_message_id, t.last_message_at, t.created_at, me.last_read_message_id,
           (SELECT count(*) FROM messages m WHERE m.thread_id = t.id AND m.sender_id <> me.principal_id
              AND (me.last_read_message_id IS NULL OR m.id > me.last_read_message_id)) AS unread_count,
           (SELECT json_agg(json_build_object('id', p.id, 'name', p.name, 'display_name', p.display_name,
                                              'kind', p.kind) ORDER BY p.name)
            FROM message_thread_participants tp JOIN principals p ON p.id = tp.principal_id
            WHERE tp.thread_id = t.id) AS participants
    FROM message_threads t
    JOIN message_thread_participants me ON me.thread_id = t.id AND me.principal_id = $1
"""


def _thread(row: Record) -> ThreadRow:
    participants = json.loads(row["participants"]) if row["participants"] else []
    return ThreadRow(
        id=row["id"],
        workspace_id=row["workspace_id"],
        title=row["title"],
        created_by=row["created_by"],
        subject_type=row["subject_type"],
        subject_id=row["subject_id"],
        message_count=row["message_count"],
        last_message_id=row["last_message_id"],
        last_message_at=row["last_message_at"],
        created_at=row["created_at"],
        last_read_message_id=row["last_read_message_id"],
        unread_count=int(row["unread_count"]),
        participants=[
            ParticipantRow(id=p["id"], name=p["name"], display_name=p["display_name"], kind=p["kind"])
            for p in participants
        ],
    )


def _message(row: Record, sender_name: str | None = None) -> MessageRow:
    return MessageRow(
        id=row["id"],
        thread_id=row["thread_id"],
        sender_id=row["sender_id"],
        body=row["body"],
        created_at=row["created_at"],
        sender_name=sender_name,
    )


async def insert_thread(
    *,
    workspace_id: str,
    title: str,
    created_by: str,
    subject_type: str | None,
    subject_id: str | None,
    participant_ids: list[str],
) -> str:
    """Create a thread with its participants (the creator among them); returns its id."""
    thread_id = new_id("thread")
    await db.execute(
        "INSERT INTO message_threads (id, workspace_id, title, created_by, subject_type, subject_id)"
        " VALUES ($1, $2, $3, $4, $5, $6)",
        thread_id,
        workspace_id,
        title,
        created_by,
        subject_type,
        subject_id,
    )
    await db.execute(
        "INSERT INTO message_thread_participants (thread_id, principal_id)"
        " SELECT $1, unnest($2::text[]) ON CONFLICT DO NOTHING",
        thread_id,
        participant_ids,
    )
    return thread_id


async def insert_message(thread_id: str, sender_id: str, body: str) -> MessageRow:
    """Append a message; the thread's counters move with it and the sender has read up to it."""
    message_id = new_id("msg")
    row = await db.fetchrow(
        "INSERT INTO messages (id, thread_id, sender_id, body) VALUES ($1, $2, $3, $4) RETURNING *",
        message_id,
        thread_id,
        sender_id,
        body,
    )
    assert row is not None
    await db.execute(
        "UPDATE message_threads SET message_count = message_count + 1, last_message_id = $2,"
        " last_message_at = $3 WHERE id = $1",
        thread_id,
        message_id,
        row["created_at"],
    )
    await mark_read(thread_id, sender_id, message_id)
    return _message(row)


async def thread_for(principal_id: str, thread_id: str, *, for_update: bool = False) -> ThreadRow | None:
    """The thread if the principal takes part in it (None otherwise, whoever asks)."""
    if for_update:
        locked = await db.fetchrow("SELECT id FROM message_threads WHERE id = $1 FOR UPDATE", thread_id)
        if locked is None:
            return None
    row = await db.fetchrow(_THREAD_FOR + " WHERE t.id = $2", principal_id, thread_id)
    return _thread(row) if row else None


async def threads_of(principal_id: str, *, after: tuple[datetime, str] | None, limit: int) -> list[ThreadRow]:
    """The principal's threads, most recent activity first, after a keyset position (time, id)."""
    rows = await db.fetch(
        _THREAD_FOR
        + """
        WHERE ($2::timestamptz IS NULL OR (t.last_message_at, t.id) < ($2, $3))
        ORDER BY t.last_message_at DESC, t.id DESC LIMIT $4
        """,
        principal_id,
        after[0] if after else None,
        after[1] if after else None,
        limit,
    )
    return [_thread(r) for r in rows]


async def get_message(thread_id: str, message_id: str) -> MessageRow | None:
    """One message of a thread, as `insert_message` answers it."""
    row = await db.fetchrow("SELECT * FROM messages WHERE thread_id = $1 AND id = $2", thread_id, message_id)
    return _message(row) if row else None


async def messages_of(thread_id: str, *, after_id: str | None, limit: int) -> list[MessageRow]:
    """Messages of a thread, newest first, after the keyset position `after_id`, with the sender's name."""
    rows = await db.fetch(
        """
        SELECT m.id, m.thread_id, m.sender_id, m.body, m.created_at, p.display_name AS sender_name
        FROM messages m JOIN principals p ON p.id = m.sender_id
        WHERE m.thread_id = $1 AND ($2::text IS NULL OR m.id < $2)
        ORDER BY m.id DESC LIMIT $3
        """,
        thread_id,
        after_id,
        limit,
    )
    return [_message(r, r["sender_name"]) for r in rows]


async def mark_read(thread_id: str, principal_id: str, up_to_message_id: str | None) -> None:
    """Move a participant's read marker forward to `up_to_message_id` (never back)."""
    if up_to_message_id is None:
        return
    await db.execute(
        "UPDATE message_thread_participants SET last_read_message_id = $3"
        " WHERE thread_id = $1 AND principal_id = $2"
        " AND (last_read_message_id IS NULL OR last_read_message_id < $3)",
        thread_id,
        principal_id,
        up_to_message_id,
    )


async def share_a_project(principal_id: str, others: list[str], permission: str = "project:read") -> set[str]:
    """Those of `others` that can see at least one project `principal_id` can see (admins see every project)."""
    if not others:
        return set()
    rows = await db.fetch(
        """
        WITH sees AS (
            SELECT p.id AS principal_id, j.id AS project_id
            FROM principals p JOIN projects j ON j.workspace_id = p.workspace_id
            WHERE p.id = ANY($2::text[] || $1::text) AND (p.is_admin OR EXISTS (
                SELECT 1 FROM memberships m JOIN roles r ON r.name = m.role
                WHERE m.principal_id = p.id AND m.project_id = j.id AND $3 = ANY(r.permissions))))
        SELECT DISTINCT o.principal_id FROM sees o JOIN sees me ON me.project_id = o.project_id
        WHERE me.principal_id = $1 AND o.principal_id = ANY($2::text[])
        """,
        principal_id,
        others,
        permission,
    )
    return {r["principal_id"] for r in rows}
