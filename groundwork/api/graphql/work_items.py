"""GraphQL types and resolvers for the caller, projects and canonical work items."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any

import strawberry
from strawberry.types import Info

from groundwork.api.graphql.connections import Edge, PageInfo, connection_fields
from groundwork.api.graphql.context import GraphQLContext, as_graphql_error, require
from groundwork.api.graphql.enums import PrincipalKind, WorkItemStatus

if TYPE_CHECKING:
    from groundwork.api.graphql.people import ProjectRole
from groundwork.domain.errors import GroundworkError
from groundwork.domain.work_items import WorkItem as WorkItemRecord
from groundwork.domain.work_items import format_version
from groundwork.services.work_items import items as service

# The people module builds on this one's types: its types are referenced lazily.
LazyProjectRole = Annotated["ProjectRole", strawberry.lazy("groundwork.api.graphql.people")]


@strawberry.type
class Viewer:
    id: strawberry.ID
    name: str
    kind: PrincipalKind
    workspace_id: strawberry.ID
    is_admin: bool
    scopes: list[str]

    @strawberry.field(description="The caller's roles on projects (an admin sees every project besides).")
    async def project_roles(self, info: Info[GraphQLContext, Any]) -> list[LazyProjectRole]:
        from groundwork.api.graphql.people import viewer_project_roles

        return await viewer_project_roles(info)


@strawberry.type
class NamedRef:
    id: strawberry.ID
    name: str


@strawberry.type
class Project:
    id: strawberry.ID
    key: str
    name: str
    engagement: NamedRef
    portfolio: NamedRef


@strawberry.type
class WorkItemFields:
    description: str | None
    requirements: str | None
    design_notes: str | None
    implementation_plan: str | None
    acceptance_criteria: str | None
    test_plan: str | None
    estimate: float | None
    risks: str | None


@strawberry.type
class WorkItem:
    id: strawberry.ID
    key: str
    title: str
    status: WorkItemStatus
    sprint: str | None
    project_id: strawberry.ID
    version: str
    watchers: list[str]
    fields: WorkItemFields

    @classmethod
    def of(cls, item: WorkItemRecord) -> WorkItem:
        values = {name: item.fields.get(name) for name in WorkItemFields.__annotations__}
        return cls(
            id=strawberry.ID(item.id),
            key=item.key,
            title=item.title,
            status=item.status,
            sprint=item.sprint,
            project_id=strawberry.ID(item.project_id),
            version=format_version(item.version),
            watchers=list(item.watchers),
            fields=WorkItemFields(**values),
        )


@strawberry.type
class WorkItemConnection:
    edges: list[Edge[WorkItem]]
    nodes: list[WorkItem]
    page_info: PageInfo


def viewer(info: Info[GraphQLContext, Any]) -> Viewer:
    """The caller behind the API key."""
    principal = require(info, None)
    return Viewer(
        id=strawberry.ID(principal.id),
        name=principal.name,
        kind=principal.kind,
        workspace_id=strawberry.ID(principal.workspace_id),
        is_admin=principal.is_admin,
        scopes=sorted(principal.scopes),
    )


async def projects(info: Info[GraphQLContext, Any]) -> list[Project]:
    """The caller's visible projects."""
    rows = await service.list_projects(require(info, "work-items:read"))
    return [
        Project(
            id=strawberry.ID(r.id),
            key=r.key,
            name=r.name,
            engagement=NamedRef(id=strawberry.ID(r.engagement_id), name=r.engagement_name),
            portfolio=NamedRef(id=strawberry.ID(r.portfolio_id), name=r.portfolio_name),
        )
        for r in rows
    ]


async def work_item(info: Info[GraphQLContext, Any], id: strawberry.ID) -> WorkItem | None:
    """One visible work item, or null."""
    try:
        return WorkItem.of(await service.get_work_item(require(info, "work-items:read"), str(id)))
    except GroundworkError as error:
        if error.code == "not_found":
            return None
        raise as_graphql_error(error) from None


async def work_items(
    info: Info[GraphQLContext, Any],
    project_id: strawberry.ID | None = None,
    status: WorkItemStatus | None = None,
    sprint: str | None = None,
    first: int | None = None,
    after: str | None = None,
) -> WorkItemConnection:
    """Work items of visible projects, newest first."""
    principal = require(info, "work-items:read")
    try:
        items, page = await service.list_work_items(
            principal, project_id=project_id, status=status, sprint=sprint, limit=first, cursor=after
        )
    except GroundworkError as error:
        raise as_graphql_error(error) from None
    return WorkItemConnection(**connection_fields([WorkItem.of(i) for i in items], page))
