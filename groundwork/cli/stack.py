"""The stack's processes: `up` (everything on one machine), `serve`, `worker`, `status` and `mcp` (stdio)."""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path

import click

from groundwork.cli.runner import (
    SettingOption,
    corpus_index_dir,
    data_dir_option,
    database,
    say,
    stack_api_url,
    stack_settings,
)
from groundwork.config import (
    Settings,
    database_url_from_env,
    default_data_dir,
    mcp_api_key,
    worker_metrics_host,
    worker_metrics_port,
)


@click.command()
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


@click.command()
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
        say(
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


@click.command()
@click.option(
    "--metrics-port",
    cls=SettingOption,
    setting=worker_metrics_port,
    type=int,
    default=None,
    help="Serve Prometheus metrics (Groundwork's and the Temporal SDK's) at http://HOST:PORT/metrics.  "
    "[default: $GROUNDWORK_WORKER_METRICS_PORT, else none]",
)
@click.option(
    "--metrics-host",
    cls=SettingOption,
    setting=worker_metrics_host,
    default="127.0.0.1",
    show_default=True,
    help="Address of the metrics listener.",
)
def worker(metrics_port: int | None, metrics_host: str) -> None:
    """Run the Temporal worker only (production): same environment as `serve`."""
    from groundwork.worker import main as worker_main

    worker_main(metrics_host=metrics_host, metrics_port=metrics_port)


@click.command()
@click.option(
    "--api-url",
    default=None,
    help="The API to probe.  [default: $GROUNDWORK_PUBLIC_URL, else the API of the data dir's running `up`, "
    "else http://127.0.0.1:8000]",
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

    url = api_url or stack_api_url(data_dir)
    dsn = database_url_from_env() or running_database_url((data_dir or default_data_dir()).resolve())
    corpus_index.configure(corpus_index_dir(data_dir))

    async def main() -> StackStatus:
        settings = stack_settings(dsn or "postgresql://unavailable", data_dir)
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


@click.command()
@data_dir_option
def mcp(data_dir: Path | None) -> None:
    """Serve MCP over stdio for local clients; the key comes from GROUNDWORK_API_KEY."""
    from groundwork.api.mcp.stdio import run_stdio

    key = mcp_api_key()
    if not key:
        raise click.UsageError("set GROUNDWORK_API_KEY to the API key this MCP session acts with")
    with database(data_dir) as dsn:
        run_stdio(dsn, key, corpus_index_dir(data_dir))
