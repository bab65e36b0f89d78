"""Administration of the database: `migrate` and `demo` (the `workspaces` commands join them here)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import click

from groundwork.cli.runner import data_dir_option, database, say, secret_keyring


@click.command()
@data_dir_option
def migrate(data_dir: Path | None) -> None:
    """Apply the database schema (forward-only migrations), then seal secrets stored before sealing existed."""
    from groundwork.persistence import db
    from groundwork.persistence.migrate import apply_migrations
    from groundwork.services.webhooks.secrets import seal_legacy_webhook_secrets

    keyring = secret_keyring(data_dir)

    async def main(dsn: str) -> tuple[list[str], int]:
        applied = await apply_migrations(dsn)
        async with db.connection(dsn):
            return applied, await seal_legacy_webhook_secrets(keyring)

    with database(data_dir) as dsn:
        applied, sealed = asyncio.run(main(dsn))
    say(f"applied: {', '.join(applied)}" if applied else "schema is up to date")
    if sealed:
        say(f"sealed the signing secrets of {sealed} webhook endpoint(s)")
    if keyring is None:
        say("warning: GROUNDWORK_SECRET_KEY is not set: webhook signing secrets cannot be sealed or issued")


@click.command()
@data_dir_option
def demo(data_dir: Path | None) -> None:
    """Seed the demo workspace (once) and print a new API key for `admin` with every scope."""
    from groundwork.demo.seed import seed_demo
    from groundwork.persistence.migrate import apply_migrations

    async def main(dsn: str) -> str:
        await apply_migrations(dsn)
        return await seed_demo(dsn)

    with database(data_dir) as dsn:
        key = asyncio.run(main(dsn))
    say("demo workspace `demo` is ready; API key for `admin`:")
    click.echo(key)
