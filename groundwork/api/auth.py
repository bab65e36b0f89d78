"""Bearer-key authentication and the per-route scope guard, before anything else runs."""

from __future__ import annotations

from typing import Any

from litestar.enums import ScopeType
from litestar.middleware import ASGIMiddleware
from litestar.types import ASGIApp, Receive, Scope, Send

from groundwork.api.rate_limit import TokenBuckets, client_address, refuse_if_waiting
from groundwork.domain.errors import NotFound, Unauthenticated
from groundwork.domain.tenancy.connected_apps import scope_refusal
from groundwork.domain.tenancy.principals import Principal
from groundwork.services.tenancy import api_keys

# Routes anyone may reach: probes, API docs, and the GraphiQL page (its queries still need a key).
PUBLIC_PATHS = ("/health/", "/schema")
# GraphQL answers the GraphiQL page without a key; its resolvers demand a principal themselves, and answer a
# missing or unusable key the way they answer a missing scope (`AUTH_REFUSAL` holds why there is no principal).
OPTIONAL_PATHS = ("/graphql",)
AUTH_REFUSAL = "groundwork.auth_refusal"


def unauthenticated(key: str | None) -> Unauthenticated:
    """The refusal of a request without a usable key: none sent, or an unknown or revoked one."""
    return Unauthenticated(
        "Send a valid API key as `Authorization: Bearer <key>`."
        if key is None
        else "The API key is unknown or revoked."
    )


def bearer_key(scope: Scope) -> str | None:
    """The key from `Authorization: Bearer <key>`, if the header has that form."""
    for name, value in scope.get("headers", []):
        if name == b"authorization":
            scheme, _, key = value.decode("latin-1").partition(" ")
            if scheme.lower() == "bearer" and key.strip():
                return key.strip()
            return None
    return None


def required_scope(scope: Scope) -> str | None:
    """The scope the matched route declares in `opt={"scope": ...}`."""
    handler = scope.get("route_handler")
    opt: dict[str, Any] = getattr(handler, "opt", {}) or {}
    value = opt.get("scope")
    return str(value) if value else None


class AuthMiddleware(ASGIMiddleware):
    """Resolve the Bearer key to a principal (`scope["user"]`) and enforce the route's scope.

    Requests without a valid key (none, an unknown or revoked one, keyless `/graphql`) spend a token
    of their client address's bucket (`anonymous`): once it is empty they get 429, and a key from
    that address is not even looked up until it refills.
    """

    scopes = (ScopeType.HTTP,)

    def __init__(self, anonymous: TokenBuckets | None = None) -> None:
        self.anonymous = anonymous

    def _spend(self, scope: Scope) -> None:
        if self.anonymous is not None:
            refuse_if_waiting(self.anonymous.take(client_address(scope)))

    async def handle(self, scope: Scope, receive: Receive, send: Send, next_app: ASGIApp) -> None:
        path = scope["path"]
        handler_opt = getattr(scope.get("route_handler"), "opt", {}) or {}
        optional = path.startswith(OPTIONAL_PATHS)
        if path.startswith(PUBLIC_PATHS) or handler_opt.get("auth") == "public":
            await next_app(scope, receive, send)
            return
        key = bearer_key(scope)
        if key is None:
            self._spend(scope)
        elif self.anonymous is not None:
            refuse_if_waiting(self.anonymous.wait(client_address(scope)))
        principal: Principal | None = await api_keys.resolve_key(key) if key else None
        if key is not None and principal is None:
            self._spend(scope)
        if handler_opt.get("internal") and (principal is None or principal.kind != "provider"):
            # The internal API exists only for provider credentials: to anyone else it is not there.
            raise NotFound("No such resource.")
        if principal is None and not optional:
            raise unauthenticated(key)
        if principal is None:
            scope[AUTH_REFUSAL] = unauthenticated(key)  # type: ignore[literal-required]
        scope["user"] = principal
        needed = required_scope(scope)
        if needed and principal is not None and not principal.has_scope(needed):
            raise scope_refusal(principal, needed)
        await next_app(scope, receive, send)
