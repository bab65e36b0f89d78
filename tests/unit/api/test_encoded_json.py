"""An already encoded JSON body goes out byte for byte, and never at the cost of what is added to it."""

from __future__ import annotations

from typing import Any

from litestar import Litestar, Response, Router, get
from litestar.background_tasks import BackgroundTask
from litestar.datastructures import Cookie, ResponseHeader
from litestar.testing import AsyncTestClient

from groundwork.api.encoded_json import EncodedJSON

BODY = b'{"data":{"id":"wie_1","note":"caf\xc3\xa9"}}'


@get("/plain")
async def plain() -> Response[dict[str, Any]]:
    return EncodedJSON(BODY)


@get("/accepted", status_code=202)
async def accepted() -> Response[dict[str, Any]]:
    return EncodedJSON(BODY)


async def test_the_bytes_go_out_as_they_are_with_their_type_and_length() -> None:
    async with AsyncTestClient(Litestar([plain, accepted])) as client:
        response = await client.get("/plain")
        other = await client.get("/accepted")

    assert response.status_code == 200
    assert response.content == BODY
    assert response.headers["content-type"] == "application/json"
    assert response.headers["content-length"] == str(len(BODY))
    assert response.json() == {"data": {"id": "wie_1", "note": "café"}}
    # The handler's own status code is kept.
    assert other.status_code == 202 and other.content == BODY


async def test_headers_cookies_and_background_tasks_added_by_a_layer_or_the_handler_are_not_dropped() -> None:
    ran: list[str] = []

    @get("/layered", background=BackgroundTask(lambda: ran.append("background")))
    async def layered() -> Response[dict[str, Any]]:
        return EncodedJSON(BODY)

    @get("/own")
    async def own() -> Response[dict[str, Any]]:
        response = EncodedJSON(BODY)
        response.set_header("x-own", "set by the handler")
        return response

    router = Router(
        "/v1",
        route_handlers=[layered],
        response_headers=[ResponseHeader(name="x-layer", value="kept")],
        response_cookies=[Cookie(key="layer", value="kept")],
    )
    async with AsyncTestClient(Litestar([router, own])) as client:
        response = await client.get("/v1/layered")
        own_response = await client.get("/own")

    assert response.status_code == 200
    assert response.content == BODY
    assert response.headers["content-type"] == "application/json"
    assert response.headers["x-layer"] == "kept"
    assert response.cookies["layer"] == "kept"
    assert ran == ["background"]
    assert own_response.content == BODY
    assert own_response.headers["x-own"] == "set by the handler"
    assert "x-layer" not in own_response.headers
