"""Forward-only SQL migrations, applied in file-name order under an advisory lock."""

from __future__ import annotations

from importlib import resources

import asyncpg

# Any constant works; it only has to be the same in every process that migrates.
_MIGRATION_LOCK = 7_301_942_118

# Migrations renumbered after databases had applied them under their first name (two branches took the same
# number; the files are unchanged): such a database has them already, and running them again would fail.
FORMER_NAMES = {
    "0016_document_dates": "0015_document_dates",
    "0017_notification_inbox": "0015_notification_inbox",
}


def migration_files() -> list[tuple[str, str]]:
    """Every migration shipped with the package as (name, sql), in order."""
    folder = resources.files("groundwork.persistence") / "migrations"
    files = sorted((f for f in folder.iterdir() if f.name.endswith(".sql")), key=lambda f: f.name)
    return [(f.name.removesuffix(".sql"), f.read_text(encoding="utf-8")) for f in files]


async def apply_migrations(dsn: str) -> list[str]:
    """Apply every migration not yet applied; return the names applied now (safe to run concurrently)."""
    conn = await asyncpg.connect(dsn)
    try:
        await conn.execute("SELECT pg_advisory_lock($1)", _MIGRATION_LOCK)
        try:
            await conn.execute(
                "CREATE TABLE IF NOT EXISTS schema_migrations ("
                " name text PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())"
            )
            done = {r["name"] for r in await conn.fetch("SELECT name FROM schema_migrations")}
            applied: list[str] = []
            for name, sql in migration_files():
                if name in done:
                    continue
                former = FORMER_NAMES.get(name)
                if former is not None and former in done:
                    await conn.execute("UPDATE schema_migrations SET name = $1 WHERE name = $2", name, former)
                    continue
                async with conn.transaction():
                    await conn.execute(sql)
                    await conn.execute("INSERT INTO schema_migrations (name) VALUES ($1)", name)
                applied.append(name)
            return applied
        finally:
            await conn.execute("SELECT pg_advisory_unlock($1)", _MIGRATION_LOCK)
    finally:
        await conn.close()
