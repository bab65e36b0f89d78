"""Liveness and readiness probes."""

from __future__ import annotations

from typing import Any

from litestar import Request, Response, get

from groundwork.domain.errors import ServiceUnavailable
from groundwork.persistence import db


@get("/health/live", opt={"auth": "public"}, summary="The process is up")
async def live() -> dict[str, str]:
    return {"status": "ok"}


@get("/health/ready", opt={"auth": "public"}, summary="PostgreSQL and Temporal are reachable")
async def ready(request: Request[Any, Any, Any]) -> Response[dict[str, Any]]:
    checks = {"postgres": await db.ping(), "temporal": await request.app.state.temporal.healthy()}
    ok = all(checks.values())
    return Response(
        {
            "status": "ok" if ok else "unavailable",
            "checks": {k: "ok" if v else "down" for k, v in checks.items()},
        },
        status_code=200 if ok else 503,
        headers=None if ok else {"Retry-After": str(ServiceUnavailable.retry_after_seconds)},
    )
