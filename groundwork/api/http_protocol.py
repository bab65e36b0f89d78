"""uvicorn's HTTP/1.1 protocol (httptools) with the request head bounded and every refusal a problem+json.

Before any app runs, uvicorn answers a request it cannot parse with a plain-text 400, and it takes a
request line or header section of any size. Here an over-long request target is 414 `uri_too_long`, an
over-large header section 431 `headers_too_large` (RFC 9110, RFC 6585), anything else unparsable 400
`invalid_request`: problem+json like every other answer, then the connection closes (docs/decisions.md).
"""

from __future__ import annotations

import json

from uvicorn.protocols.http.httptools_impl import STATUS_LINE, HttpToolsProtocol

from groundwork.api.errors import PROBLEM_JSON, problem_body

# The longest request target taken: the longest query the API reads (a search of 1,000 characters, each
# percent-encoded) with room to spare.
MAX_REQUEST_TARGET_BYTES = 16 * 1024
# The largest header section taken (names and values together).
MAX_HEADER_BYTES = 32 * 1024

_NOT_HTTP = (400, "invalid_request", "Invalid request", "The request is not valid HTTP/1.1.")
_URI_TOO_LONG = (
    414,
    "uri_too_long",
    "URI too long",
    f"The request target (path and query) is longer than {MAX_REQUEST_TARGET_BYTES} bytes.",
)
_HEADERS_TOO_LARGE = (
    431,
    "headers_too_large",
    "Request header fields too large",
    f"The request's headers are larger than {MAX_HEADER_BYTES} bytes together.",
)


class _HeadRefused(Exception):
    """Raised from a parser callback: the parser stops and uvicorn answers through `send_400_response`."""


class GroundworkHttpProtocol(HttpToolsProtocol):
    """HttpToolsProtocol with the request head bounded and its refusals as problem+json."""

    _refusal: tuple[int, str, str, str] = _NOT_HTTP
    _header_bytes = 0

    def on_message_begin(self) -> None:
        """A new request: nothing refused, no header bytes counted yet."""
        super().on_message_begin()
        self._refusal = _NOT_HTTP
        self._header_bytes = 0

    def on_url(self, url: bytes) -> None:
        """Collect the request target, refusing it past its limit."""
        super().on_url(url)
        if len(self.url) > MAX_REQUEST_TARGET_BYTES:
            self._refusal = _URI_TOO_LONG
            raise _HeadRefused

    def on_header(self, name: bytes, value: bytes) -> None:
        """Collect a header, refusing the section past its limit."""
        self._header_bytes += len(name) + len(value)
        if self._header_bytes > MAX_HEADER_BYTES:
            self._refusal = _HEADERS_TOO_LARGE
            raise _HeadRefused
        super().on_header(name, value)

    def send_400_response(self, msg: str) -> None:
        """Answer the refusal (or a plain parse error) as problem+json and close the connection."""
        status, code, title, detail = self._refusal
        body = json.dumps(problem_body(status, code, title, detail)).encode()
        content = [STATUS_LINE[status]]
        for name, value in self.server_state.default_headers:
            content.extend([name, b": ", value, b"\r\n"])
        content.extend(
            [
                b"content-type: " + PROBLEM_JSON.encode() + b"\r\n",
                b"content-length: " + str(len(body)).encode("ascii") + b"\r\n",
                b"connection: close\r\n",
                b"\r\n",
                body,
            ]
        )
        self.transport.write(b"".join(content))
        self.transport.close()
