"""Schemathesis hooks for the REST fuzz run (loaded by the `schemathesis` CLI through its config's `hooks`).

- Each generated request is a new request: a valid `Idempotency-Key` gets a unique suffix, so a key
  the generator happens to repeat is not answered 422 `idempotency_key_reused` every time (a
  missing, empty or malformed key is sent as generated).
- No traffic leaves the machine: an absolute http(s) URL in a body (webhook endpoints, chat
  webhooks) whose host is not loopback is pointed at a closed loopback port before it is sent, so
  the worker never delivers to a generated public address.
"""

from __future__ import annotations

import itertools
import os
from typing import Any
from urllib.parse import urlsplit

import schemathesis

_COUNTER = itertools.count()
_RUN = os.getpid()
_LOOPBACK = ("127.0.0.1", "localhost", "[::1]", "::1")
# Nothing listens on the discard port on loopback: a delivery there fails at once.
CLOSED_LOOPBACK_URL = "http://127.0.0.1:9/fuzz"


def _unique(key: str) -> str:
    suffix = f"-{_RUN}-{next(_COUNTER)}"
    return key[: 255 - len(suffix)] + suffix


def _is_printable_ascii(key: str) -> bool:
    return bool(key) and all("!" <= ch <= "~" for ch in key)


def _pin_urls(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _pin_urls(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_pin_urls(v) for v in value]
    if isinstance(value, str) and "://" in value:
        try:
            host = urlsplit(value.strip()).hostname or ""
        except ValueError:
            return value
        if host and host not in _LOOPBACK:
            return CLOSED_LOOPBACK_URL
    return value


@schemathesis.hook
def before_call(ctx: Any, case: Any, **kwargs: Any) -> None:
    """Make valid idempotency keys unique and keep every URL on loopback."""
    headers = case.headers or {}
    for name in list(headers):
        if name.lower() == "idempotency-key" and isinstance(headers[name], str) and _is_printable_ascii(headers[name]):
            headers[name] = _unique(headers[name])
    if isinstance(case.body, (dict, list, str)):
        case.body = _pin_urls(case.body)
