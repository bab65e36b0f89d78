"""A JSON body encoded once and sent as it is (`GET` of an enhancement run, evidence search over REST).

Litestar's `Response` assembles a response for every request (a case-insensitive header map, cookies, the
media type, then an `ASGIResponse` that encodes them again): in process that was about a quarter of the CPU of
`GET` of a run, whose body is already bytes kept with the run's view. `EncodedJSON` sends those bytes with
their two headers. Whenever anything is added (response headers, cookies or a background task, by a layer, a
hook or the response itself) it takes Litestar's own path, so none of them is ever dropped.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from litestar import MediaType, Request, Response
from litestar.background_tasks import BackgroundTask, BackgroundTasks
from litestar.datastructures import Cookie
from litestar.status_codes import HTTP_200_OK, HTTP_204_NO_CONTENT, HTTP_304_NOT_MODIFIED
from litestar.types import ASGIApp, Receive, Scope, Send, TypeEncodersMap

_CONTENT_TYPE = (b"content-type", MediaType.JSON.value.encode("ascii"))


class _SendEncoded:
    """The ASGI response: the start event with the content type and length, then the whole body."""

    __slots__ = ("body", "status")

    def __init__(self, body: bytes, status: int) -> None:
        self.body = body
        self.status = status

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        length = (b"content-length", str(len(self.body)).encode("ascii"))
        await send({"type": "http.response.start", "status": self.status, "headers": [_CONTENT_TYPE, length]})
        await send({"type": "http.response.body", "body": self.body, "more_body": False})


class EncodedJSON(Response[Any]):
    """A response whose body is JSON already encoded (`bytes`), sent without being rendered again."""

    __slots__ = ()

    def __init__(self, body: bytes, status_code: int | None = None) -> None:
        # Response.__init__ would copy headers and cookies this response never has; set what it sets.
        self.content = body
        self.status_code = status_code
        self.background = None
        self.cookies = []
        self.encoding = "utf-8"
        self.headers = {}
        self.media_type = MediaType.JSON
        self.response_type_encoders = {}

    # Litestar declares `ASGIResponse` but only ever calls the result as an ASGI app (`HTTPRoute.handle`).
    def to_asgi_response(  # type: ignore[override]
        self,
        app: Any,
        request: Request[Any, Any, Any],
        *,
        background: BackgroundTask | BackgroundTasks | None = None,
        cookies: Iterable[Cookie] | None = None,
        encoded_headers: Iterable[tuple[bytes, bytes]] | None = None,
        headers: dict[str, str] | None = None,
        is_head_response: bool = False,
        media_type: MediaType | str | None = None,
        status_code: int | None = None,
        type_encoders: TypeEncodersMap | None = None,
    ) -> ASGIApp:
        """The bytes as they are, unless headers, cookies or a background task are added."""
        cookies = list(cookies or ())
        status = self.status_code or status_code or HTTP_200_OK
        plain = (
            background is None
            and self.background is None
            and not cookies
            and not self.cookies
            and not headers
            and not self.headers
            and not encoded_headers
            and not is_head_response
        )
        # A status without a body (1xx, 204, 304) is Litestar's to answer: it refuses or drops the body.
        if plain and status >= HTTP_200_OK and status not in (HTTP_204_NO_CONTENT, HTTP_304_NOT_MODIFIED):
            return _SendEncoded(self.content, status)
        return super().to_asgi_response(
            app,
            request,
            background=background,
            cookies=cookies,
            encoded_headers=encoded_headers,
            headers=headers,
            is_head_response=is_head_response,
            media_type=media_type,
            status_code=status_code,
            type_encoders=type_encoders,
        )
