"""Liveness and readiness probes."""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

from litestar import Request, Response, get
from litestar.openapi import ResponseSpec

from groundwork.domain.errors import ServiceUnavailable
from groundwork.persistence import db
from groundwork.platform.search_replica.replica import search_replica_state


@get("/health/live", opt={"auth": "public"}, summary="The process is up")
async def live() -> dict[str, str]:
    return {"status": "ok"}


@get(
    "/health/ready",
    opt={"auth": "public"},
    summary="PostgreSQL and Temporal are reachable, and this process's search replica has caught up",
    responses={503: ResponseSpec(dict[str, Any], description="A dependency is down: `checks` names it.")},
)
async def ready(request: Request[Any, Any, Any]) -> Response[dict[str, Any]]:
    checks = {"postgres": await db.ping(), "temporal": await request.app.state.temporal.healthy()}
    replica = search_replica_state()
    if replica is not None:
        checks["search"] = replica.ready
    ok = all(checks.values())
    body: dict[str, Any] = {
        "status": "ok" if ok else "unavailable",
        "checks": {k: "ok" if v else ("catching_up" if k == "search" else "down") for k, v in checks.items()},
    }
    if replica is not None:
        # Changes and seconds behind the head of each change log, as last measured.
        body["search"] = {
            "replica_ready": replica.ready,
            "indexes": {lag.index: {k: v for k, v in asdict(lag).items() if k != "index"} for lag in replica.indexes},
        }
    retry = None if ok else {"Retry-After": str(ServiceUnavailable.retry_after_seconds)}
    return Response(body, status_code=200 if ok else 503, headers=retry)
