"""Outbound HTTP to caller-chosen URLs (webhook endpoints, chat sinks): check the target, then connect
to exactly the address that was checked.

A target's host is resolved once, through the process's resolver (`resolver()`, replaceable with
`use_resolver` so tests can drive DNS); every address must be a public host unless private targets are
allowed; the connection is then pinned to the first checked address: the HTTP client's network
backend connects only to an address pinned for the request's host, so the client never resolves
the name again (DNS rebinding between check and connect cannot happen) while the URL, the `Host`
header and TLS (SNI and certificate check) keep the name. Redirects are never followed.
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
import weakref
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Iterator
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

import httpcore
import httpx
from httpcore._backends.auto import AutoBackend

from groundwork.domain import webhooks as rules

# host, port → the addresses it resolves to (IPv4 and IPv6 text), in the order to try them.
Resolver = Callable[[str, int], Awaitable[list[str]]]

DNS_TIMEOUT_SECONDS = 3.0


class ResolutionFailed(Exception):
    """The host did not resolve (no such name, no answer in time)."""


async def system_resolver(host: str, port: int) -> list[str]:
    """The operating system's resolver (`getaddrinfo`), within `DNS_TIMEOUT_SECONDS`."""
    try:
        infos = await asyncio.wait_for(
            asyncio.get_running_loop().getaddrinfo(host, port, type=socket.SOCK_STREAM), DNS_TIMEOUT_SECONDS
        )
    except TimeoutError:
        raise ResolutionFailed(f"no DNS answer for {host} within {DNS_TIMEOUT_SECONDS:g} s") from None
    except (OSError, UnicodeError) as exc:
        raise ResolutionFailed(f"DNS lookup of {host} failed: {exc}") from None
    return list(dict.fromkeys(str(info[4][0]) for info in infos))


_resolver: Resolver = system_resolver


def resolver() -> Resolver:
    """The resolver every target check uses in this process."""
    return _resolver


@contextlib.contextmanager
def use_resolver(replacement: Resolver) -> Iterator[None]:
    """Resolve every target through `replacement` for the duration of the block (tests drive DNS with it)."""
    global _resolver
    previous, _resolver = _resolver, replacement
    try:
        yield
    finally:
        _resolver = previous


@dataclass(frozen=True)
class TargetRefused:
    """Why a target may not be contacted now; `lookup_failed` when only DNS failed (it may answer later)."""

    reason: str
    lookup_failed: bool = False


@dataclass(frozen=True)
class CheckedTarget:
    """A URL whose host resolved to `address`, checked; the connection goes there and nowhere else."""

    url: str
    host: str
    port: int
    address: str


async def check_target(url: str, *, allow_private: bool) -> CheckedTarget | TargetRefused:
    """The target to connect to, or why it may not be contacted now (a refusal or a failed lookup)."""
    errors = rules.url_errors(url, allow_private=allow_private)
    if errors:
        return TargetRefused(f"refused: the url {errors[0].message}")
    parts = urlsplit(url)
    host = parts.hostname or ""
    port = parts.port or (443 if parts.scheme == "https" else 80)
    try:
        addresses = [host] if rules.is_ip_literal(host) else await _resolver(host, port)
    except ResolutionFailed as exc:
        return TargetRefused(str(exc), lookup_failed=True)
    if not addresses:
        return TargetRefused(f"DNS lookup of {host} returned no address", lookup_failed=True)
    if not allow_private and any(rules.is_private_address(a) for a in addresses):
        return TargetRefused(f"refused: {host} resolves to a loopback, private or otherwise non-public address")
    # The host as httpcore will name it to `connect_tcp`: ASCII (IDNA for names), IPv6 without brackets.
    connection_host = httpx.URL(url).raw_host.decode("ascii")
    return CheckedTarget(url=url, host=connection_host, port=port, address=addresses[0])


# The addresses pinned for the current task: (host, port) → address.
_pins: ContextVar[dict[tuple[str, int], str] | None] = ContextVar("webhook_target_pins", default=None)


@contextlib.asynccontextmanager
async def pinned(target: CheckedTarget) -> AsyncIterator[None]:
    """Requests in this block reach `target.host` only at the checked address."""
    pins = dict(_pins.get() or {})
    pins[(target.host, target.port)] = target.address
    token = _pins.set(pins)
    try:
        yield
    finally:
        _pins.reset(token)


class TargetNotChecked(httpcore.ConnectError):
    """A connection was asked for a host no check pinned: refused rather than resolved."""


class PinnedBackend(httpcore.AsyncNetworkBackend):
    """Connects to the address pinned for a host, never to what a fresh DNS lookup would say."""

    def __init__(self) -> None:
        self._backend = AutoBackend()

    async def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> httpcore.AsyncNetworkStream:
        """Open a TCP connection to the pinned address of `host:port` (TLS, if any, still names `host`)."""
        address = (_pins.get() or {}).get((host, port))
        if address is None:
            raise TargetNotChecked(f"{host}:{port} was not checked before connecting")
        return await self._backend.connect_tcp(
            address, port, timeout=timeout, local_address=local_address, socket_options=socket_options
        )

    async def connect_unix_socket(
        self, path: str, timeout: float | None = None, socket_options: Iterable[Any] | None = None
    ) -> httpcore.AsyncNetworkStream:
        """Unix sockets are never a webhook target."""
        raise TargetNotChecked("unix sockets are not webhook targets")

    async def sleep(self, seconds: float) -> None:
        """Sleep as the default backend does."""
        await self._backend.sleep(seconds)


class PinnedTransport(httpx.AsyncHTTPTransport):
    """httpx's transport with a connection pool whose connections go to pinned addresses only."""

    def __init__(self, limits: httpx.Limits) -> None:
        super().__init__(trust_env=False, limits=limits)
        self._pool = httpcore.AsyncConnectionPool(
            ssl_context=httpx.create_ssl_context(trust_env=False),
            max_connections=limits.max_connections,
            max_keepalive_connections=limits.max_keepalive_connections,
            keepalive_expiry=limits.keepalive_expiry,
            network_backend=PinnedBackend(),
        )


_clients: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, httpx.AsyncClient] = weakref.WeakKeyDictionary()


def http_client() -> httpx.AsyncClient:
    """One pooled client per event loop: pinned connections, no redirects, no proxies from the environment."""
    loop = asyncio.get_running_loop()
    client = _clients.get(loop)
    if client is None:
        limits = httpx.Limits(max_connections=200, max_keepalive_connections=50)
        client = httpx.AsyncClient(follow_redirects=False, trust_env=False, transport=PinnedTransport(limits))
        _clients[loop] = client
    return client
