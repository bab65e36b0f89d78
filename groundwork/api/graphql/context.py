"""The GraphQL context: the principal resolved by the auth middleware, and the one caller check.

A missing key, an unknown or revoked key and a missing scope are refused alike, by the field that needs
them: a query field answers a GraphQL error with `extensions.code`, a mutation `ok: false` with
`errors[{code}]`; the HTTP status stays 200 in every case (docs/decisions.md).
"""

from __future__ import annotations

from typing import Any

from graphql import GraphQLError
from litestar import Request
from strawberry.litestar import BaseContext
from strawberry.types import Info

from groundwork.api.auth import AUTH_REFUSAL, unauthenticated
from groundwork.api.graphql.field_names import graphql_field_errors
from groundwork.domain.errors import GroundworkError
from groundwork.domain.tenancy.connected_apps import scope_refusal
from groundwork.domain.tenancy.principals import Principal


class GraphQLContext(BaseContext, kw_only=True):
    """What every resolver sees: the request, the principal behind its key (None without a usable one) and,
    then, why there is none."""

    principal: Principal | None = None
    refusal: GroundworkError | None = None


async def context_getter(request: Request[Any, Any, Any]) -> GraphQLContext:
    """Build the context from the request the auth middleware already authenticated."""
    user = request.scope.get("user")
    refusal = request.scope.get(AUTH_REFUSAL)
    return GraphQLContext(
        principal=user if isinstance(user, Principal) else None,
        refusal=refusal if isinstance(refusal, GroundworkError) else None,
        request=request,
    )


def as_graphql_error(error: GroundworkError) -> GraphQLError:
    """A query error carrying the same stable code REST uses."""
    return GraphQLError(error.detail, extensions={"code": error.code, **graphql_field_errors(error.extra)})


def authorize(info: Info[GraphQLContext, Any], scope: str | None) -> Principal:
    """The caller, if authenticated and holding `scope` (None: any); the coded `GroundworkError` otherwise."""
    principal = info.context.principal
    if principal is None:
        raise info.context.refusal or unauthenticated(None)
    if scope and not principal.has_scope(scope):
        raise scope_refusal(principal, scope)
    return principal


def require(info: Info[GraphQLContext, Any], scope: str | None) -> Principal:
    """The caller, if authenticated and holding `scope`; a coded GraphQL error otherwise (for query fields)."""
    try:
        return authorize(info, scope)
    except GroundworkError as error:
        raise as_graphql_error(error) from None
