"""`groundwork workspaces`: create a team's workspace with its first admin, and list workspaces."""

from __future__ import annotations

from pathlib import Path

import click

from groundwork.cli.runner import data_dir_option, run_with_db, say


@click.group()
def workspaces() -> None:
    """Create and list workspaces."""


@workspaces.command("create")
@click.argument("slug")
@click.option("--name", required=True, help="The workspace's name.")
@click.option("--admin", "admin_name", required=True, help="Name of its first admin (a user principal).")
@data_dir_option
def workspaces_create(slug: str, name: str, admin_name: str, data_dir: Path | None) -> None:
    """Create a workspace and its first admin; prints the admin's key alone on stdout (it is never shown again)."""
    from groundwork.services.tenancy.workspaces import create_workspace

    created = run_with_db(data_dir, lambda: create_workspace(slug, name, admin_name))
    say(f"created workspace {slug!r} ({created.workspace.id}) and its admin {admin_name!r} ({created.admin_id})")
    say(f"key id {created.api_key_id} (every scope, with workspace:admin); store the key now, it is not shown again:")
    click.echo(created.key)


@workspaces.command("list")
@data_dir_option
def workspaces_list(data_dir: Path | None) -> None:
    """List workspaces: id, slug and name."""
    from groundwork.services.tenancy.workspaces import list_workspaces

    rows = run_with_db(data_dir, list_workspaces)
    for row in rows:
        click.echo(f"{row.id}  {row.slug}  {row.name}")
    if not rows:
        say("no workspaces; create one with: groundwork workspaces create SLUG --name NAME --admin PRINCIPAL")
