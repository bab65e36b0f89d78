"""ASGI middleware that hands the app's Temporal connection to the services for each request."""

from __future__ import annotations

from litestar.enums import ScopeType
from litestar.middleware import ASGIMiddleware
from litestar.types import ASGIApp, Receive, Scope, Send

from groundwork.platform.temporal.client import TemporalConnection, release_connection, use_connection


class TemporalMiddleware(ASGIMiddleware):
    """Expose the app's Temporal connection to the services for the duration of each request."""

    scopes = (ScopeType.HTTP,)

    def __init__(self, connection: TemporalConnection) -> None:
        self.connection = connection

    async def handle(self, scope: Scope, receive: Receive, send: Send, next_app: ASGIApp) -> None:
        token = use_connection(self.connection)
        try:
            await next_app(scope, receive, send)
        finally:
            release_connection(token)
