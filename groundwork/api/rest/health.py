"""Liveness and readiness probes."""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

import msgspec
from litestar import Request, Response, get
from litestar.openapi import ResponseSpec

from groundwork.api.rest.documents.common import to_camel
from groundwork.api.rest.documents.health import Liveness, Readiness
from groundwork.domain.errors import ServiceUnavailable
from groundwork.persistence import db
from groundwork.platform.search_replica.replica import IndexLag, search_replica_state


@get(
    "/health/live",
    opt={"auth": "public"},
    tags=["health"],
    summary="The process is up",
    description="Answers as long as the process serves requests; it checks nothing else.",
)
async def live() -> Liveness:
    return Liveness(status="ok")


@get(
    "/health/ready",
    opt={"auth": "public"},
    tags=["health"],
    summary="PostgreSQL and Temporal are reachable, and this process's search replica has caught up",
    description="`checks` names each dependency (`ok`, `down`, or for the search replica `catching_up`); "
    "`search` gives the replica's lag per index.",
    responses={
        503: ResponseSpec(Readiness, description="A dependency is down: `checks` names it.", generate_examples=False)
    },
)
async def ready(request: Request[Any, Any, Any]) -> Response[Readiness]:
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
            "replicaReady": replica.ready,
            "replica_ready": replica.ready,
            "indexes": {lag.index: _lag(lag) for lag in replica.indexes},
        }
    retry = None if ok else {"Retry-After": str(ServiceUnavailable.retry_after_seconds)}
    return Response(msgspec.convert(body, Readiness), status_code=200 if ok else 503, headers=retry)


def _lag(lag: IndexLag) -> dict[str, Any]:
    """An index's lag: camelCase names, and the snake_case ones beside them for one minor version."""
    fields = {k: v for k, v in asdict(lag).items() if k != "index"}
    return {**{to_camel(k): v for k, v in fields.items()}, **fields}
