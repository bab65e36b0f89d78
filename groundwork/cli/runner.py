"""What every command shares: the `--data-dir` option, the database, the worker, the key ring, and stderr."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from typing import Any, TypeVar

import click

from groundwork.config import (
    DEFAULT_PUBLIC_URL,
    Settings,
    database_url_from_env,
    default_data_dir,
    public_url_from_env,
    secret_key,
    temporal_address_from_env,
)
from groundwork.config import index_dir as configured_index_dir
from groundwork.domain.errors import GroundworkError

T = TypeVar("T")

data_dir_option = click.option(
    "--data-dir",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="Data dir of the embedded stack (default: $GROUNDWORK_HOME, else ./.groundwork). "
    "Ignored when DATABASE_URL is set.",
)


class SettingOption(click.Option):
    """An option that, when not given, takes its setting from `groundwork.config` (where `envvar=` would read it)."""

    def __init__(self, *args: Any, setting: Callable[[], str | None], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.setting = setting

    def resolve_envvar_value(self, ctx: click.Context) -> str | None:
        """The setting's text, parsed and reported by click exactly as an environment variable's."""
        return self.setting()


def say(message: str) -> None:
    """Print a message for the operator on stderr."""
    click.echo(message, err=True)


def report(error: GroundworkError) -> None:
    """A domain error on stderr, with each invalid field on its own line."""
    say(f"error: {error.detail}")
    for field_error in error.extra.get("errors", []):
        say(f"  {field_error['path']}: {field_error['message']}")


@contextmanager
def database(data_dir: Path | None) -> Iterator[str]:
    """The DSN of `DATABASE_URL`, else of the embedded PostgreSQL in the data dir (started if needed)."""
    from groundwork.stack.postgres import database_url_for

    dsn, handle = database_url_for((data_dir or default_data_dir()).resolve())
    try:
        yield dsn
    finally:
        if handle is not None:
            handle.stop()


def run_with_db(data_dir: Path | None, work: Callable[[], Awaitable[T]], *, migrate: bool = True) -> T:
    """Run `work` with the database connected (and migrated), turning domain errors into a clean exit."""
    from groundwork.persistence import db
    from groundwork.persistence.migrate import apply_migrations

    async def main(dsn: str) -> T:
        if migrate:
            await apply_migrations(dsn)
        async with db.connection(dsn):
            return await work()

    with database(data_dir) as dsn:
        try:
            return asyncio.run(main(dsn))
        except GroundworkError as error:
            report(error)
            raise SystemExit(2) from None


def secret_keyring(data_dir: Path | None) -> Any:
    """The key ring of `GROUNDWORK_SECRET_KEY`, else of the data dir's `secret_key` file; None if neither."""
    from groundwork.platform.secrets.keyring import KeyRing, KeyRingError

    text = secret_key((data_dir or default_data_dir()).resolve())
    try:
        return KeyRing.parse(text) if text else None
    except KeyRingError as exc:
        raise click.UsageError(str(exc)) from None


def run_with_dsn(data_dir: Path | None, work: Callable[[str], Awaitable[T]]) -> T:
    """Like `run_with_db`, for work that also needs the DSN (to build its Settings)."""
    from groundwork.persistence import db
    from groundwork.persistence.migrate import apply_migrations

    async def main(dsn: str) -> T:
        await apply_migrations(dsn)
        async with db.connection(dsn):
            return await work(dsn)

    with database(data_dir) as dsn:
        try:
            return asyncio.run(main(dsn))
        except GroundworkError as error:
            report(error)
            raise SystemExit(2) from None


def corpus_index_dir(data_dir: Path | None) -> Path:
    """Where the worker of this data dir keeps the corpus index (`GROUNDWORK_INDEX_DIR` wins)."""
    return configured_index_dir(data_dir)


async def worker_client(settings: Settings) -> Any:
    """A Temporal client if a worker polls the task queue now, else None (the work then runs here)."""
    from groundwork.platform.temporal.client import connect_client
    from groundwork.services.evidence_search.sources import worker_polls

    try:
        client = await asyncio.wait_for(connect_client(settings), 3.0)
    except Exception:  # no Temporal reachable: the in-process path needs none
        return None
    return client if await worker_polls(client, settings.temporal_task_queue) else None


def stack_settings(dsn: str, data_dir: Path | None) -> Settings:
    """Settings from the environment; on an embedded stack, Temporal where the data dir's running `up` put it."""
    from groundwork.stack.addresses import recorded_addresses

    settings = Settings.from_env(database_url=dsn)
    if database_url_from_env() or temporal_address_from_env():
        return settings  # the operator's environment names the stack
    recorded = recorded_addresses((data_dir or default_data_dir()).resolve())
    if recorded is None:
        return settings
    return replace(
        settings,
        temporal_address=recorded.temporal,
        temporal_namespace=recorded.temporal_namespace,
        temporal_task_queue=recorded.temporal_task_queue,
    )


def stack_api_url(data_dir: Path | None) -> str:
    """`GROUNDWORK_PUBLIC_URL`, else the API of the data dir's running `up`, else the local default."""
    from groundwork.stack.addresses import recorded_addresses

    if configured := public_url_from_env():
        return configured
    recorded = recorded_addresses((data_dir or default_data_dir()).resolve())
    return recorded.api if recorded is not None else DEFAULT_PUBLIC_URL
