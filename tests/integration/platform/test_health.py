"""Liveness and readiness probes need no key and report each dependency."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import httpx

from tests.conftest import free_port, serving


async def test_live_and_ready_answer_without_a_key(client: httpx.AsyncClient) -> None:
    assert (await client.get("/health/live")).json() == {"status": "ok"}
    ready = await client.get("/health/ready")
    assert ready.status_code == 200
    assert ready.json() == {"status": "ok", "checks": {"postgres": "ok", "temporal": "ok"}}


async def test_ready_is_503_naming_temporal_when_it_is_unreachable(settings: Any) -> None:
    unreachable = replace(settings, temporal_address=f"127.0.0.1:{free_port()}")
    async with serving(unreachable) as url, httpx.AsyncClient(base_url=url, timeout=30) as http:
        ready = await http.get("/health/ready")
    assert ready.status_code == 503
    assert ready.json()["checks"] == {"postgres": "ok", "temporal": "down"}


async def test_openapi_and_docs_pages_are_served(client: httpx.AsyncClient) -> None:
    spec = (await client.get("/schema/openapi.json")).json()
    assert "/api/v1/work-item-enhancements" in spec["paths"] and "/api/v1/work-items" in spec["paths"]
    assert (await client.get("/schema/swagger")).status_code == 200
