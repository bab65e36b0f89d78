"""The Litestar application: REST under /api/v1, GraphQL at /graphql, MCP at /mcp, docs at /schema."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from litestar import Litestar, asgi
from litestar.openapi import OpenAPIConfig
from litestar.openapi.plugins import ScalarRenderPlugin, SwaggerRenderPlugin
from litestar.openapi.spec import Tag
from litestar.types import Receive, Scope, Send

from groundwork import __version__
from groundwork.api.agent.routes import AgentController
from groundwork.api.auth import AuthMiddleware
from groundwork.api.errors import EXCEPTION_HANDLERS
from groundwork.api.graphql.schema import GraphQLController
from groundwork.api.idempotency import IdempotencyMiddleware
from groundwork.api.internal.context_engine import ContextContributionController, ContextProviderController
from groundwork.api.mcp.server import build_mcp_server, current_principal
from groundwork.api.rate_limit import RateLimitMiddleware, TokenBuckets
from groundwork.api.rest.connected_apps import ConnectedAppController
from groundwork.api.rest.context_engine import ContextEngineController, ContextQueryController
from groundwork.api.rest.context_search import ContextSearchController, CorpusSourceController
from groundwork.api.rest.enhancement import EnhancementRunController, get_operation
from groundwork.api.rest.health import live, ready
from groundwork.api.rest.messages import MessageController
from groundwork.api.rest.notification_actions import show_action, use_action
from groundwork.api.rest.notifications import NotificationController
from groundwork.api.rest.webhooks import WebhookDeliveryController, WebhookEndpointController
from groundwork.api.rest.work_items import ProjectController, WorkItemController
from groundwork.api.temporal import TemporalMiddleware
from groundwork.config import Settings
from groundwork.domain.principals import Principal
from groundwork.persistence import db
from groundwork.search import corpus_index
from groundwork.services import run_waits
from groundwork.services.serving_caches import serving_caches
from groundwork.services.temporal import TemporalConnection

# How every Groundwork API server runs under uvicorn: the uvloop event loop and the httptools parser
# (C implementations; uvicorn's defaults fall back to pure Python when they are missing).
SERVER_OPTIONS: dict[str, Any] = {"loop": "uvloop", "http": "httptools"}


def create_app(settings: Settings | None = None) -> Litestar:
    """Build the app for `settings` (default: from the environment)."""
    settings = settings or Settings.from_env()
    temporal = TemporalConnection(settings)
    corpus_index.configure(settings.index_dir)
    mcp = build_mcp_server()
    mcp_app = mcp.streamable_http_app(streamable_http_path="/", stateless_http=True, json_response=True)

    @asgi("/mcp", is_mount=True, opt={"scope": None}, copy_scope=False)
    async def mcp_endpoint(scope: Scope, receive: Receive, send: Send) -> None:
        user = scope.get("user")
        token = current_principal.set(user if isinstance(user, Principal) else None)
        try:
            await mcp_app(scope, receive, send)  # type: ignore[arg-type]
        finally:
            current_principal.reset(token)

    @asynccontextmanager
    async def lifespan(app: Litestar) -> AsyncIterator[None]:
        async with (
            db.connection(settings.database_url, max_size=settings.db_pool_max_size),
            run_waits.listening(settings.database_url),
            serving_caches(settings.database_url),
        ):
            # Temporal may still be starting: readiness reports it, and the client connects on first use.
            with contextlib.suppress(Exception):
                await temporal.get(timeout=5.0)
            async with mcp.session_manager.run():
                yield

    app = Litestar(
        route_handlers=[
            live,
            ready,
            ProjectController,
            WorkItemController,
            WebhookEndpointController,
            WebhookDeliveryController,
            ContextSearchController,
            CorpusSourceController,
            ContextQueryController,
            ContextEngineController,
            ContextProviderController,
            ContextContributionController,
            AgentController,
            EnhancementRunController,
            get_operation,
            NotificationController,
            MessageController,
            show_action,
            use_action,
            ConnectedAppController,
            GraphQLController,
            mcp_endpoint,
        ],
        middleware=[
            TemporalMiddleware(temporal),
            AuthMiddleware(),
            RateLimitMiddleware(TokenBuckets(settings.rate_limit_per_minute)),
            IdempotencyMiddleware(settings.max_body_bytes),
        ],
        exception_handlers=EXCEPTION_HANDLERS,
        lifespan=[lifespan],
        request_max_body_size=settings.max_body_bytes,
        openapi_config=OpenAPIConfig(
            title="Groundwork",
            version=__version__,
            path="/schema",
            render_plugins=[ScalarRenderPlugin(), SwaggerRenderPlugin()],
            tags=[
                Tag(
                    name="notifications",
                    description="Notifications and messaging: contract v0.2 (preview). Self-scoped inbox, "
                    "lifecycle commands, participant-scoped threads, preferences, action links.",
                ),
                Tag(
                    name="connected apps", description="Connected apps and their declarations (contract v0.2, preview)."
                ),
            ],
        ),
        debug=False,
    )
    app.state.settings = settings
    app.state.temporal = temporal
    return app


def app_from_env() -> Litestar:
    """Factory for `uvicorn --factory`."""
    return create_app()


__all__: list[Any] = ["app_from_env", "create_app"]
