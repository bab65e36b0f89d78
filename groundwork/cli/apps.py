"""`groundwork apps`: connected apps and their declarations."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import click

from groundwork.cli.runner import data_dir_option, run_with_db, say

if TYPE_CHECKING:
    from groundwork.persistence.repositories.tenancy.connected_apps import ConnectedAppRow


@click.group()
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
    app = run_with_db(data_dir, lambda: register_app_in(workspace_slug, declaration))
    say("registered (not active yet); bind keys with `groundwork keys create --app ID`, then activate it")
    click.echo(app.id)


@apps.command("activate")
@click.argument("app_id")
@data_dir_option
def apps_activate(app_id: str, data_dir: Path | None) -> None:
    """Activate an app: keys bound to it start working."""
    from groundwork.services.tenancy.connected_apps import set_app_status_by_id

    app = run_with_db(data_dir, lambda: set_app_status_by_id(app_id, "active"))
    say(f"{app.id} is active")


@apps.command("deactivate")
@click.argument("app_id")
@data_dir_option
def apps_deactivate(app_id: str, data_dir: Path | None) -> None:
    """Deactivate an app: keys bound to it are refused (403 app_not_active)."""
    from groundwork.services.tenancy.connected_apps import set_app_status_by_id

    app = run_with_db(data_dir, lambda: set_app_status_by_id(app_id, "inactive"))
    say(f"{app.id} is inactive")


@apps.command("list")
@click.option("--workspace", "workspace_slug", default=None, help="Only this workspace.")
@data_dir_option
def apps_list(workspace_slug: str | None, data_dir: Path | None) -> None:
    """List apps with their declaration, status and how many keys are bound to them."""
    from groundwork.services.tenancy.connected_apps import list_apps_in

    rows = run_with_db(data_dir, lambda: list_apps_in(workspace_slug))
    for row in rows:
        click.echo(_app_line(row))
    if not rows:
        say("no apps")
