"""The Litestar applications: the public API and the internal API, each on its own listener.

The public app serves REST under /api/v1 and /api/agent/v1, GraphQL at /graphql, MCP at /mcp and its
OpenAPI document at /schema. The internal app serves /internal/v1 (provider contributions, corpus
sources) with its own /schema; `groundwork serve` binds it to `--internal-host:--internal-port`
(127.0.0.1:8001 by default) and never to the public port.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from litestar import Litestar, asgi
from litestar.openapi import OpenAPIConfig
from litestar.openapi.spec import Contact, Tag
from litestar.types import ASGIApp, Receive, Scope, Send

from groundwork import __version__
from groundwork.api.agent.routes import AgentController
from groundwork.api.auth import AuthMiddleware
from groundwork.api.browser_assets import (
    API_KEY_COMPONENTS,
    API_KEY_SECURITY,
    browser_asset,
    swagger_render_plugin,
)
from groundwork.api.errors import EXCEPTION_HANDLERS
from groundwork.api.graphql.schema import GraphQLController
from groundwork.api.idempotency import IdempotencyMiddleware
from groundwork.api.input_policy.middleware import InputPolicyMiddleware
from groundwork.api.internal.context_engine import ContextContributionController, ContextProviderController
from groundwork.api.internal.evidence_search import CorpusSourceController
from groundwork.api.mcp.server import build_mcp_server, current_principal
from groundwork.api.openapi_problems import document_problems
from groundwork.api.rate_limit import RateLimitMiddleware, TokenBuckets
from groundwork.api.rest.context_engine import ContextEngineController, ContextQueryController
from groundwork.api.rest.enhancement import EnhancementRunController, get_operation
from groundwork.api.rest.evidence_search import ContextSearchController
from groundwork.api.rest.health import live, ready
from groundwork.api.rest.metrics import prometheus_metrics
from groundwork.api.rest.notifications.actions import show_action, use_action
from groundwork.api.rest.notifications.inbox import NotificationController
from groundwork.api.rest.notifications.stream import notification_stream
from groundwork.api.rest.notifications.threads import MessageController
from groundwork.api.rest.notifications.views import view_notification
from groundwork.api.rest.tenancy.administration import (
    EngagementController,
    PortfolioController,
    ProjectAdministrationController,
)
from groundwork.api.rest.tenancy.api_keys import ApiKeyController
from groundwork.api.rest.tenancy.connected_apps import ConnectedAppController
from groundwork.api.rest.tenancy.people import MeController, PrincipalController, ProjectMemberController
from groundwork.api.rest.tracker_imports import ProjectImportController
from groundwork.api.rest.webhooks import WebhookDeliveryController, WebhookEndpointController
from groundwork.api.rest.work_items import WorkItemController
from groundwork.api.temporal import TemporalMiddleware
from groundwork.config import Settings
from groundwork.domain.tenancy.principals import Principal
from groundwork.persistence import db
from groundwork.platform.caches.serving import serving_caches
from groundwork.platform.garbage_collection import settle_after_startup
from groundwork.platform.observability import tracing
from groundwork.platform.observability.http import observe_litestar
from groundwork.platform.search_replica import replica as search_replica
from groundwork.platform.temporal.client import TemporalConnection
from groundwork.search import corpus_index
from groundwork.services.enhancement import run_waits

# How every Groundwork API server runs under uvicorn: the uvloop event loop and the httptools parser
# (C implementations; uvicorn's defaults fall back to pure Python when they are missing). A stopping server
# lets requests in flight finish for as long as the longest `?wait` (30 s) and a little more, then cancels
# them: uvicorn's default is to wait for ever, so one stuck request would keep the process from stopping.
# The HTTP protocol is httptools' with the request head bounded and refused as problem+json (api/http_protocol.py).
SERVER_OPTIONS: dict[str, Any] = {
    "loop": "uvloop",
    "http": "groundwork.api.http_protocol:GroundworkHttpProtocol",
    "timeout_graceful_shutdown": 35,
}


def _middleware(settings: Settings, temporal: TemporalConnection) -> list[Any]:
    return [
        TemporalMiddleware(temporal),
        AuthMiddleware(TokenBuckets(settings.anonymous_rate_limit_per_minute)),
        RateLimitMiddleware(TokenBuckets(settings.rate_limit_per_minute)),
        InputPolicyMiddleware(settings.max_body_bytes),
        IdempotencyMiddleware(settings.max_body_bytes, settings.keyring),
    ]


def _connections(settings: Settings, temporal: TemporalConnection) -> Any:
    @asynccontextmanager
    async def connections(app: Litestar) -> AsyncIterator[None]:
        async with (
            db.connection(settings.database_url, max_size=settings.db_pool_max_size),
            run_waits.listening(settings.database_url),
            serving_caches(settings.database_url),
            # This process's own search replica; /health/ready answers 503 until it has caught up.
            search_replica.running(settings.index_dir) if settings.search_replica else contextlib.nullcontext(),
        ):
            # Temporal may still be starting: readiness reports it, and the client connects on first use.
            with contextlib.suppress(Exception):
                await temporal.get(timeout=5.0)
            yield

    return connections


def create_app(settings: Settings | None = None, *, temporal: TemporalConnection | None = None) -> Litestar:
    """Build the public app for `settings` (default: from the environment)."""
    settings = settings or Settings.from_env()
    temporal = temporal or TemporalConnection(settings)
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

    connections = _connections(settings, temporal)

    @asynccontextmanager
    async def lifespan(app: Litestar) -> AsyncIterator[None]:
        async with connections(app), mcp.session_manager.run():
            yield

    app = Litestar(
        route_handlers=[
            live,
            ready,
            prometheus_metrics,
            WorkItemController,
            WebhookEndpointController,
            WebhookDeliveryController,
            ContextSearchController,
            ContextQueryController,
            ContextEngineController,
            AgentController,
            EnhancementRunController,
            get_operation,
            NotificationController,
            notification_stream,
            MessageController,
            show_action,
            use_action,
            view_notification,
            ConnectedAppController,
            PortfolioController,
            EngagementController,
            ProjectAdministrationController,
            ProjectMemberController,
            MeController,
            PrincipalController,
            ApiKeyController,
            ProjectImportController,
            GraphQLController,
            mcp_endpoint,
            browser_asset,
        ],
        middleware=_middleware(settings, temporal),
        exception_handlers=EXCEPTION_HANDLERS,
        lifespan=[lifespan],
        request_max_body_size=settings.max_body_bytes,
        openapi_config=OpenAPIConfig(
            title="Groundwork",
            version=__version__,
            description="Work item enhancement, the context engine with evidence search, and notifications and "
            "messaging, over REST (this document), GraphQL (`/graphql`) and MCP (`/mcp`). Every success body is a "
            "typed schema; every failure an RFC 9457 problem with a stable `code`.",
            contact=Contact(name="Groundwork maintainers"),
            path="/schema",
            render_plugins=[swagger_render_plugin()],
            components=API_KEY_COMPONENTS,
            security=API_KEY_SECURITY,
            tags=[
                Tag(
                    name="notifications",
                    description="Notifications and messaging: contract v0.2 (preview). Self-scoped inbox, "
                    "lifecycle and snooze commands, bulk moves, a live feed (Server-Sent Events), participant-scoped "
                    "threads, preferences, action links and the pages behind e-mail links.",
                ),
                Tag(
                    name="connected apps", description="Connected apps and their declarations (contract v0.2, preview)."
                ),
            ],
        ),
        debug=False,
        # Processes log JSON lines (groundwork.observability.logs); the app must not reconfigure logging.
        logging_config=None,
    )
    document_problems(app)
    app.state.settings = settings
    app.state.temporal = temporal
    return observe_litestar(app)


def create_internal_app(
    settings: Settings | None = None, *, temporal: TemporalConnection | None = None, standalone: bool = True
) -> Litestar:
    """Build the internal app (`/internal/v1`, provider keys only) with its own OpenAPI document at /schema.

    `standalone=False` when it shares a process with the public app, whose lifespan opens the
    connections both use.
    """
    settings = settings or Settings.from_env()
    temporal = temporal or TemporalConnection(settings)
    corpus_index.configure(settings.index_dir)
    app = Litestar(
        route_handlers=[
            live,
            ready,
            ContextProviderController,
            ContextContributionController,
            CorpusSourceController,
            browser_asset,
        ],
        middleware=_middleware(settings, temporal),
        exception_handlers=EXCEPTION_HANDLERS,
        lifespan=[_connections(settings, temporal)] if standalone else [],
        request_max_body_size=settings.max_body_bytes,
        openapi_config=OpenAPIConfig(
            title="Groundwork internal API",
            version=__version__,
            path="/schema",
            contact=Contact(name="Groundwork maintainers"),
            description="Provider contributions and corpus sources. Served on the internal listener only; "
            "only provider keys (`groundwork keys create --kind provider`) reach it.",
            render_plugins=[swagger_render_plugin()],
            components=API_KEY_COMPONENTS,
            security=API_KEY_SECURITY,
        ),
        debug=False,
        # Processes log JSON lines (groundwork.observability.logs); the app must not reconfigure logging.
        logging_config=None,
    )
    document_problems(app)
    app.state.settings = settings
    app.state.temporal = temporal
    return observe_litestar(app)


class ListenerRouter:
    """One ASGI app behind two listeners: connections accepted on the internal port reach the internal app.

    The port is that of the socket the connection arrived on (`scope["server"]`), which a client
    cannot choose by any header; everything else, the lifespan included, goes to the public app.
    """

    def __init__(self, public: ASGIApp, internal: ASGIApp, internal_port: int) -> None:
        self.public = public
        self.internal = internal
        self.internal_port = internal_port

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        server = scope.get("server") if scope["type"] != "lifespan" else None
        if server is not None and server[1] == self.internal_port:
            await self.internal(scope, receive, send)
        else:
            await self.public(scope, receive, send)


def create_listeners(settings: Settings | None = None) -> ListenerRouter:
    """The public and the internal app in one process, told apart by the listener a connection came on."""
    settings = settings or Settings.from_env()
    temporal = TemporalConnection(settings)
    public = create_app(settings, temporal=temporal)
    internal = create_internal_app(settings, temporal=temporal, standalone=False)
    return ListenerRouter(public, internal, settings.internal_port)


def app_from_env() -> Litestar:
    """Factory for `uvicorn --factory`: the public app alone."""
    tracing.configure_from_env("groundwork-api")
    return create_app()


def listeners_from_env() -> ListenerRouter:
    """Factory for `groundwork serve`: both apps, one per listener."""
    tracing.configure_from_env("groundwork-api")
    listeners = create_listeners()
    settle_after_startup()
    return listeners


__all__: list[Any] = ["app_from_env", "create_app", "create_internal_app", "create_listeners", "listeners_from_env"]
