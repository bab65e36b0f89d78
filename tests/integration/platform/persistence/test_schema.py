"""The Piccolo tables and the SQL migrations describe the same schema."""

from __future__ import annotations

import uuid
from urllib.parse import urlsplit, urlunsplit

import asyncpg

from groundwork.persistence import db
from groundwork.persistence.migrate import FORMER_NAMES, apply_migrations, migration_files
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


async def test_a_database_that_applied_a_migration_under_its_former_name_is_not_migrated_twice(
    postgres_dsn: str,
) -> None:
    name = f"gw_renamed_{uuid.uuid4().hex[:12]}"
    admin = await asyncpg.connect(postgres_dsn)
    await admin.execute(f'CREATE DATABASE "{name}"')
    dsn = urlunsplit(urlsplit(postgres_dsn)._replace(path=f"/{name}"))
    try:
        await apply_migrations(dsn)
        conn = await asyncpg.connect(dsn)
        try:
            # As a database migrated on a branch recorded them, before they were renumbered.
            for current, former in FORMER_NAMES.items():
                await conn.execute("UPDATE schema_migrations SET name = $1 WHERE name = $2", former, current)

            assert await apply_migrations(dsn) == []  # neither is run again (each would fail: its columns exist)

            recorded = {r["name"] for r in await conn.fetch("SELECT name FROM schema_migrations")}
            assert set(FORMER_NAMES) <= recorded and not set(FORMER_NAMES.values()) & recorded
            assert {name for name, _ in migration_files()} == recorded
        finally:
            await conn.close()
    finally:
        await admin.execute(f'DROP DATABASE "{name}" WITH (FORCE)')
        await admin.close()
