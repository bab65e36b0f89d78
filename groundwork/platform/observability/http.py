"""The HTTP layer's observation: request metrics, the request id, a server span and the access line.

`ObservedHTTP` wraps an ASGI app outside its router and exception handling, so it sees every
request, the unmatched ones and the errors included, with its final status. The route label is the
route template the router matched (`/api/v1/work-items/{work_item_id}`), never the raw path, so
the label set stays bounded; unmatched requests share the route `unmatched`.

The hot path allocates no label set: the metric children of each (method, route, status) are looked
up in nested dicts after the first request of that combination.
"""

from __future__ import annotations

import logging
import os
import re
from collections.abc import Awaitable, Callable, MutableMapping
from time import perf_counter
from typing import Any

from prometheus_client.metrics import Counter, Histogram

from groundwork.platform.observability import tracing
from groundwork.platform.observability.logs import RequestContext, current_request
from groundwork.platform.observability.metrics import HTTP_REQUEST_DURATION, HTTP_REQUESTS

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

REQUEST_ID_HEADER = b"x-request-id"
UNMATCHED_ROUTE = "unmatched"
KNOWN_METHODS = frozenset({"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"})
# A caller's request id is kept when it is short and plain (it is echoed in a header and logged).
_WELL_FORMED_ID = re.compile(rb"[A-Za-z0-9._:\-]{1,128}")

access_log = logging.getLogger("groundwork.access")

_Children = tuple[Any, Any]


def request_id_of(scope: Scope) -> str:
    """The request's well-formed `X-Request-Id`, else a new one."""
    for name, value in scope["headers"]:
        if name == REQUEST_ID_HEADER:
            if _WELL_FORMED_ID.fullmatch(value):
                return str(value.decode("ascii"))
            break
    return os.urandom(16).hex()


class _RequestMetrics:
    """The counter and histogram children of each (method, route, status), made once."""

    def __init__(self, counter: Counter, histogram: Histogram) -> None:
        self.counter = counter
        self.histogram = histogram
        self.children: dict[str, dict[str, dict[int, _Children]]] = {}

    def observe(self, method: str, route: str, status: int, seconds: float) -> None:
        try:
            counter, histogram = self.children[route][method][status]
        except KeyError:
            counter, histogram = self._make(method, route, status)
        counter.inc()
        histogram.observe(seconds)

    def _make(self, method: str, route: str, status: int) -> _Children:
        labels = (method, route, str(status))
        children = (self.counter.labels(*labels), self.histogram.labels(*labels))
        self.children.setdefault(route, {}).setdefault(method, {})[status] = children
        return children


REQUEST_METRICS = _RequestMetrics(HTTP_REQUESTS, HTTP_REQUEST_DURATION)


class ObservedHTTP:
    """Wrap an ASGI app: count and time each request, give it a request id, trace it, log it."""

    def __init__(self, app: ASGIApp, metrics: _RequestMetrics = REQUEST_METRICS) -> None:
        self.app = app
        self.metrics = metrics

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = perf_counter()
        request_id = request_id_of(scope)
        context = RequestContext(request_id, scope)
        token = current_request.set(context)
        header = (REQUEST_ID_HEADER, request_id.encode("ascii"))
        status = 500

        async def send_with_id(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
                message["headers"] = [*message.get("headers", ()), header]
            await send(message)

        tracer = tracing.tracer()
        try:
            if tracer is None:
                await self.app(scope, receive, send_with_id)
            else:
                await _traced(tracer, self.app, scope, receive, send_with_id, lambda: status)
        finally:
            elapsed = perf_counter() - started
            method = scope["method"]
            if method not in KNOWN_METHODS:  # the method is the caller's: keep the label set bounded
                method = "OTHER"
            route = scope.get("path_template") or UNMATCHED_ROUTE
            self.metrics.observe(method, route, status, elapsed)
            if access_log.isEnabledFor(logging.INFO):
                access_log.info(
                    "%s %s %s",
                    method,
                    route,
                    status,
                    extra={"method": method, "route": route, "status": status, "duration_ms": round(elapsed * 1000, 3)},
                )
            current_request.reset(token)


async def _traced(
    tracer: Any, app: ASGIApp, scope: Scope, receive: Receive, send: Send, status: Callable[[], int]
) -> None:
    from opentelemetry import propagate, trace

    carrier = {name.decode("latin-1"): value.decode("latin-1") for name, value in scope["headers"]}
    parent = propagate.extract(carrier)
    method = scope["method"]
    with tracer.start_as_current_span(
        method, context=parent, kind=trace.SpanKind.SERVER, record_exception=True, set_status_on_exception=True
    ) as span:
        try:
            await app(scope, receive, send)
        finally:
            route = scope.get("path_template") or UNMATCHED_ROUTE
            code = status()
            span.update_name(f"{method} {route}")
            span.set_attribute("http.request.method", method)
            span.set_attribute("http.route", route)
            span.set_attribute("http.response.status_code", code)
            request = current_request.get()
            if request is not None:
                span.set_attribute("groundwork.request_id", request.request_id)
                if request.principal_id is not None:
                    span.set_attribute("groundwork.principal_id", request.principal_id)
            if code >= 500:
                span.set_status(trace.Status(trace.StatusCode.ERROR))


def observe_litestar(app: Any) -> Any:
    """Observe every HTTP request of a Litestar app (wraps its handler outside routing and error handling)."""
    app.asgi_handler = ObservedHTTP(app.asgi_handler)
    return app
