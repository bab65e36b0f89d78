"""Reading a request body once, within the size limit, and handing it on to the app as if unread."""

from __future__ import annotations

from typing import Any

from litestar.types import Receive

from groundwork.domain.errors import PayloadTooLarge


async def read_body(receive: Receive, limit: int) -> bytes:
    """The whole body; 413 `payload_too_large` past `limit` bytes."""
    chunks: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        if message["type"] != "http.request":
            break
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > limit:
            raise PayloadTooLarge(f"The request body exceeds {limit} bytes.")
        chunks.append(chunk)
        if not message.get("more_body", False):
            break
    return b"".join(chunks)


def replaying(body: bytes, receive: Receive) -> Receive:
    """A `receive` that gives `body` first, then passes what follows (a disconnect) through."""
    delivered = False

    async def replay() -> Any:
        nonlocal delivered
        if delivered:
            return await receive()
        delivered = True
        return {"type": "http.request", "body": body, "more_body": False}

    return replay
