"""`groundwork webhooks`: watch delivery attempts."""

from __future__ import annotations

import asyncio
import contextlib
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import click

from groundwork.cli.runner import data_dir_option, run_with_db, say

if TYPE_CHECKING:
    from groundwork.persistence.repositories.webhooks.attempts import AttemptTailRow


@click.group()
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
            say("following webhook delivery attempts; Ctrl-C stops")
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
        run_with_db(data_dir, tail)
