"""`groundwork keys`: issue, list and revoke API keys."""

from __future__ import annotations

from pathlib import Path

import click

from groundwork.cli.runner import data_dir_option, run_with_db, say
from groundwork.domain.tenancy.scopes import ALL_SCOPES


@click.group()
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

    issued, granted = run_with_db(data_dir, create)
    if issued.created_principal and not granted:
        say(f"created principal {principal_name!r} (no project memberships)")
    elif issued.created_principal:
        say(f"created principal {principal_name!r}")
    for membership in granted:
        say(f"{principal_name} is {membership.role} on {membership.project_key}")
    say(f"key id {issued.api_key_id}; store the key now, it is not shown again:")
    click.echo(issued.key)


@keys.command("list")
@click.option("--workspace", "workspace_slug", default=None, help="Only this workspace.")
@data_dir_option
def keys_list(workspace_slug: str | None, data_dir: Path | None) -> None:
    """List keys (never the secret): id, prefix, workspace, principal, scopes, state."""
    from groundwork.services.tenancy.api_keys import list_keys

    rows = run_with_db(data_dir, lambda: list_keys(workspace_slug))
    for row in rows:
        state = f"revoked {row.revoked_at:%Y-%m-%d}" if row.revoked_at else "active"
        used = f"{row.last_used_at:%Y-%m-%d %H:%M}" if row.last_used_at else "never"
        app = f"  app {row.app_id}" if row.app_id else ""
        click.echo(
            f"{row.id}  {row.key_prefix}…  {row.workspace}/{row.principal}  {state}  "
            f"last used {used}{app}  {' '.join(row.scopes)}"
        )
    if not rows:
        say("no keys")


@keys.command("revoke")
@click.argument("key_id")
@data_dir_option
def keys_revoke(key_id: str, data_dir: Path | None) -> None:
    """Revoke a key by its id (`key_...`); it stops working at once."""
    from groundwork.services.tenancy.api_keys import revoke_key

    if not run_with_db(data_dir, lambda: revoke_key(key_id)):
        say(f"error: no active key {key_id!r}")
        raise SystemExit(1)
    say(f"revoked {key_id}")
