"""Connected apps: registered by a workspace admin with their declaration, activated before their keys work.

An app's keys are ordinary API keys bound to the app (`groundwork keys create --app`): while the app
is not active they are refused with 403 `app_not_active`, and while it is, its declared direction
bounds what they may do (see `domain/connected_apps.py`). The CLI manages apps per workspace slug;
the REST resource is for workspace admins holding `connected-apps:manage`.
"""

from __future__ import annotations

from typing import Any

from groundwork.domain.errors import FieldError, GroundworkError, NotFound, PermissionDenied, ValidationFailed
from groundwork.domain.pagination import page_info, page_request
from groundwork.domain.tenancy.connected_apps import SCOPE_MANAGE, validate_declaration
from groundwork.domain.tenancy.principals import Principal
from groundwork.persistence import change_feed, db
from groundwork.persistence.repositories.tenancy import connected_apps as repo
from groundwork.persistence.repositories.tenancy import workspaces as tenancy
from groundwork.persistence.repositories.tenancy.connected_apps import ConnectedAppRow
from groundwork.platform.idempotency import request_results


def _admin(principal: Principal) -> None:
    if not principal.is_admin or principal.app is not None:
        raise PermissionDenied("Only a workspace admin (not an app's key) manages connected apps.", SCOPE_MANAGE)


async def _register(workspace_id: str, registered_by: str | None, declaration: dict[str, Any]) -> ConnectedAppRow:
    checked = validate_declaration(
        declaration.get("name"),
        declaration.get("kind"),
        declaration.get("direction"),
        declaration.get("field_authority", []),
        declaration.get("provenance"),
        declaration.get("conflict"),
    )
    row = await repo.insert_app(
        workspace_id=workspace_id,
        name=checked.name,
        kind=checked.kind,
        direction=checked.direction,
        field_authority=list(checked.field_authority),
        provenance=checked.provenance,
        conflict=checked.conflict,
        registered_by=registered_by,
    )
    if row is None:
        raise ValidationFailed("Invalid app declaration.", [FieldError("name", "an app with this name exists")])
    return row


async def register_app(principal: Principal, declaration: dict[str, Any]) -> ConnectedAppRow:
    """Register an app in the caller's workspace (status `registered`: its keys do not work yet)."""
    _admin(principal)
    # The same request retried after its first attempt's answer was lost gets that app.
    if (earlier := await request_results.earlier_result("connected_app")) is not None:
        return await _app(principal, earlier)
    async with db.transaction():
        app = await _register(principal.workspace_id, principal.id, declaration)
        await request_results.record_result("connected_app", app.id)
    return app


async def _app(principal: Principal, app_id: str) -> ConnectedAppRow:
    row = await repo.get_app(app_id, principal.workspace_id)
    if row is None:
        raise NotFound("No such connected app.")
    return row


async def get_app(principal: Principal, app_id: str) -> ConnectedAppRow:
    """One app of the caller's workspace."""
    _admin(principal)
    return await _app(principal, app_id)


async def list_apps(
    principal: Principal, *, limit: int | None = None, cursor: str | None = None
) -> tuple[list[ConnectedAppRow], dict[str, Any]]:
    """Apps of the caller's workspace, newest first."""
    _admin(principal)
    page = page_request(limit, cursor)
    rows = await repo.list_apps(principal.workspace_id, after_id=page.after_text(), limit=page.limit + 1)
    return page_info(rows, page.limit, lambda a: {"id": a.id})


async def set_app_status(principal: Principal, app_id: str, status: str) -> ConnectedAppRow:
    """Activate (`active`) or deactivate (`inactive`) an app of the caller's workspace."""
    _admin(principal)
    async with db.transaction():
        await _app(principal, app_id)
        await repo.set_status(app_id, status, principal.id)
    await change_feed.caught_up()  # keys bound to the app follow its status from this process's next request
    return await _app(principal, app_id)


# ---------------------------------------------------------------------------------------------- the CLI


async def _workspace_id(slug: str) -> str:
    workspace = await tenancy.get_workspace_by_slug(slug)
    if workspace is None:
        raise GroundworkError(f"No workspace with the slug {slug!r}.")
    return str(workspace.id)


async def register_app_in(workspace_slug: str, declaration: dict[str, Any]) -> ConnectedAppRow:
    """Register an app in a workspace by slug (operators, `groundwork apps register`)."""
    return await _register(await _workspace_id(workspace_slug), None, declaration)


async def set_app_status_by_id(app_id: str, status: str) -> ConnectedAppRow:
    """Activate or deactivate an app by id (operators, `groundwork apps activate|deactivate`)."""
    if await repo.get_app(app_id) is None:
        raise GroundworkError(f"No connected app {app_id!r}.")
    await repo.set_status(app_id, status, None)
    found = await repo.get_app(app_id)
    assert found is not None
    return found


async def list_apps_in(workspace_slug: str | None) -> list[ConnectedAppRow]:
    """Every app (of one workspace when given), newest first (operators, `groundwork apps list`)."""
    workspace_id = await _workspace_id(workspace_slug) if workspace_slug else None
    return await repo.list_apps(workspace_id)
