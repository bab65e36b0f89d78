"""The package index change log (which entries changed, in commit order), and the entries the index holds."""

from __future__ import annotations

import msgspec
from asyncpg import Record

from groundwork.persistence import db

# Any constant works; every process appending to the log takes the same one.
_INDEX_LOG_LOCK = 7_301_942_311


async def append_index_entries(entry_ids: list[str]) -> int:
    """Log that these entries changed (call in the transaction of the change); returns the log position."""
    await db.execute("SELECT pg_advisory_xact_lock($1)", _INDEX_LOG_LOCK)
    row = await db.fetchrow(
        "INSERT INTO context_entry_index_log (entry_ids) VALUES ($1::text[]) RETURNING seq", sorted(set(entry_ids))
    )
    assert row is not None
    return int(row["seq"])


async def index_changes_after(seq: int, limit: int) -> list[tuple[int, list[str]]]:
    """Logged changes after `seq`, in order."""
    rows = await db.fetch(
        "SELECT seq, entry_ids FROM context_entry_index_log WHERE seq > $1 ORDER BY seq LIMIT $2", seq, limit
    )
    return [(int(r["seq"]), list(r["entry_ids"])) for r in rows]


async def last_index_change() -> int:
    """The newest log position (0 when empty)."""
    row = await db.fetchrow("SELECT coalesce(max(seq), 0) AS seq FROM context_entry_index_log")
    return int(row["seq"]) if row else 0


# A Struct rather than a dataclass: a rebuild builds one per ready entry, and a frozen dataclass costs several
# times as much to build.
class IndexableEntryRow(msgspec.Struct, frozen=True, gc=False):
    """An entry as the package index holds it: its key (`seq`), what a query matches, what search filters on."""

    seq: int
    entry_id: str
    workspace_id: str
    project_id: str
    term: str
    summary: str
    contribution_type: str
    classification: str
    status: str


_INDEXABLE = (
    "SELECT id AS entry_id, seq, workspace_id, project_id, term, summary, contribution_type, classification, status"
    " FROM context_entries"
)


def _indexable(row: Record) -> IndexableEntryRow:
    return IndexableEntryRow(
        seq=row["seq"],
        entry_id=row["entry_id"],
        workspace_id=row["workspace_id"],
        project_id=row["project_id"],
        term=row["term"],
        summary=row["summary"],
        contribution_type=row["contribution_type"],
        classification=row["classification"],
        status=row["status"],
    )


async def indexable_entries(entry_ids: list[str]) -> list[IndexableEntryRow]:
    """The given entries as the index needs them (any status: the follower keeps only `ready`)."""
    rows = await db.fetch(_INDEXABLE + " WHERE id = ANY($1::text[])", entry_ids)
    return [_indexable(r) for r in rows]


async def ready_entries_after(after_seq: int, limit: int) -> list[IndexableEntryRow]:
    """The next ready entries, for a rebuild."""
    rows = await db.fetch(_INDEXABLE + " WHERE status = 'ready' AND seq > $1 ORDER BY seq LIMIT $2", after_seq, limit)
    return [_indexable(r) for r in rows]


async def count_ready_entries() -> int:
    """How many entries a rebuild writes."""
    row = await db.fetchrow("SELECT count(*) AS n FROM context_entries WHERE status = 'ready'")
    return int(row["n"]) if row else 0
