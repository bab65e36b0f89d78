"""An oversized request line or header section, or bytes that are not HTTP, answer problem+json like every other
refusal (the server's own protocol, before any app runs), and the server goes on serving."""

from __future__ import annotations

import asyncio
import json
from urllib.parse import urlsplit

import httpx
import pytest

from groundwork.api.http_protocol import MAX_HEADER_BYTES, MAX_REQUEST_TARGET_BYTES


async def _raw(api_url: str, request: bytes) -> tuple[int, dict[str, str], dict[str, object]]:
    address = urlsplit(api_url)
    reader, writer = await asyncio.open_connection(address.hostname, address.port)
    try:
        writer.write(request)
        await writer.drain()
        answer = await asyncio.wait_for(reader.read(), 10)
    finally:
        writer.close()
    head, _, body = answer.partition(b"\r\n\r\n")
    status_line, *lines = head.decode("latin-1").split("\r\n")
    headers = {name.lower(): value.strip() for name, _, value in (line.partition(":") for line in lines)}
    return int(status_line.split()[1]), headers, json.loads(body)


@pytest.mark.parametrize(
    ("request_bytes", "status", "code"),
    [
        (b"GET /api/v1/projects?q=" + b"a" * 100_000 + b" HTTP/1.1\r\nHost: x\r\n\r\n", 414, "uri_too_long"),
        (
            b"GET /api/v1/projects HTTP/1.1\r\nHost: x\r\nX-Big: " + b"a" * 70_000 + b"\r\n\r\n",
            431,
            "headers_too_large",
        ),
        (
            b"GET /api/v1/projects HTTP/1.1\r\nHost: x\r\n" + b"X-Many: aaaaaaaa\r\n" * 4000 + b"\r\n",
            431,
            "headers_too_large",
        ),
        (b"NOT HTTP AT ALL\r\n\r\n", 400, "invalid_request"),
    ],
)
async def test_a_request_the_server_will_not_read_answers_a_problem(
    api_url: str, client: httpx.AsyncClient, request_bytes: bytes, status: int, code: str
) -> None:
    answered, headers, problem = await _raw(api_url, request_bytes)
    assert (answered, problem["status"], problem["code"]) == (status, status, code)
    assert headers["content-type"] == "application/problem+json" and headers["connection"] == "close"
    assert {"type", "title", "detail"} <= problem.keys()
    assert (await client.get("/health/live")).status_code == 200


async def test_a_request_within_the_limits_reaches_the_app(api_url: str, client: httpx.AsyncClient) -> None:
    target = "/health/live?" + "a" * (MAX_REQUEST_TARGET_BYTES - 200)
    response = await client.get(target, headers={"X-Some": "b" * (MAX_HEADER_BYTES // 2)})
    assert response.status_code == 400 and response.json()["code"] == "invalid_request"  # read, then refused
    assert response.json()["errors"][0]["path"] == "a" * 100
