"""`groundwork import`: work items from a JSON Lines file."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from groundwork.cli.runner import data_dir_option, run_with_db, say


@click.command("import")
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

    report = run_with_db(data_dir, lambda: import_work_items(workspace_slug, principal_name, file))
    for number, reason in report.rejected:
        say(f"line {number}: skipped: {reason}")
    say(f"imported {len(report.created)} work item(s), skipped {len(report.rejected)} line(s)")
    if report.rejected:
        raise SystemExit(1)
