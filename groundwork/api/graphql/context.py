"""The GraphQL context: the principal resolved by the auth middleware, and the scope check."""

from __future__ import annotations

from typing import Any

from graphql import GraphQLError
from litestar import Request
from strawberry.litestar import BaseContext
from strawberry.types import Info

from groundwork.domain.errors import GroundworkError, Unauthenticated
from groundwork.domain.tenancy.connected_apps import scope_refusal
from groundwork.domain.tenancy.principals import Principal


class GraphQLContext(BaseContext, kw_only=True):
    """What every resolver sees: the request and the principal behind its key (None without one)."""

    principal: Principal | None = None


async def context_getter(request: Request[Any, Any, Any]) -> GraphQLContext:
    """Build the context from the request the auth middleware already authenticated."""
    user = request.scope.get("user")
    return GraphQLContext(principal=user if isinstance(user, Principal) else None, request=request)


def as_graphql_error(error: GroundworkError) -> GraphQLError:
    """A query error carrying the same stable code REST uses."""
    return GraphQLError(error.detail, extensions={"code": error.code, **error.extra})


def require(info: Info[GraphQLContext, Any], scope: str) -> Principal:
    """The caller, if authenticated and holding `scope`; a coded GraphQL error otherwise."""
    principal = info.context.principal
    if principal is None:
        raise as_graphql_error(Unauthenticated("Send a valid API key as `Authorization: Bearer <key>`."))
    if not principal.has_scope(scope):
        raise as_graphql_error(scope_refusal(principal, scope))
    return principal
