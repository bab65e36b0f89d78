"""REST: connected apps, for workspace admins (register with a declaration, activate, deactivate)."""

from __future__ import annotations

from typing import Annotated, Any, ClassVar

import msgspec
from litestar import Controller, Request, Response, get, post

from groundwork.api.documented import LIMIT, documented, text
from groundwork.api.resources.notifications import app_resource
from groundwork.api.rest.documents.common import created, typed
from groundwork.api.rest.documents.tenancy import ConnectedAppDocument, ConnectedAppList
from groundwork.domain.tenancy.connected_apps import (
    AUTHORITY_FIELDS,
    CONFLICT_BEHAVIOURS,
    DIRECTIONS,
    KINDS,
    MAX_NAME,
    MAX_PROVENANCE,
    SCOPE_MANAGE,
)
from groundwork.domain.tenancy.principals import Principal
from groundwork.services.tenancy import connected_apps as service

MANAGE = {"scope": SCOPE_MANAGE}
# Documented, not enforced at decoding: the service answers 422 `validation_failed` naming the field.
Kind = Annotated[str, documented(enum=list(KINDS))]
Direction = Annotated[str, documented(enum=list(DIRECTIONS))]
Conflict = Annotated[str, documented(enum=list(CONFLICT_BEHAVIOURS))]
Name = Annotated[str, text(MAX_NAME)]
Provenance = Annotated[str, text(MAX_PROVENANCE)]
MANAGE_WRITE = {"scope": SCOPE_MANAGE, "idempotent": True}


class RegisterAppBody(msgspec.Struct, forbid_unknown_fields=True):
    __documented_required__: ClassVar[tuple[str, ...]] = ("name", "kind", "direction", "provenance", "conflict")
    name: Name | None = None
    kind: Kind | None = None
    direction: Direction | None = None
    field_authority: Annotated[list[str], documented(items={"type": "string", "enum": list(AUTHORITY_FIELDS)})] = []
    provenance: Provenance | None = None
    conflict: Annotated[str, msgspec.Meta(extra_json_schema={"extra": {"enum": list(CONFLICT_BEHAVIOURS)}})] | None = (
        None
    )


class ConnectedAppController(Controller):
    path = "/api/v1/connected-apps"
    tags = ["connected apps"]

    @post(
        "/",
        opt=MANAGE_WRITE,
        summary="Register an app with its declaration (direction, field authority, provenance, conflict)",
        description="Its keys work only once it is activated.",
    )
    async def register(
        self, request: Request[Principal, Any, Any], data: RegisterAppBody
    ) -> Response[ConnectedAppDocument]:
        app = await service.register_app(request.user, msgspec.structs.asdict(data))
        return created(typed(ConnectedAppDocument, {"data": app_resource(app)}), f"/api/v1/connected-apps/{app.id}")

    @get("/", opt=MANAGE, summary="The workspace's connected apps")
    async def list_apps(
        self,
        request: Request[Principal, Any, Any],
        limit: int | None = LIMIT,
        cursor: str | None = None,
    ) -> ConnectedAppList:
        rows, page = await service.list_apps(request.user, limit=limit, cursor=cursor)
        return typed(ConnectedAppList, {"data": [app_resource(a) for a in rows], "page": page})

    @get("/{app_id:str}", opt=MANAGE, summary="One connected app")
    async def get_app(self, request: Request[Principal, Any, Any], app_id: str) -> ConnectedAppDocument:
        return typed(ConnectedAppDocument, {"data": app_resource(await service.get_app(request.user, app_id))})

    @post(
        "/{app_id:str}/activate", opt=MANAGE_WRITE, summary="Activate an app: its keys start working", status_code=200
    )
    async def activate(self, request: Request[Principal, Any, Any], app_id: str) -> ConnectedAppDocument:
        app = await service.set_app_status(request.user, app_id, "active")
        return typed(ConnectedAppDocument, {"data": app_resource(app)})

    @post(
        "/{app_id:str}/deactivate",
        opt=MANAGE_WRITE,
        summary="Deactivate an app: its keys stop working",
        status_code=200,
    )
    async def deactivate(self, request: Request[Principal, Any, Any], app_id: str) -> ConnectedAppDocument:
        app = await service.set_app_status(request.user, app_id, "inactive")
        return typed(ConnectedAppDocument, {"data": app_resource(app)})
