"""Idempotency-Key rules: the key's shape and the request fingerprint it is bound to."""

from __future__ import annotations

import hashlib
import json

from groundwork.domain.errors import FieldError, IdempotencyKeyRequired, InvalidRequest

MAX_KEY_LENGTH = 255


def check_key(key: str | None) -> str:
    """Return a usable key; 400 `idempotency_key_required` when missing, `invalid_request` when malformed."""
    if key is None or key == "":
        raise IdempotencyKeyRequired("This request changes state: send an Idempotency-Key header (1-255 characters).")
    if len(key) > MAX_KEY_LENGTH or not key.isprintable():
        raise InvalidRequest(
            "Invalid Idempotency-Key.",
            [FieldError("header.Idempotency-Key", "must be 1-255 printable characters")],
        )
    return key


def fingerprint(method: str, path: str, body: bytes) -> str:
    """SHA-256 over method, path and the canonical JSON of the body (raw bytes if it is not JSON)."""
    try:
        canonical = json.dumps(json.loads(body), sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()
    except (ValueError, UnicodeDecodeError):
        canonical = body
    digest = hashlib.sha256()
    for part in (method.upper().encode(), path.encode(), canonical):
        digest.update(len(part).to_bytes(8, "big"))
        digest.update(part)
    return digest.hexdigest()
