"""The `groundwork` command: the embedded stack, the production processes, keys, import and demo."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import sys
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import click

from groundwork.config import Settings, default_data_dir
from groundwork.config import index_dir as configured_index_dir
from groundwork.domain.errors import GroundworkError
from groundwork.domain.tenancy.scopes import ALL_SCOPES

if TYPE_CHECKING:
    from groundwork.persistence.repositories.context_engine.providers import ProviderRow
    from groundwork.persistence.repositories.tenancy.connected_apps import ConnectedAppRow
    from groundwork.persistence.repositories.webhooks.attempts import AttemptTailRow

T = TypeVar("T")

data_dir_option = click.option(
    "--data-dir",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="Data dir of the embedded stack (default: $GROUNDWORK_HOME, else ./.groundwork). "
    "Ignored when DATABASE_URL is set.",
)


def _say(message: str) -> None:
    click.echo(message, err=True)


def _report(error: GroundworkError) -> None:
    """A domain error on stderr, with each invalid field on its own line."""
    _say(f"error: {error.detail}")
    for field_error in error.extra.get("errors", []):
        _say(f"  {field_error['path']}: {field_error['message']}")


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
            _report(error)
            raise SystemExit(2) from None


@click.group()
def cli() -> None:
    """Groundwork: proposal-first work item enhancement, evidence search and notifications."""


@cli.command()
@click.option("--host", default="127.0.0.1", show_default=True)
@click.option("--port", default=8000, show_default=True, type=int)
@data_dir_option
@click.option(
    "--internal-port", default=8001, show_default=True, type=int, help="The internal API's port (on 127.0.0.1)."
)
@click.option("--temporal-port", default=7233, show_default=True, type=int)
@click.option("--ui-port", default=8233, show_default=True, type=int)
@click.option("--demo", is_flag=True, help="Seed the demo workspace and print an API key with every scope.")
@click.option("--smtp-sink", is_flag=True, help="Run a local SMTP server that prints received mail; send e-mail to it.")
@click.option("--smtp-port", default=2525, show_default=True, type=int, help="Port of the --smtp-sink server.")
@click.option(
    "--worker-metrics-port",
    default=8002,
    show_default=True,
    type=int,
    help="Port of the worker's Prometheus /metrics (on 127.0.0.1).",
)
def up(
    host: str,
    port: int,
    data_dir: Path | None,
    internal_port: int,
    temporal_port: int,
    ui_port: int,
    demo: bool,
    smtp_sink: bool,
    smtp_port: int,
    worker_metrics_port: int,
) -> None:
    """Start the whole embedded stack: PostgreSQL, Temporal (with UI), the worker and the API."""
    from groundwork.stack.supervisor import UpOptions, run_up

    options = UpOptions(
        host=host,
        port=port,
        internal_port=internal_port,
        data_dir=(data_dir or default_data_dir()).resolve(),
        temporal_port=temporal_port,
        ui_port=ui_port,
        demo=demo,
        smtp_sink=smtp_sink,
        smtp_port=smtp_port,
        worker_metrics_port=worker_metrics_port,
    )
    raise SystemExit(run_up(options))


@cli.command()
@click.option("--host", default="127.0.0.1", show_default=True)
@click.option("--port", default=8000, show_default=True, type=int)
@click.option("--workers", default=1, show_default=True, type=int, help="Uvicorn worker processes.")
@click.option("--access-log/--no-access-log", default=False, show_default=True, help="Log every request (costs time).")
@click.option(
    "--internal-host",
    default=None,
    help="Address of the internal API's listener (/internal/v1).  [default: $GROUNDWORK_INTERNAL_HOST, else 127.0.0.1]",
)
@click.option(
    "--internal-port",
    default=None,
    type=int,
    help="Port of the internal API's listener; never the public one.  [default: $GROUNDWORK_INTERNAL_PORT, else 8001]",
)
def serve(
    host: str, port: int, workers: int, internal_host: str | None, internal_port: int | None, access_log: bool
) -> None:
    """Serve the API only (production): PostgreSQL from DATABASE_URL, Temporal from TEMPORAL_ADDRESS.

    The public API listens on --host:--port; the internal API (/internal/v1, provider keys only) on
    its own listener, --internal-host:--internal-port, which should stay unreachable from outside.
    """
    # Every worker process builds its apps from the environment: it learns the internal listener there.
    if internal_host is not None:
        os.environ["GROUNDWORK_INTERNAL_HOST"] = internal_host
    if internal_port is not None:
        os.environ["GROUNDWORK_INTERNAL_PORT"] = str(internal_port)
    # Fail fast with a clear message when DATABASE_URL is missing (or the key ring is malformed).
    settings = Settings.from_env()
    if settings.internal_port == port:
        raise click.UsageError("--internal-port must differ from --port: the internal API never shares a listener")
    if settings.keyring is None:
        _say(
            "warning: GROUNDWORK_SECRET_KEY is not set: webhook endpoints cannot be created (their secrets are "
            "stored sealed), notification action links cannot be verified and chat webhook URLs cannot be stored"
        )
    from groundwork.api.serving import serve_listeners

    serve_listeners(
        host=host,
        port=port,
        internal_host=settings.internal_host,
        internal_port=settings.internal_port,
        workers=workers,
        access_log=access_log,
    )


@cli.command()
@click.option(
    "--metrics-port",
    type=int,
    default=None,
    envvar="GROUNDWORK_WORKER_METRICS_PORT",
    help="Serve Prometheus metrics (Groundwork's and the Temporal SDK's) at http://HOST:PORT/metrics.  "
    "[default: $GROUNDWORK_WORKER_METRICS_PORT, else none]",
)
@click.option(
    "--metrics-host",
    default="127.0.0.1",
    show_default=True,
    envvar="GROUNDWORK_WORKER_METRICS_HOST",
    help="Address of the metrics listener.",
)
def worker(metrics_port: int | None, metrics_host: str) -> None:
    """Run the Temporal worker only (production): same environment as `serve`."""
    from groundwork.worker import main as worker_main

    worker_main(metrics_host=metrics_host, metrics_port=metrics_port)


@cli.command()
@click.option(
    "--api-url",
    default=None,
    help="The API to probe.  [default: $GROUNDWORK_PUBLIC_URL, else http://127.0.0.1:8000]",
)
@click.option("--json", "as_json", is_flag=True, help="Print the status as one JSON object.")
@data_dir_option
def status(api_url: str | None, as_json: bool, data_dir: Path | None) -> None:
    """The stack's health on one screen: API, PostgreSQL, Temporal, workers, outbox, deliveries, index lag.

    Reads the same environment as `serve` and `worker` (else the embedded stack of the data dir,
    which it never starts). Exit code 1 when any check fails.
    """
    import json

    from groundwork.persistence import db
    from groundwork.platform.observability.stack_status import StackStatus, stack_status
    from groundwork.search import corpus_index
    from groundwork.stack.postgres import running_database_url

    url = api_url or os.environ.get("GROUNDWORK_PUBLIC_URL") or "http://127.0.0.1:8000"
    dsn = os.environ.get("DATABASE_URL") or running_database_url((data_dir or default_data_dir()).resolve())
    corpus_index.configure(_corpus_index_dir(data_dir))

    async def main() -> StackStatus:
        settings = Settings.from_env(database_url=dsn or "postgresql://unavailable")
        connected = False
        if dsn is not None:
            try:
                await asyncio.wait_for(db.connect(dsn, max_size=2), 5.0)
                connected = True
            except Exception:  # reported as PostgreSQL down
                connected = False
        try:
            return await stack_status(settings, url, database_connected=connected)
        finally:
            if connected:
                await db.disconnect()

    result = asyncio.run(main())
    if as_json:
        click.echo(json.dumps(result.as_json(), indent=2))
    else:
        width = max(len(check.name) for check in result.checks)
        for check in result.checks:
            click.echo(f"{'ok  ' if check.healthy else 'FAIL'}  {check.name:<{width}}  {check.detail}")
        click.echo("healthy" if result.healthy else "UNHEALTHY")
    sys.stdout.flush()
    sys.stderr.flush()
    # After a failed Temporal connect the SDK's runtime threads may still call into Python while the
    # interpreter finalizes, which can abort the process (seen as SIGABRT): the exit code is this
    # command's answer, so it leaves without finalizing (it holds nothing that needs cleaning up).
    os._exit(0 if result.healthy else 1)


@cli.command()
@data_dir_option
def migrate(data_dir: Path | None) -> None:
    """Apply the database schema (forward-only migrations), then seal secrets stored before sealing existed."""
    from groundwork.persistence import db
    from groundwork.persistence.migrate import apply_migrations
    from groundwork.services.webhooks.secrets import seal_legacy_webhook_secrets

    keyring = _keyring(data_dir)

    async def main(dsn: str) -> tuple[list[str], int]:
        applied = await apply_migrations(dsn)
        async with db.connection(dsn):
            return applied, await seal_legacy_webhook_secrets(keyring)

    with _database(data_dir) as dsn:
        applied, sealed = asyncio.run(main(dsn))
    _say(f"applied: {', '.join(applied)}" if applied else "schema is up to date")
    if sealed:
        _say(f"sealed the signing secrets of {sealed} webhook endpoint(s)")
    if keyring is None:
        _say("warning: GROUNDWORK_SECRET_KEY is not set: webhook signing secrets cannot be sealed or issued")


def _keyring(data_dir: Path | None) -> Any:
    """The key ring of `GROUNDWORK_SECRET_KEY`, else of the data dir's `secret_key` file; None if neither."""
    from groundwork.platform.secrets.keyring import KeyRing, KeyRingError, ring_text

    text = ring_text((data_dir or default_data_dir()).resolve())
    try:
        return KeyRing.parse(text) if text else None
    except KeyRingError as exc:
        raise click.UsageError(str(exc)) from None


@cli.group()
def secrets() -> None:
    """Secrets at rest (webhook signing secrets, chat webhook URLs) under GROUNDWORK_SECRET_KEY."""


@secrets.command("reseal")
@data_dir_option
def secrets_reseal(data_dir: Path | None) -> None:
    """Re-encrypt every sealed secret under the first key of the ring (after putting a new key first)."""
    from groundwork.platform.secrets.at_rest import reseal_answers
    from groundwork.services.notifications.preferences import reseal_chat_urls
    from groundwork.services.webhooks.secrets import reseal_webhook_secrets

    keyring = _keyring(data_dir)
    if keyring is None:
        raise click.UsageError("GROUNDWORK_SECRET_KEY is not set (and the data dir has no secret_key file)")

    async def reseal() -> list[tuple[int, int]]:
        return [await step(keyring) for step in (reseal_webhook_secrets, reseal_answers, reseal_chat_urls)]

    (endpoints, bad_endpoints), (answers, bad_answers), (urls, bad_urls) = _run_with_db(data_dir, reseal)
    _say(
        f"resealed under the current key: {endpoints} webhook endpoint(s), "
        f"{answers} stored answer(s), {urls} chat webhook URL(s)"
    )
    unreadable = bad_endpoints + bad_answers + bad_urls
    if unreadable:
        _say(f"error: {unreadable} sealed value(s) open under no key of the ring; see the log")
        raise SystemExit(1)


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
@click.option("--scope", "scopes", multiple=True, type=click.Choice(ALL_SCOPES), help="A scope; repeat for more.")
@click.option("--all-scopes", is_flag=True, help="Every scope.")
@click.option("--admin", is_flag=True, help="Make the principal a workspace admin who sees every project.")
@click.option(
    "--kind",
    default="user",
    type=click.Choice(["user", "service", "agent", "provider"]),
    show_default=True,
    help="Kind of a principal created now (`provider`: an internal context provider, the only kind that "
    "reaches /internal/v1).",
)
@click.option(
    "--app",
    "app_id",
    default=None,
    help="Bind the key to a connected app (`app_...`): it then works only "
    "while the app is active, within its declared direction.",
)
@click.option(
    "--member",
    "members",
    multiple=True,
    metavar="PROJECT=ROLE",
    help="Give the principal a role (lead, contributor, viewer, guest) on a project (key or id); repeat for more. "
    "A provider contributes only where its role may write (lead, contributor).",
)
@data_dir_option
def keys_create(
    workspace_slug: str,
    principal_name: str,
    scopes: tuple[str, ...],
    all_scopes: bool,
    admin: bool,
    kind: str,
    app_id: str | None,
    members: tuple[str, ...],
    data_dir: Path | None,
) -> None:
    """Create a key; prints the key alone on stdout (it is never shown again)."""
    from groundwork.services.tenancy.api_keys import IssuedKey, issue_key
    from groundwork.services.tenancy.memberships import Membership, grant_memberships, planned_memberships

    if bool(scopes) == all_scopes:
        raise click.UsageError("give either --scope (one or more) or --all-scopes")

    async def create() -> tuple[IssuedKey, list[Membership]]:
        planned = await planned_memberships(workspace_slug, list(members))  # refused before any key exists
        issued = await issue_key(
            workspace_slug, principal_name, None if all_scopes else list(scopes), admin=admin, kind=kind, app_id=app_id
        )
        await grant_memberships(issued.principal_id, planned)
        return issued, planned

    issued, granted = _run_with_db(data_dir, create)
    if issued.created_principal and not granted:
        _say(f"created principal {principal_name!r} (no project memberships)")
    elif issued.created_principal:
        _say(f"created principal {principal_name!r}")
    for membership in granted:
        _say(f"{principal_name} is {membership.role} on {membership.project_key}")
    _say(f"key id {issued.api_key_id}; store the key now, it is not shown again:")
    click.echo(issued.key)


@keys.command("list")
@click.option("--workspace", "workspace_slug", default=None, help="Only this workspace.")
@data_dir_option
def keys_list(workspace_slug: str | None, data_dir: Path | None) -> None:
    """List keys (never the secret): id, prefix, workspace, principal, scopes, state."""
    from groundwork.services.tenancy.api_keys import list_keys

    rows = _run_with_db(data_dir, lambda: list_keys(workspace_slug))
    for row in rows:
        state = f"revoked {row.revoked_at:%Y-%m-%d}" if row.revoked_at else "active"
        used = f"{row.last_used_at:%Y-%m-%d %H:%M}" if row.last_used_at else "never"
        app = f"  app {row.app_id}" if row.app_id else ""
        click.echo(
            f"{row.id}  {row.key_prefix}…  {row.workspace}/{row.principal}  {state}  "
            f"last used {used}{app}  {' '.join(row.scopes)}"
        )
    if not rows:
        _say("no keys")


@keys.command("revoke")
@click.argument("key_id")
@data_dir_option
def keys_revoke(key_id: str, data_dir: Path | None) -> None:
    """Revoke a key by its id (`key_...`); it stops working at once."""
    from groundwork.services.tenancy.api_keys import revoke_key

    if not _run_with_db(data_dir, lambda: revoke_key(key_id)):
        _say(f"error: no active key {key_id!r}")
        raise SystemExit(1)
    _say(f"revoked {key_id}")


@cli.group()
def apps() -> None:
    """Register, activate and list connected apps (assistants, IDEs, chat and e-mail sinks)."""


def _app_line(app: ConnectedAppRow) -> str:
    authority = ",".join(app.field_authority) or "-"
    return (
        f"{app.id}  {app.workspace or ''}  {app.name!r}  {app.kind}  direction {app.direction}"
        f"  authority {authority}  provenance {app.provenance!r}  conflict {app.conflict}  {app.status}"
        f"  {app.key_count} key(s)"
    )


@apps.command("register")
@click.option("--workspace", "workspace_slug", required=True, help="Workspace slug.")
@click.option("--name", required=True, help="The app's name (unique in the workspace).")
@click.option("--kind", required=True, type=click.Choice(["assistant", "ide", "chat", "email"]))
@click.option(
    "--direction",
    required=True,
    type=click.Choice(["read", "propose", "deliver"]),
    help="read: reads only; propose: also submits proposals; deliver: an action sink.",
)
@click.option(
    "--field-authority",
    "field_authority",
    multiple=True,
    help="A field the app may propose or set (repeat); e.g. status, description.",
)
@click.option("--provenance", required=True, help="How the app labels what it submits.")
@click.option(
    "--conflict",
    default="reject",
    show_default=True,
    type=click.Choice(["reject"]),
    help="What happens on a version conflict.",
)
@data_dir_option
def apps_register(
    workspace_slug: str,
    name: str,
    kind: str,
    direction: str,
    field_authority: tuple[str, ...],
    provenance: str,
    conflict: str,
    data_dir: Path | None,
) -> None:
    """Register an app with its declaration; its keys work once it is activated."""
    from groundwork.services.tenancy.connected_apps import register_app_in

    declaration = {
        "name": name,
        "kind": kind,
        "direction": direction,
        "field_authority": list(field_authority),
        "provenance": provenance,
        "conflict": conflict,
    }
    app = _run_with_db(data_dir, lambda: register_app_in(workspace_slug, declaration))
    _say("registered (not active yet); bind keys with `groundwork keys create --app ID`, then activate it")
    click.echo(app.id)


@apps.command("activate")
@click.argument("app_id")
@data_dir_option
def apps_activate(app_id: str, data_dir: Path | None) -> None:
    """Activate an app: keys bound to it start working."""
    from groundwork.services.tenancy.connected_apps import set_app_status_by_id

    app = _run_with_db(data_dir, lambda: set_app_status_by_id(app_id, "active"))
    _say(f"{app.id} is active")


@apps.command("deactivate")
@click.argument("app_id")
@data_dir_option
def apps_deactivate(app_id: str, data_dir: Path | None) -> None:
    """Deactivate an app: keys bound to it are refused (403 app_not_active)."""
    from groundwork.services.tenancy.connected_apps import set_app_status_by_id

    app = _run_with_db(data_dir, lambda: set_app_status_by_id(app_id, "inactive"))
    _say(f"{app.id} is inactive")


@apps.command("list")
@click.option("--workspace", "workspace_slug", default=None, help="Only this workspace.")
@data_dir_option
def apps_list(workspace_slug: str | None, data_dir: Path | None) -> None:
    """List apps with their declaration, status and how many keys are bound to them."""
    from groundwork.services.tenancy.connected_apps import list_apps_in

    rows = _run_with_db(data_dir, lambda: list_apps_in(workspace_slug))
    for row in rows:
        click.echo(_app_line(row))
    if not rows:
        _say("no apps")


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
    from groundwork.services.work_items.importer import import_work_items

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
        run_stdio(dsn, key, _corpus_index_dir(data_dir))


@cli.group()
def webhooks() -> None:
    """Watch webhook deliveries."""


def _attempt_line(row: AttemptTailRow) -> str:
    from groundwork.domain.times import timestamp

    answer = str(row.status_code) if row.status_code is not None else "---"
    verdict = "ok" if row.outcome == "succeeded" else "failed"
    if row.outcome == "failed" and row.status == "pending" and row.next_attempt_at is not None:
        verdict = f"retry at {timestamp(row.next_attempt_at)}"
    line = (
        f"{timestamp(row.attempted_at)}  {row.delivery_id}  #{row.number}  {answer}"
        f"  {row.latency_ms:.1f} ms  {verdict}  {row.event_type}  {row.event_id}"
        f"  -> {row.endpoint_id} {row.url}  [{row.workspace}]"
    )
    return f"{line}  error: {row.error}" if row.error else line


@webhooks.command("tail")
@click.option("--workspace", "workspace_slug", default=None, help="Only this workspace.")
@click.option("--endpoint", "endpoint_id", default=None, help="Only this endpoint (`whe_...`).")
@click.option(
    "-n",
    "--lines",
    default=10,
    show_default=True,
    type=click.IntRange(0, 10_000),
    help="Show the last N first.",
)
@click.option("--follow/--no-follow", default=True, show_default=True, help="Keep printing new attempts.")
@click.option(
    "--interval",
    default=0.5,
    show_default=True,
    type=click.FloatRange(0.05, 60),
    help="Seconds between polls.",
)
@data_dir_option
def webhooks_tail(
    workspace_slug: str | None,
    endpoint_id: str | None,
    lines: int,
    follow: bool,
    interval: float,
    data_dir: Path | None,
) -> None:
    """Print delivery attempts as they happen: time, delivery, attempt, answer, latency, event, endpoint."""
    from groundwork.services.webhooks import endpoints as service

    async def tail() -> None:
        after = await service.tail_start(lines, workspace_slug=workspace_slug, endpoint_id=endpoint_id)
        if follow:
            _say("following webhook delivery attempts; Ctrl-C stops")
        while True:
            rows = await service.attempts_after(after, workspace_slug=workspace_slug, endpoint_id=endpoint_id)
            for row in rows:
                click.echo(_attempt_line(row))
                after = row.id
            sys.stdout.flush()
            if not rows and not follow:
                return
            if not rows:
                await asyncio.sleep(interval)

    with contextlib.suppress(KeyboardInterrupt):
        _run_with_db(data_dir, tail)


# -- evidence search corpus -----------------------------------------------------------------------------------


def _run_with_dsn(data_dir: Path | None, work: Callable[[str], Awaitable[T]]) -> T:
    """Like `_run_with_db`, for work that also needs the DSN (to build its Settings)."""
    from groundwork.persistence import db
    from groundwork.persistence.migrate import apply_migrations

    async def main(dsn: str) -> T:
        await apply_migrations(dsn)
        async with db.connection(dsn):
            return await work(dsn)

    with _database(data_dir) as dsn:
        try:
            return asyncio.run(main(dsn))
        except GroundworkError as error:
            _report(error)
            raise SystemExit(2) from None


def _corpus_index_dir(data_dir: Path | None) -> Path:
    """Where the worker of this data dir keeps the corpus index (`GROUNDWORK_INDEX_DIR` wins)."""
    return configured_index_dir(data_dir)


async def _worker_client(settings: Settings) -> Any:
    """A Temporal client if a worker polls the task queue now, else None (the work then runs here)."""
    from groundwork.platform.temporal.client import connect_client
    from groundwork.services.evidence_search.sources import worker_polls

    try:
        client = await asyncio.wait_for(connect_client(settings), 3.0)
    except Exception:  # no Temporal reachable: the in-process path needs none
        return None
    return client if await worker_polls(client, settings.temporal_task_queue) else None


@cli.command()
@click.argument("paths", nargs=-1, required=True, type=click.Path(exists=True, path_type=Path))
@click.option("--project", "project_ref", required=True, help="Project id (`prj_...`), or its key with --workspace.")
@click.option("--workspace", "workspace_slug", default=None, help="Workspace slug, to find --project by key.")
@click.option(
    "--uri",
    default=None,
    help="The source's uri (one file only). Default: the path relative to the folder given, or the file name.",
)
@click.option("--owner", default="cli", show_default=True, help="Who owns the sources.")
@click.option(
    "--classification",
    type=click.Choice(["general", "financial", "staffing"]),
    default=None,
    help="Classify the sources: financial and staffing ones (and their passages) exist only for keys with "
    "context-engine:financial / :staffing. Default: general for new sources, unchanged for known ones.",
)
@click.option("--local", is_flag=True, help="Run the ingest steps in this process even if a worker is running.")
@data_dir_option
def ingest(
    paths: tuple[Path, ...],
    project_ref: str,
    workspace_slug: str | None,
    uri: str | None,
    owner: str,
    classification: str | None,
    local: bool,
    data_dir: Path | None,
) -> None:
    """Ingest files and folders (.txt, .md, .html, .pdf) into a project's evidence corpus.

    A source is identified by its uri: changed content makes a new version that replaces the old
    passages, identical content changes nothing. With a worker running, each source is ingested by
    a CorpusIngestWorkflow; otherwise the same steps run here.
    """
    from groundwork.search import corpus_index
    from groundwork.services.evidence_search import admin as corpus_admin

    try:
        files = corpus_admin.collect_files(list(paths), uri)
    except ValueError as exc:
        raise click.UsageError(str(exc)) from None
    if not files:
        _say("no files to ingest")
        return

    async def work(dsn: str) -> corpus_admin.IngestReport:
        settings = Settings.from_env(database_url=dsn)
        corpus_index.configure(_corpus_index_dir(data_dir))
        project = await corpus_admin.resolve_project(project_ref, workspace_slug)
        client = None if local else await _worker_client(settings)
        _say(
            f"ingesting into {project.key} "
            + ("through the worker (Temporal)" if client is not None else "in this process")
        )
        with click.progressbar(length=len(files), label="Ingesting", file=sys.stderr) as bar:
            return await corpus_admin.ingest_files(
                project,
                files,
                owner=owner,
                classification=classification,
                client=client,
                task_queue=settings.temporal_task_queue,
                progress=lambda _: bar.update(1),
            )

    report = _run_with_dsn(data_dir, work)
    click.echo(f"added      {report.count('added')} source(s), {report.passages_added} passage(s)")
    click.echo(f"unchanged  {report.count('unchanged')} source(s)")
    if report.count("reclassified"):
        click.echo(f"reclassified {report.count('reclassified')} source(s) (same content, new classification)")
    if report.count("skipped"):
        click.echo(f"skipped    {report.count('skipped')} file(s) of a type Groundwork does not read")
    click.echo(f"failed     {report.count('failed')} source(s)")
    for outcome in report.files:
        if outcome.outcome == "failed":
            click.echo(f"  {outcome.uri}: {outcome.reason}")
    if report.count("failed"):
        raise SystemExit(1)


@cli.command()
@data_dir_option
def reindex(data_dir: Path | None) -> None:
    """Rebuild the evidence search index from PostgreSQL; the API serves the old index until the switch."""
    from groundwork.persistence.repositories.evidence_search import index_log
    from groundwork.search.corpus_index import CorpusIndex
    from groundwork.services.evidence_search import admin as corpus_admin

    async def work(dsn: str) -> tuple[int, bool, int]:
        from groundwork.persistence.repositories.context_engine import entry_index_log
        from groundwork.platform.search_replica.package_projection import rebuild_package_index
        from groundwork.search.package_index import PackageIndex

        index = CorpusIndex.at(_corpus_index_dir(data_dir))
        total = await index_log.count_indexable_passages()
        with click.progressbar(length=total, label="Reindexing", file=sys.stderr) as bar:
            written, caught_up = await corpus_admin.reindex(index, bar.update)
        packages = PackageIndex.at(_corpus_index_dir(data_dir))
        with click.progressbar(
            length=await entry_index_log.count_ready_entries(), label="Packages", file=sys.stderr
        ) as bar:
            package_count = await rebuild_package_index(packages, bar.update)
        packages.release_writer()
        return written, caught_up, package_count

    written, caught_up, package_count = _run_with_dsn(data_dir, work)
    click.echo(f"indexed {written} passage(s) into a new index generation")
    click.echo(f"indexed {package_count} context package(s) into a new index generation")
    if not caught_up:
        _say("a running worker holds the index: it applies changes made during the rebuild itself")


@cli.command()
@click.argument("segmenter")
@click.option(
    "--stage-only", is_flag=True, help="Cut and index the new passages, but keep the current version serving."
)
@click.option("--local", is_flag=True, help="Run the steps in this process even if a worker is running.")
@data_dir_option
def resegment(segmenter: str, stage_only: bool, local: bool, data_dir: Path | None) -> None:
    """Re-segment the corpus with a segmenter version (e.g. `paragraph@2`) and switch search to it."""
    from temporalio.client import WorkflowFailureError
    from temporalio.exceptions import ApplicationError

    from groundwork.search import corpus_index
    from groundwork.services.evidence_search import admin as corpus_admin

    async def work(dsn: str) -> Any:
        settings = Settings.from_env(database_url=dsn)
        corpus_index.configure(_corpus_index_dir(data_dir))
        client = None if local else await _worker_client(settings)
        _say(f"re-segmenting with {segmenter} " + ("through the worker" if client else "in this process"))
        try:
            return await corpus_admin.resegment(
                segmenter, activate=not stage_only, client=client, task_queue=settings.temporal_task_queue
            )
        except (ApplicationError, WorkflowFailureError) as exc:
            cause = getattr(exc, "cause", None) or exc
            _say(f"error: {getattr(cause, 'message', None) or cause}")
            raise SystemExit(2) from None

    result = _run_with_dsn(data_dir, work)
    click.echo(f"{result.segmenter_id}: {result.status} ({result.versions_cut} source version(s) cut)")


# -- context engine ---------------------------------------------------------------------------------------------


@cli.command()
@click.argument("file", type=click.File("r", encoding="utf-8"))
@click.option("--workspace", "workspace_slug", required=True, help="Workspace slug (every line's provider is in it).")
@click.option("--local", is_flag=True, help="Run the contribution steps in this process even if a worker is running.")
@data_dir_option
def contribute(file: Any, workspace_slug: str, local: bool, data_dir: Path | None) -> None:
    """Contribute to the context engine from a JSON Lines file, one contribution a line.

    Each line is `{provider_id, project_id, term, summary, contribution_type, evidence: [{capability,
    reference: {kind, id, class}, as_of}], generated_at, promoter_identity?, supersedes?}`. Bad lines
    are reported with their number and contribute nothing; each good line runs a
    ContextContributionWorkflow (through the worker when one polls, else its steps here in one
    transaction). A line contributed before changes nothing. Exit code 1 if any line failed.
    """
    from groundwork.services.context_engine.contribution_file import contribute_lines

    lines = file.readlines()

    async def work(dsn: str) -> Any:
        settings = Settings.from_env(database_url=dsn)
        from groundwork.search import corpus_index

        corpus_index.configure(_corpus_index_dir(data_dir))
        client = None if local else await _worker_client(settings)
        _say("contributing " + ("through the worker (Temporal)" if client is not None else "in this process"))
        count = sum(1 for line in lines if line.strip())
        with click.progressbar(length=count, label="Contributing", file=sys.stderr) as bar:
            return await contribute_lines(
                workspace_slug,
                lines,
                client=client,
                task_queue=settings.temporal_task_queue,
                progress=lambda _: bar.update(1),
            )

    report = _run_with_dsn(data_dir, work)
    for line in report.failed:
        _say(f"line {line.number}: {line.reason}")
    counts = report.counts()
    done = sum(n for outcome, n in counts.items() if outcome not in ("failed", "unchanged"))
    click.echo(
        f"contributed {done} line(s): {counts['created']} created, {counts['merged']} merged, "
        f"{counts['superseded']} superseded, {counts['kept_separate']} kept separate; "
        f"unchanged {counts['unchanged']}; failed {counts['failed']}"
    )
    if counts["failed"]:
        raise SystemExit(1)


@cli.group()
def providers() -> None:
    """Context providers: list, register, and run the built-in ones."""


@providers.command("run")
@click.option("--workspace", "workspace_slug", default=None, help="Only this workspace (default: every workspace).")
@click.option("--local", is_flag=True, help="Run in this process even if a worker is running.")
@data_dir_option
def providers_run(workspace_slug: str | None, local: bool, data_dir: Path | None) -> None:
    """Run the built-in providers (work-items, corpus) now; only what changed is contributed."""
    from groundwork.services.context_engine.providers import run_builtin_providers

    async def work(dsn: str) -> Any:
        settings = Settings.from_env(database_url=dsn)
        from groundwork.search import corpus_index

        corpus_index.configure(_corpus_index_dir(data_dir))
        client = None if local else await _worker_client(settings)
        _say("running the built-in providers " + ("through the worker" if client is not None else "in this process"))
        return await run_builtin_providers(workspace_slug, client=client, task_queue=settings.temporal_task_queue)

    result = _run_with_dsn(data_dir, work)
    click.echo(f"contributed {result.contributed}, unchanged {result.unchanged}")


@providers.command("list")
@click.option("--workspace", "workspace_slug", required=True, help="Workspace slug.")
@data_dir_option
def providers_list(workspace_slug: str, data_dir: Path | None) -> None:
    """List the workspace's providers: id, name, classification, authority, capabilities."""
    from groundwork.persistence.repositories.context_engine import providers as provider_rows
    from groundwork.persistence.repositories.tenancy import workspaces as tenancy

    async def work() -> list[ProviderRow]:
        workspace = await tenancy.get_workspace_by_slug(workspace_slug)
        if workspace is None:
            raise GroundworkError(f"No workspace with the slug {workspace_slug!r}.")
        return await provider_rows.providers_of_workspace(workspace.id)

    rows = _run_with_db(data_dir, work)
    for row in rows:
        kind = "built-in" if row.builtin else "registered"
        click.echo(f"{row.id}  {row.name}  {row.classification}  {row.authority}  {kind}  {' '.join(row.capabilities)}")
    if not rows:
        _say("no providers (the built-in ones are registered by their first run)")


@providers.command("register")
@click.option("--workspace", "workspace_slug", required=True, help="Workspace slug.")
@click.option("--name", required=True, help="Provider name (lowercase letters, digits, dashes).")
@click.option(
    "--classification",
    required=True,
    type=click.Choice(["delivery", "corpus", "work_items", "financial", "staffing"]),
)
@click.option("--capability", "capabilities", multiple=True, required=True, help="A capability; repeat for more.")
@click.option("--authority", default="advisory", type=click.Choice(["advisory", "canonical"]), show_default=True)
@data_dir_option
def providers_register(
    workspace_slug: str,
    name: str,
    classification: str,
    capabilities: tuple[str, ...],
    authority: str,
    data_dir: Path | None,
) -> None:
    """Register a provider (as the internal API does); prints its id alone on stdout."""
    from groundwork.domain.tenancy.principals import Principal
    from groundwork.persistence.repositories.tenancy import workspaces as tenancy
    from groundwork.services.context_engine.contributions import ProviderRegistration, register_provider

    async def work() -> tuple[ProviderRow, bool]:
        workspace = await tenancy.get_workspace_by_slug(workspace_slug)
        if workspace is None:
            raise GroundworkError(f"No workspace with the slug {workspace_slug!r}.")
        operator = Principal("", workspace.id, "cli", "provider", False, "", frozenset())
        return await register_provider(
            operator, ProviderRegistration(name, classification, list(capabilities), authority)
        )

    row, created = _run_with_db(data_dir, work)
    _say(("registered" if created else "updated") + f" provider {row.name}")
    click.echo(row.id)


def main() -> None:
    """Console-script entry point."""
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr)
    cli()


if __name__ == "__main__":
    main()
