"""The `groundwork` command: the embedded stack, the production processes, keys, import and demo."""

from __future__ import annotations

import asyncio
import logging
import os
import sys
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

import click

from groundwork.config import Settings, default_data_dir
from groundwork.domain.errors import GroundworkError
from groundwork.domain.scopes import ALL_SCOPES

T = TypeVar("T")

data_dir_option = click.option(
    "--data-dir",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="Data dir of the embedded stack (default: $GROUNDWORK_HOME, else ./.groundwork). Ignored when DATABASE_URL is set.",
)


def _say(message: str) -> None:
    click.echo(message, err=True)


@contextmanager
def _database(data_dir: Path | None) -> Iterator[str]:
    """The DSN of `DATABASE_URL`, else of the embedded PostgreSQL in the data dir (started if needed)."""
    from groundwork.stack.postgres import database_url_for

    dsn, handle = database_url_for((data_dir or default_data_dir()).resolve())
    try:
        yield dsn
    finally:
        if handle is not None:
            handle.stop()


def _run_with_db(data_dir: Path | None, work: Callable[[], Awaitable[T]], *, migrate: bool = True) -> T:
    """Run `work` with the database connected (and migrated), turning domain errors into a clean exit."""
    from groundwork.persistence import db
    from groundwork.persistence.migrate import apply_migrations

    async def main(dsn: str) -> T:
        if migrate:
            await apply_migrations(dsn)
        async with db.connection(dsn):
            return await work()

    with _database(data_dir) as dsn:
        try:
            return asyncio.run(main(dsn))
        except GroundworkError as error:
            _say(f"error: {error.detail}")
            raise SystemExit(2) from None


@click.group()
def cli() -> None:
    """Groundwork: proposal-first work item enhancement, evidence search and notifications."""


@cli.command()
@click.option("--host", default="127.0.0.1", show_default=True)
@click.option("--port", default=8000, show_default=True, type=int)
@data_dir_option
@click.option("--temporal-port", default=7233, show_default=True, type=int)
@click.option("--ui-port", default=8233, show_default=True, type=int)
@click.option("--demo", is_flag=True, help="Seed the demo workspace and print an API key with every scope.")
def up(host: str, port: int, data_dir: Path | None, temporal_port: int, ui_port: int, demo: bool) -> None:
    """Start the whole embedded stack: PostgreSQL, Temporal (with UI), the worker and the API."""
    from groundwork.stack.supervisor import UpOptions, run_up

    options = UpOptions(
        host=host,
        port=port,
        data_dir=(data_dir or default_data_dir()).resolve(),
        temporal_port=temporal_port,
        ui_port=ui_port,
        demo=demo,
    )
    raise SystemExit(run_up(options))


@cli.command()
@click.option("--host", default="127.0.0.1", show_default=True)
@click.option("--port", default=8000, show_default=True, type=int)
@click.option("--workers", default=1, show_default=True, type=int, help="Uvicorn worker processes.")
def serve(host: str, port: int, workers: int) -> None:
    """Serve the API only (production): PostgreSQL from DATABASE_URL, Temporal from TEMPORAL_ADDRESS."""
    import uvicorn

    Settings.from_env()  # fail fast with a clear message when DATABASE_URL is missing
    uvicorn.run(
        "groundwork.api.app:app_from_env",
        factory=True,
        host=host,
        port=port,
        workers=workers,
        proxy_headers=True,
        log_level="info",
    )


@cli.command()
def worker() -> None:
    """Run the Temporal worker only (production): same environment as `serve`."""
    from groundwork.worker import main as worker_main

    worker_main()


@cli.command()
@data_dir_option
def migrate(data_dir: Path | None) -> None:
    """Apply the database schema (forward-only migrations)."""
    from groundwork.persistence.migrate import apply_migrations

    with _database(data_dir) as dsn:
        applied = asyncio.run(apply_migrations(dsn))
    _say(f"applied: {', '.join(applied)}" if applied else "schema is up to date")


@cli.command()
@data_dir_option
def demo(data_dir: Path | None) -> None:
    """Seed the demo workspace (once) and print a new API key for `admin` with every scope."""
    from groundwork.demo.seed import seed_demo
    from groundwork.persistence.migrate import apply_migrations

    async def main(dsn: str) -> str:
        await apply_migrations(dsn)
        return await seed_demo(dsn)

    with _database(data_dir) as dsn:
        key = asyncio.run(main(dsn))
    _say("demo workspace `demo` is ready; API key for `admin`:")
    click.echo(key)


@cli.group()
def keys() -> None:
    """Issue, list and revoke API keys."""


@keys.command("create")
@click.option("--workspace", "workspace_slug", required=True, help="Workspace slug.")
@click.option("--principal", "principal_name", required=True, help="Principal name (created if new).")
@click.option(
    "--scope", "scopes", multiple=True, type=click.Choice(ALL_SCOPES), help="A scope; repeat for more."
)
@click.option("--all-scopes", is_flag=True, help="Every scope.")
@click.option("--admin", is_flag=True, help="Make the principal a workspace admin who sees every project.")
@click.option(
    "--kind",
    default="user",
    type=click.Choice(["user", "service", "agent"]),
    show_default=True,
    help="Kind of a principal created now.",
)
@data_dir_option
def keys_create(
    workspace_slug: str,
    principal_name: str,
    scopes: tuple[str, ...],
    all_scopes: bool,
    admin: bool,
    kind: str,
    data_dir: Path | None,
) -> None:
    """Create a key; prints the key alone on stdout (it is never shown again)."""
    from groundwork.api.services.api_keys import issue_key

    if bool(scopes) == all_scopes:
        raise click.UsageError("give either --scope (one or more) or --all-scopes")
    issued = _run_with_db(
        data_dir,
        lambda: issue_key(
            workspace_slug, principal_name, None if all_scopes else list(scopes), admin=admin, kind=kind
        ),
    )
    if issued.created_principal:
        _say(f"created principal {principal_name!r} (no project memberships)")
    _say(f"key id {issued.api_key_id}; store the key now, it is not shown again:")
    click.echo(issued.key)


@keys.command("list")
@click.option("--workspace", "workspace_slug", default=None, help="Only this workspace.")
@data_dir_option
def keys_list(workspace_slug: str | None, data_dir: Path | None) -> None:
    """List keys (never the secret): id, prefix, workspace, principal, scopes, state."""
    from groundwork.api.services.api_keys import list_keys

    rows = _run_with_db(data_dir, lambda: list_keys(workspace_slug))
    for row in rows:
        state = f"revoked {row['revoked_at']:%Y-%m-%d}" if row["revoked_at"] else "active"
        used = f"{row['last_used_at']:%Y-%m-%d %H:%M}" if row["last_used_at"] else "never"
        click.echo(
            f"{row['id']}  {row['key_prefix']}…  {row['workspace']}/{row['principal']}  {state}  "
            f"last used {used}  {' '.join(row['scopes'])}"
        )
    if not rows:
        _say("no keys")


@keys.command("revoke")
@click.argument("key_id")
@data_dir_option
def keys_revoke(key_id: str, data_dir: Path | None) -> None:
    """Revoke a key by its id (`key_...`); it stops working at once."""
    from groundwork.api.services.api_keys import revoke_key

    if not _run_with_db(data_dir, lambda: revoke_key(key_id)):
        _say(f"error: no active key {key_id!r}")
        raise SystemExit(1)
    _say(f"revoked {key_id}")


@cli.command("import")
@click.argument("file", type=click.File("r", encoding="utf-8"))
@click.option("--workspace", "workspace_slug", required=True, help="Workspace slug.")
@click.option(
    "--principal",
    "principal_name",
    default="admin",
    show_default=True,
    help="The principal the change history names.",
)
@data_dir_option
def import_(file: Any, workspace_slug: str, principal_name: str, data_dir: Path | None) -> None:
    """Load work items from a JSON Lines file; bad lines are reported by number and skipped."""
    from groundwork.api.services.work_item_import import import_work_items

    report = _run_with_db(data_dir, lambda: import_work_items(workspace_slug, principal_name, file))
    for number, reason in report.rejected:
        _say(f"line {number}: skipped: {reason}")
    _say(f"imported {len(report.created)} work item(s), skipped {len(report.rejected)} line(s)")
    if report.rejected:
        raise SystemExit(1)


@cli.command()
@data_dir_option
def mcp(data_dir: Path | None) -> None:
    """Serve MCP over stdio for local clients; the key comes from GROUNDWORK_API_KEY."""
    from groundwork.api.mcp.stdio import run_stdio

    key = os.environ.get("GROUNDWORK_API_KEY")
    if not key:
        raise click.UsageError("set GROUNDWORK_API_KEY to the API key this MCP session acts with")
    with _database(data_dir) as dsn:
        run_stdio(dsn, key)


def main() -> None:
    """Console-script entry point."""
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr)
    cli()


if __name__ == "__main__":
    main()
