"""Agent API routes: projects, delivery, the current sprint and risks (scope `agent:read`)."""

from __future__ import annotations

from typing import Any

from litestar import Controller, Request, get

from groundwork.api.rest.documents.common import typed
from groundwork.api.rest.documents.context_engine import (
    AgentProjectList,
    CurrentSprintDocument,
    ProjectDeliveryDocument,
    ProjectRisksDocument,
)
from groundwork.domain.tenancy.principals import Principal
from groundwork.services.context_engine import agent_read_models as service

READ = {"scope": "agent:read"}


class AgentController(Controller):
    path = "/api/agent/v1"
    tags = ["agent API"]

    @get("/projects", opt=READ, summary="Projects with delivery health and trends")
    async def projects(self, request: Request[Principal, Any, Any]) -> AgentProjectList:
        rows = await service.list_projects(request.user)
        return typed(AgentProjectList, {"data": rows, "page": {"next_cursor": None, "has_more": False}})

    @get("/projects/{project_id:str}/delivery", opt=READ, summary="Delivery signals of a project")
    async def delivery(self, request: Request[Principal, Any, Any], project_id: str) -> ProjectDeliveryDocument:
        return typed(ProjectDeliveryDocument, {"data": await service.project_delivery(request.user, project_id)})

    @get("/projects/{project_id:str}/sprints/current", opt=READ, summary="The current sprint's signals")
    async def sprint(self, request: Request[Principal, Any, Any], project_id: str) -> CurrentSprintDocument:
        return typed(CurrentSprintDocument, {"data": await service.current_sprint(request.user, project_id)})

    @get("/projects/{project_id:str}/risks", opt=READ, summary="Risk, blocker and dependency signals of a project")
    async def risks(self, request: Request[Principal, Any, Any], project_id: str) -> ProjectRisksDocument:
        return typed(ProjectRisksDocument, {"data": await service.project_risks(request.user, project_id)})
