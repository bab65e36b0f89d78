"""The Temporal client the application services use: connected at start-up when possible, lazily otherwise."""

from __future__ import annotations

import asyncio
from contextvars import ContextVar

from temporalio.client import Client
from temporalio.envconfig import ClientConnectConfig
from temporalio.runtime import Runtime
from temporalio.service import TLSConfig

from groundwork.config import Settings
from groundwork.platform.observability import tracing
from groundwork.platform.temporal.payloads import data_converter


class TemporalConnection:
    """Holds one client; `get()` (re)connects if the server was down when the process started."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self._client: Client | None = None
        self._lock = asyncio.Lock()

    async def get(self, timeout: float = 5.0) -> Client:
        """The connected client; raises if Temporal is unreachable within `timeout`."""
        if self._client is not None:
            return self._client
        async with self._lock:
            if self._client is None:
                self._client = await asyncio.wait_for(connect_client(self.settings), timeout)
            return self._client

    async def healthy(self) -> bool:
        """Whether the Temporal frontend answers a health check."""
        try:
            client = await self.get(timeout=3.0)
            return bool(await asyncio.wait_for(client.service_client.check_health(), 3.0))
        except Exception:
            return False


async def connect_client(settings: Settings, *, runtime: Runtime | None = None) -> Client:
    """Connect to Temporal with the data converter every Groundwork process uses (and tracing when it is on).

    `runtime` carries the SDK's own metrics (the worker's `--metrics-port`); workers built on the
    client inherit its tracing interceptor.
    """
    return await Client.connect(
        **connect_config(settings),
        data_converter=data_converter,
        interceptors=tracing.temporal_interceptors(),
        runtime=runtime,
    )


def connect_config(settings: Settings) -> ClientConnectConfig:
    """The address, namespace, API key and TLS `Client.connect` takes, as the SDK's envconfig maps the settings."""
    config = settings.temporal_profile().to_client_connect_config()
    if config.get("tls") == TLSConfig():
        config["tls"] = True  # the SDK's spelling of TLS with the system's roots and nothing else
    return config


def tls_config(settings: Settings) -> bool | TLSConfig:
    """The connection's TLS: off, on with the system's roots, or with the configured certificates.

    Unless `TEMPORAL_TLS` says otherwise, TLS is on when an API key (Temporal Cloud) or a client
    certificate (mTLS) is configured. Files are read at each connect, so a renewed certificate is
    picked up by the next connection.
    """
    return connect_config(settings).get("tls", False)


# Per request (set by the API's `TemporalMiddleware`) rather than per process, so two apps in one
# process (tests, or an embedding host) never share each other's Temporal settings.
_current: ContextVar[TemporalConnection | None] = ContextVar("groundwork_temporal", default=None)


def use_connection(connection: TemporalConnection) -> object:
    """Make `connection` the one the services use in the current context; returns a token for `release`."""
    return _current.set(connection)


def release_connection(token: object) -> None:
    """Undo the `use_connection` that returned `token`."""
    _current.reset(token)  # type: ignore[arg-type]


def current_connection() -> TemporalConnection:
    """The Temporal connection of the app serving this request (or of `groundwork mcp`)."""
    connection = _current.get()
    if connection is None:
        raise RuntimeError("no Temporal connection configured in this context")
    return connection


def is_unreachable(exc: BaseException) -> bool:
    """Whether `exc` says the Temporal frontend cannot be reached (down, restarting, or not answering)."""
    from temporalio.service import RPCError, RPCStatusCode

    if isinstance(exc, RPCError):
        return exc.status in (RPCStatusCode.UNAVAILABLE, RPCStatusCode.DEADLINE_EXCEEDED, RPCStatusCode.CANCELLED)
    # The bridge's "Failed client connect" when the first connection is refused.
    return isinstance(exc, RuntimeError) and "client connect" in str(exc)
