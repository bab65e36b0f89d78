"""Keyset pagination: opaque cursors, the page size rule, and the `page` member of list answers."""

from __future__ import annotations

import base64
import binascii
import json
import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeGuard, TypeVar

import msgspec

from groundwork.domain.errors import FieldError, InvalidRequest

DEFAULT_LIMIT = 20
MAX_LIMIT = 100
# Cursors this API issues are a few dozen characters; anything far longer is not one of them.
MAX_CURSOR_LENGTH = 1024

Item = TypeVar("Item")


@dataclass(frozen=True)
class PageRequest:
    """A validated `limit` and the decoded position after which the page starts."""

    limit: int
    after: dict[str, Any] | None

    def after_text(self, key: str = "id") -> str | None:
        """The cursor's text position `key`, or None on the first page; a forged cursor is a 400."""
        if self.after is None:
            return None
        value = self.after.get(key)
        if not isinstance(value, str):
            raise InvalidRequest("Invalid cursor.", [FieldError("cursor", "is not a cursor this API issued")])
        return value


def encode_cursor(position: dict[str, Any]) -> str:
    """Make an opaque cursor from a keyset position."""
    # msgspec, not json.dumps: a ranked page makes a cursor per hit, and this is ~10x cheaper for the same JSON.
    raw = msgspec.json.encode(position, order="sorted")
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def page_request(limit: int | None, cursor: str | None) -> PageRequest:
    """Validate `limit` (1..100, default 20) and decode `cursor`; a bad one is a 400."""
    if limit is None:
        limit = DEFAULT_LIMIT
    if not 1 <= limit <= MAX_LIMIT:
        raise InvalidRequest("Invalid page size.", [FieldError("limit", f"must be between 1 and {MAX_LIMIT}")])
    if not cursor:
        return PageRequest(limit, None)
    if len(cursor) > MAX_CURSOR_LENGTH:
        raise InvalidRequest("Invalid cursor.", [FieldError("cursor", "is not a cursor this API issued")])
    try:
        padded = cursor + "=" * (-len(cursor) % 4)
        position = json.loads(base64.urlsafe_b64decode(padded.encode()))
        if not isinstance(position, dict):
            raise ValueError
    except (ValueError, binascii.Error, UnicodeDecodeError, RecursionError):
        raise InvalidRequest("Invalid cursor.", [FieldError("cursor", "is not a cursor this API issued")]) from None
    return PageRequest(limit, position)


def page_info(
    items: list[Item], limit: int, position_of: Callable[[Item], dict[str, Any]]
) -> tuple[list[Item], dict[str, Any]]:
    """Trim a fetch of `limit + 1` rows to the page and describe the next one."""
    has_more = len(items) > limit
    items = items[:limit]
    next_cursor = encode_cursor(position_of(items[-1])) if has_more and items else None
    return items, {"next_cursor": next_cursor, "has_more": has_more}


# A cursor is client input: JSON bools pass as ints, `1e400` decodes to infinity and a huge int overflows a float.
def _is_int(value: object) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool)


def _cursor_score(value: object) -> float | None:
    if not (_is_int(value) or isinstance(value, float)):
        return None
    try:
        score = float(value)
    except OverflowError:
        return None
    return score if math.isfinite(score) else None


def ranked_position(page: PageRequest, fingerprint: str) -> tuple[tuple[float, int] | None, int]:
    """The (score, seq) after which a ranked page starts and how many hits came before; a forged or foreign
    cursor (another query's fingerprint) is a 400."""
    if page.after is None:
        return None, 0
    position = page.after
    score, seq, skipped = _cursor_score(position.get("s")), position.get("q"), position.get("o")
    if position.get("f") != fingerprint or score is None or not _is_int(seq) or not _is_int(skipped):
        raise InvalidRequest("Invalid cursor.", [FieldError("cursor", "belongs to another search or is damaged")])
    return (score, seq), max(0, skipped)


def ranked_cursor(fingerprint: str, score: float, seq: int, offset: int) -> str:
    """The cursor of a ranked page that ends at (score, seq), `offset` hits in."""
    return encode_cursor({"f": fingerprint, "s": score, "q": seq, "o": offset})
