"""The policy on every documented route of the Litestar apps (REST, the Agent API, the internal API), before
the idempotency claim and the handler: the query string, then the body, each checked against what the
route declares. The handler then decodes a body that is known to fit."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import msgspec
from litestar.enums import ScopeType
from litestar.handlers import HTTPRouteHandler
from litestar.middleware import ASGIMiddleware
from litestar.types import ASGIApp, Receive, Scope, Send

from groundwork.api.input_policy.json_body import decode_body
from groundwork.api.input_policy.query_string import QueryParameters
from groundwork.api.request_body import read_body, replaying

# A route's own input handling (`opt={"input": OWN_INPUT}`: GraphQL reads its body and query itself).
OWN_INPUT = "own"
_WITH_BODY = frozenset({"POST", "PUT", "PATCH"})


class NoBody(msgspec.Struct, forbid_unknown_fields=True):
    """What a route without a body takes: nothing, or the empty object."""


@dataclass(frozen=True)
class RouteInput:
    """What one route declares: its query parameters and the type of its body."""

    query: QueryParameters
    body: Any

    @classmethod
    def of(cls, handler: HTTPRouteHandler, scope: Scope) -> RouteInput:
        """Read from the handler's signature (and `opt["required_query"]`, names it reads itself)."""
        data = handler.parsed_fn_signature.parameters.get("data")
        also = (handler.opt or {}).get("required_query") or {}
        query = QueryParameters.of(handler, (scope.get("path_params") or {}).keys(), also)
        return cls(query, data.annotation if data is not None else NoBody)


def _content_type(scope: Scope) -> str | None:
    for name, value in scope.get("headers", []):
        if name == b"content-type":
            return str(value.decode("latin-1"))
    return None


class InputPolicyMiddleware(ASGIMiddleware):
    """400 for an unknown or mistyped parameter or field, 415 for a body that is not JSON (see the package)."""

    scopes = (ScopeType.HTTP,)

    def __init__(self, max_body_bytes: int) -> None:
        self.max_body_bytes = max_body_bytes
        self._routes: dict[HTTPRouteHandler, RouteInput] = {}

    def _route(self, scope: Scope) -> RouteInput | None:
        handler = scope.get("route_handler")
        if not isinstance(handler, HTTPRouteHandler) or handler.resolve_include_in_schema() is False:
            return None  # the API documents, its pages and assets, metrics: no input of their own
        if (handler.opt or {}).get("input") == OWN_INPUT:
            return None
        route = self._routes.get(handler)
        if route is None:
            route = self._routes[handler] = RouteInput.of(handler, scope)
        return route

    async def handle(self, scope: Scope, receive: Receive, send: Send, next_app: ASGIApp) -> None:
        """Check the query string, then the body (read once and handed on), against the route's declarations."""
        route = self._route(scope)
        if route is None:
            await next_app(scope, receive, send)
            return
        route.query.check(scope.get("query_string", b""))
        if scope.get("method") not in _WITH_BODY:
            await next_app(scope, receive, send)
            return
        body = await read_body(receive, self.max_body_bytes)
        decode_body(body, _content_type(scope), route.body)
        if not body.strip() and route.body is not NoBody:
            body = b"{}"  # an empty body is the empty object
        await next_app(scope, replaying(body, receive), send)
