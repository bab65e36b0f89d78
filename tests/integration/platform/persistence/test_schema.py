"""The Piccolo tables and the SQL migrations describe the same schema."""

from __future__ import annotations

from groundwork.persistence import db
from groundwork.persistence.migrate import apply_migrations
from groundwork.persistence.tables import ALL_TABLES


async def test_every_piccolo_column_exists_in_the_migrated_schema(database: str) -> None:
    for table in ALL_TABLES:
        rows = await db.fetch(
            "SELECT column_name FROM information_schema.columns WHERE table_name = $1", table._meta.tablename
        )
        actual = {r["column_name"] for r in rows}
        declared = {c._meta.db_column_name for c in table._meta.columns}
        assert declared == actual, f"{table._meta.tablename}: declared {declared ^ actual} differ"


async def test_migrating_twice_applies_nothing_the_second_time(database: str) -> None:
    assert await apply_migrations(database) == []
