"""GraphQL: the principals the caller may address (id, name and kind of those who share a project with it)."""

from __future__ import annotations

from typing import Any

import strawberry
from strawberry.types import Info

from groundwork.api.graphql.connections import Edge, PageInfo, connection_fields
from groundwork.api.graphql.context import GraphQLContext, as_graphql_error, require
from groundwork.api.graphql.enums import PrincipalKind, ProjectRoleName
from groundwork.domain.errors import GroundworkError
from groundwork.domain.pagination import encode_cursor
from groundwork.services.tenancy import people as service


@strawberry.type
class Person:
    id: strawberry.ID
    name: str
    kind: PrincipalKind


@strawberry.type
class PersonConnection:
    edges: list[Edge[Person]]
    nodes: list[Person]
    page_info: PageInfo


@strawberry.type
class ProjectRole:
    project_id: strawberry.ID
    project_key: str
    role: ProjectRoleName


async def viewer_project_roles(info: Info[GraphQLContext, Any]) -> list[ProjectRole]:
    """The caller's roles on projects."""
    me = await service.me(require(info, None))
    return [
        ProjectRole(project_id=strawberry.ID(r.project_id), project_key=r.project_key, role=r.role)
        for r in me.project_roles
    ]


async def principals(
    info: Info[GraphQLContext, Any],
    query: str | None = None,
    project_id: strawberry.ID | None = None,
    first: int | None = None,
    after: str | None = None,
) -> PersonConnection:
    """Principals the caller may address (`notifications:read` or `work-item-enhance:read`), by name."""
    principal = require(info, None)
    try:
        rows, page = await service.directory(principal, query=query, project_id=project_id, limit=first, cursor=after)
    except GroundworkError as error:
        raise as_graphql_error(error) from None
    people = [Person(id=strawberry.ID(r.id), name=r.name, kind=r.kind) for r in rows]
    # The directory is kept in name order: a person's cursor is their name.
    return PersonConnection(**connection_fields(people, page, lambda p: encode_cursor({"name": p.name})))
