"""The change logs search replicas follow (`corpus_index_log`, `context_entry_index_log`): where their head is."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from groundwork.persistence import db

IndexLog = Literal["corpus", "packages"]
# The log each index follows (never a caller's string: the table name is part of the SQL).
_TABLES: dict[IndexLog, str] = {"corpus": "corpus_index_log", "packages": "context_entry_index_log"}


@dataclass(frozen=True)
class LogPosition:
    """The head of a change log, how many changes lie after a position, and how old the oldest of them is."""

    head_seq: int
    changes_after: int
    oldest_after_seconds: float


async def log_position(log: IndexLog, after_seq: int) -> LogPosition:
    """Where the log's head is relative to `after_seq` (PostgreSQL's clock: no skew between nodes)."""
    table = _TABLES[log]
    row = await db.fetchrow(
        f"SELECT (SELECT coalesce(max(seq), 0) FROM {table}) AS head, count(*) AS behind,"
        f" coalesce(extract(epoch FROM now() - min(created_at)), 0)::float8 AS oldest FROM {table} WHERE seq > $1",
        after_seq,
    )
    assert row is not None
    return LogPosition(int(row["head"]), int(row["behind"]), max(0.0, float(row["oldest"])))
