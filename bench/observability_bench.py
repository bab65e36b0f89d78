"""What observing a request costs: `ObservedHTTP` around a bare ASGI app, against the bare app.

The app answers at once (no I/O), so the difference is the wrapper alone: the request id (read or
generated), the X-Request-Id header, the counter and histogram children looked up and updated, the
log context, the access-log level check, and (in the traced variant) a server span recorded by the
OpenTelemetry SDK with no exporter.

    .venv/bin/python bench/observability_bench.py            # 200,000 requests per variant
    .venv/bin/python bench/observability_bench.py --quick    # 20,000
"""

from __future__ import annotations

import argparse
import asyncio
import time
from collections.abc import Awaitable, Callable
from typing import Any

from opentelemetry.sdk.trace import TracerProvider

from groundwork.platform.observability import tracing
from groundwork.platform.observability.http import Message, ObservedHTTP, Receive, Scope

ROUTES = ["/api/v1/work-items/{work_item_id}", "/api/v1/projects", "/api/v1/notifications", "/health/ready"]


async def bare_app(scope: Scope, receive: Receive, send: Callable[[Message], Awaitable[None]]) -> None:
    """Routes (sets the template the router would) and answers 200 with a small body."""
    scope["path_template"] = ROUTES[len(scope["path"]) % len(ROUTES)]
    await send({"type": "http.response.start", "status": 200, "headers": [(b"content-type", b"application/json")]})
    await send({"type": "http.response.body", "body": b"{}"})


async def _send(message: dict[str, Any]) -> None:
    return None


async def _receive() -> dict[str, Any]:
    return {"type": "http.request", "body": b"", "more_body": False}


def _scope(n: int, with_id: bool) -> dict[str, Any]:
    headers = [(b"host", b"api.example"), (b"authorization", b"Bearer gw_x"), (b"accept", b"application/json")]
    if with_id:
        headers.append((b"x-request-id", b"client-chosen-id-123"))
    return {"type": "http", "method": "GET", "path": "/api/v1/x" + "y" * (n % 4), "headers": headers}


async def _run(app: Any, count: int, with_id: bool) -> float:
    """Seconds per request, best of 5 rounds."""
    scopes = [_scope(n, with_id) for n in range(64)]
    rounds = []
    for _ in range(5):
        started = time.perf_counter()
        for n in range(count // 5):
            await app(dict(scopes[n % 64]), _receive, _send)
        rounds.append((time.perf_counter() - started) / (count // 5))
    return min(rounds)


async def main(count: int) -> None:
    observed = ObservedHTTP(bare_app)
    bare = await _run(bare_app, count, False)
    plain = await _run(observed, count, False)
    with_id = await _run(observed, count, True)
    tracing.use_provider(TracerProvider())
    traced = await _run(observed, count, False)
    tracing.use_provider(None)
    print(f"{count} requests per variant, best of 5 rounds")
    print(f"bare app                       {bare * 1e6:7.2f} µs/request")
    print(f"observed, id generated         {plain * 1e6:7.2f} µs/request  (+{(plain - bare) * 1e6:.2f} µs)")
    print(f"observed, caller's id          {with_id * 1e6:7.2f} µs/request  (+{(with_id - bare) * 1e6:.2f} µs)")
    print(f"observed and traced (no export) {traced * 1e6:6.2f} µs/request  (+{(traced - bare) * 1e6:.2f} µs)")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    asyncio.run(main(20_000 if args.quick else 200_000))
