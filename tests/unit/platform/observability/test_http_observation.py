"""The HTTP wrapper keeps its label set bounded whatever the caller sends."""

from __future__ import annotations

from typing import Any

from prometheus_client import REGISTRY

from groundwork.platform.observability.http import Message, ObservedHTTP, Scope


async def _not_found(scope: Scope, receive: Any, send: Any) -> None:
    await send({"type": "http.response.start", "status": 404, "headers": []})
    await send({"type": "http.response.body", "body": b""})


async def test_an_unknown_method_is_counted_as_other_and_still_gets_a_request_id() -> None:
    sent: list[Message] = []

    async def send(message: Message) -> None:
        sent.append(message)

    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": b""}

    labels = {"method": "OTHER", "route": "unmatched", "status": "404"}
    before = REGISTRY.get_sample_value("groundwork_http_requests_total", labels) or 0
    scope = {"type": "http", "method": "BREW-COFFEE-NOW", "path": "/pot", "headers": []}
    await ObservedHTTP(_not_found)(scope, receive, send)
    assert REGISTRY.get_sample_value("groundwork_http_requests_total", labels) == before + 1
    assert (
        REGISTRY.get_sample_value(
            "groundwork_http_requests_total", {"method": "BREW-COFFEE-NOW", "route": "unmatched", "status": "404"}
        )
        is None
    )
    [(name, value)] = sent[0]["headers"]
    assert name == b"x-request-id" and len(value) == 32
