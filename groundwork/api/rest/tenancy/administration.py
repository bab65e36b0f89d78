"""REST: a workspace's structure for its admins (scope `workspace:admin`): portfolios, engagements, projects."""

from __future__ import annotations

from typing import Annotated, Any, ClassVar

import msgspec
from litestar import Controller, Request, Response, get, patch, post

from groundwork.api.documented import LIMIT, documented, text
from groundwork.api.resources.tenancy import admin_project_resource, engagement_resource, portfolio_resource
from groundwork.api.rest.documents.common import created, typed
from groundwork.api.rest.documents.tenancy import (
    AdminProjectDocument,
    EngagementDocument,
    EngagementList,
    PortfolioDocument,
    PortfolioList,
)
from groundwork.api.rest.work_items import ProjectController
from groundwork.domain.tenancy.administration import MAX_NAME
from groundwork.domain.tenancy.principals import Principal
from groundwork.domain.tenancy.scopes import WORKSPACE_ADMIN
from groundwork.services.tenancy import administration as service

ADMIN = {"scope": WORKSPACE_ADMIN}
ADMIN_WRITE = {"scope": WORKSPACE_ADMIN, "idempotent": True}
ADMIN_ONLY = "Scope `workspace:admin`, held only by workspace admins (never by a connected app's key)."
Name = Annotated[str, text(MAX_NAME)]
ProjectKey = Annotated[str, documented(pattern="^[A-Z][A-Z0-9]{1,9}$")]


class NewPortfolioBody(msgspec.Struct, forbid_unknown_fields=True):
    __documented_required__: ClassVar[tuple[str, ...]] = ("name",)
    name: Name | None = None


class NewEngagementBody(msgspec.Struct, forbid_unknown_fields=True):
    __documented_required__: ClassVar[tuple[str, ...]] = ("name", "portfolio_id")
    name: Name | None = None
    portfolio_id: str | None = None


class NewProjectBody(msgspec.Struct, forbid_unknown_fields=True):
    __documented_required__: ClassVar[tuple[str, ...]] = ("key", "name", "engagement_id")
    key: ProjectKey | None = None
    name: Name | None = None
    engagement_id: str | None = None


class ProjectChangesBody(msgspec.Struct, forbid_unknown_fields=True):
    name: Name | None = None
    archived: bool | None = None


class PortfolioController(Controller):
    path = "/api/v1/portfolios"
    tags = ["administration"]

    @post("/", opt=ADMIN_WRITE, summary="Add a portfolio", description=ADMIN_ONLY)
    async def create_portfolio(
        self, request: Request[Principal, Any, Any], data: NewPortfolioBody
    ) -> Response[PortfolioDocument]:
        row = await service.create_portfolio(request.user, data.name)
        return created(typed(PortfolioDocument, {"data": portfolio_resource(row)}), "/api/v1/portfolios")

    @get("/", opt=ADMIN, summary="The workspace's portfolios, newest first", description=ADMIN_ONLY)
    async def list_portfolios(
        self, request: Request[Principal, Any, Any], limit: int | None = LIMIT, cursor: str | None = None
    ) -> PortfolioList:
        rows, page = await service.list_portfolios(request.user, limit=limit, cursor=cursor)
        return typed(PortfolioList, {"data": [portfolio_resource(r) for r in rows], "page": page})


class EngagementController(Controller):
    path = "/api/v1/engagements"
    tags = ["administration"]

    @post("/", opt=ADMIN_WRITE, summary="Add an engagement under a portfolio", description=ADMIN_ONLY)
    async def create_engagement(
        self, request: Request[Principal, Any, Any], data: NewEngagementBody
    ) -> Response[EngagementDocument]:
        row = await service.create_engagement(request.user, data.name, data.portfolio_id)
        location = f"/api/v1/engagements?portfolio_id={row.portfolio_id}"
        return created(typed(EngagementDocument, {"data": engagement_resource(row)}), location)

    @get("/", opt=ADMIN, summary="The workspace's engagements (of one portfolio), newest first", description=ADMIN_ONLY)
    async def list_engagements(
        self,
        request: Request[Principal, Any, Any],
        portfolio_id: str | None = None,
        limit: int | None = LIMIT,
        cursor: str | None = None,
    ) -> EngagementList:
        rows, page = await service.list_engagements(request.user, portfolio_id=portfolio_id, limit=limit, cursor=cursor)
        return typed(EngagementList, {"data": [engagement_resource(r) for r in rows], "page": page})


class ProjectAdministrationController(ProjectController):
    """`/api/v1/projects`: the caller's projects (its parent's route), and for admins their creation and changes."""

    @post(
        "/",
        opt=ADMIN_WRITE,
        summary="Add a project under an engagement",
        description="`key` is unique in the workspace: 2 to 10 capital letters or digits, starting with a letter."
        + " "
        + ADMIN_ONLY,
    )
    async def create_project(
        self, request: Request[Principal, Any, Any], data: NewProjectBody
    ) -> Response[AdminProjectDocument]:
        row = await service.create_project(request.user, data.key, data.name, data.engagement_id)
        return created(typed(AdminProjectDocument, {"data": admin_project_resource(row)}), "/api/v1/projects")

    @patch(
        "/{project_id:str}",
        opt=ADMIN,
        summary="Rename a project, or archive (`archived: true`) or restore it",
        description="An archived project keeps its work items and history; it takes no new work items or imports."
        + " "
        + ADMIN_ONLY,
    )
    async def update_project(
        self, request: Request[Principal, Any, Any], project_id: str, data: ProjectChangesBody
    ) -> AdminProjectDocument:
        row = await service.update_project(request.user, project_id, data.name, data.archived)
        return typed(AdminProjectDocument, {"data": admin_project_resource(row)})
