"""REST: the caller (`/me`), the principals it may address, and for admins principals and project members."""

from __future__ import annotations

from typing import Annotated, Any, ClassVar

import msgspec
from litestar import Controller, Request, Response, delete, get, post, put
from litestar.params import Parameter

from groundwork.api.documented import LIMIT, documented, text
from groundwork.api.resources.tenancy import (
    directory_resource,
    me_resource,
    member_resource,
    principal_resource,
)
from groundwork.api.rest.documents.common import created, typed
from groundwork.api.rest.documents.tenancy import (
    DirectoryList,
    MeDocument,
    MemberDocument,
    MemberList,
    PrincipalDocument,
)
from groundwork.domain.tenancy.administration import ADMINISTERED_KINDS, MAX_NAME, MAX_QUERY, ROLES
from groundwork.domain.tenancy.principals import Principal
from groundwork.domain.tenancy.scopes import WORKSPACE_ADMIN
from groundwork.services.tenancy import people as service

ADMIN = {"scope": WORKSPACE_ADMIN}
ADMIN_WRITE = {"scope": WORKSPACE_ADMIN, "idempotent": True}
ADMIN_ONLY = "Scope `workspace:admin`, held only by workspace admins (never by a connected app's key)."
Kind = Annotated[str, documented(enum=list(ADMINISTERED_KINDS))]
Role = Annotated[str, documented(enum=list(ROLES))]


class NewPrincipalBody(msgspec.Struct, forbid_unknown_fields=True):
    __documented_required__: ClassVar[tuple[str, ...]] = ("name", "kind")
    name: Annotated[str, text(MAX_NAME)] | None = None
    kind: Kind | None = None


class MemberBody(msgspec.Struct, forbid_unknown_fields=True):
    __documented_required__: ClassVar[tuple[str, ...]] = ("role",)
    role: Role | None = None


class MeController(Controller):
    path = "/api/v1/me"
    tags = ["people"]

    @get("/", opt={"scope": None}, summary="The caller: principal, workspace, scopes and project roles")
    async def me(self, request: Request[Principal, Any, Any]) -> MeDocument:
        return typed(MeDocument, {"data": me_resource(await service.me(request.user))})


class PrincipalController(Controller):
    path = "/api/v1/principals"
    tags = ["people"]

    @get(
        "/",
        opt={"scope": None, "problems": (403,)},
        summary="Principals the caller may address: who share a project with it (id, name, kind)",
        description="Needs `notifications:read` or `work-item-enhance:read`. Never anyone's activity.",
    )
    async def list_principals(
        self,
        request: Request[Principal, Any, Any],
        # `query` is a name Litestar reserves for the whole query string: the parameter keeps it on the wire.
        name_query: str | None = Parameter(query="query", default=None, schema_extra={"maxLength": MAX_QUERY}),
        project_id: str | None = None,
        limit: int | None = LIMIT,
        cursor: str | None = None,
    ) -> DirectoryList:
        rows, page = await service.directory(
            request.user, query=name_query, project_id=project_id, limit=limit, cursor=cursor
        )
        return typed(DirectoryList, {"data": [directory_resource(r) for r in rows], "page": page})

    @post("/", opt=ADMIN_WRITE, summary="Add a principal (no key, no membership)", description=ADMIN_ONLY)
    async def create_principal(
        self, request: Request[Principal, Any, Any], data: NewPrincipalBody
    ) -> Response[PrincipalDocument]:
        row = await service.create_principal(request.user, data.name, data.kind)
        return created(typed(PrincipalDocument, {"data": principal_resource(row)}), "/api/v1/principals")


class ProjectMemberController(Controller):
    path = "/api/v1/projects/{project_id:str}/members"
    tags = ["administration"]

    @get("/", opt=ADMIN, summary="A project's members and their roles", description=ADMIN_ONLY)
    async def list_members(self, request: Request[Principal, Any, Any], project_id: str) -> MemberList:
        members = await service.members(request.user, project_id)
        return typed(MemberList, {"data": [member_resource(m) for m in members]})

    @put(
        "/{principal_id:str}",
        opt=ADMIN,
        summary="Give a principal a role on the project (replacing its role)",
        description=ADMIN_ONLY,
    )
    async def set_member(
        self, request: Request[Principal, Any, Any], project_id: str, principal_id: str, data: MemberBody
    ) -> MemberDocument:
        member = await service.set_member(request.user, project_id, principal_id, data.role)
        return typed(MemberDocument, {"data": member_resource(member)})

    @delete(
        "/{principal_id:str}", opt=ADMIN, summary="Take a principal's role on the project away", description=ADMIN_ONLY
    )
    async def remove_member(self, request: Request[Principal, Any, Any], project_id: str, principal_id: str) -> None:
        await service.remove_member(request.user, project_id, principal_id)
