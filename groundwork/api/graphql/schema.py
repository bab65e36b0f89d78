"""The Strawberry schema served at /graphql; each service adds its fields here."""

from __future__ import annotations

import strawberry
from strawberry.litestar import make_graphql_controller

from groundwork.api.graphql import work_items as wi
from groundwork.api.graphql.context import context_getter


@strawberry.type
class Query:
    viewer: wi.Viewer = strawberry.field(resolver=wi.viewer)
    projects: list[wi.Project] = strawberry.field(resolver=wi.projects)
    work_item: wi.WorkItem | None = strawberry.field(resolver=wi.work_item)
    work_items: wi.WorkItemConnection = strawberry.field(resolver=wi.work_items)


schema = strawberry.Schema(query=Query)

GraphQLController = make_graphql_controller(
    schema, path="/graphql", context_getter=context_getter, graphql_ide="graphiql"
)
