"""Signed tokens of the links in e-mail and chat messages: `<payload>.<signature>`, both URL-safe base64.

The payload is compact JSON; the signature is HMAC-SHA256 under the `GROUNDWORK_SECRET_KEY` ring (the
first key signs, any key verifies, so keys rotate) with a subkey per purpose, so a token made for one
kind of link (an action, a view) is worthless as another.
"""

from __future__ import annotations

import base64
import binascii
import json
from typing import Any

from groundwork.platform.secrets.keyring import KeyRing

MAX_TOKEN = 1024


def _b64(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def random_id(raw: bytes) -> str:
    """Random bytes as a token-safe text."""
    return _b64(raw)


def sign_token(keyring: KeyRing, purpose: str, payload: dict[str, Any]) -> str:
    """A token carrying `payload`, signed for `purpose`."""
    body = _b64(json.dumps(payload, separators=(",", ":"), sort_keys=True).encode())
    return f"{body}.{_b64(keyring.sign(purpose, body.encode()))}"


def read_token(keyring: KeyRing | None, purpose: str, token: str) -> dict[str, Any] | None:
    """The payload of a token signed for `purpose`, or None (no key ring, malformed, forged, another purpose)."""
    if keyring is None or len(token) > MAX_TOKEN or token.count(".") != 1:
        return None
    body, signature = token.split(".")
    try:
        if not keyring.verify(purpose, body.encode(), _unb64(signature)):
            return None
        payload = json.loads(_unb64(body))
    except (ValueError, binascii.Error, UnicodeDecodeError):
        return None
    return payload if isinstance(payload, dict) else None
