"""Per-key rate limiting with a token bucket (per API process; see docs/decisions.md)."""

from __future__ import annotations

import math
import time
from dataclasses import dataclass

from litestar.enums import ScopeType
from litestar.middleware import ASGIMiddleware
from litestar.types import ASGIApp, Receive, Scope, Send

from groundwork.domain.errors import RateLimited
from groundwork.domain.principals import Principal


@dataclass
class _Bucket:
    tokens: float
    updated: float


class TokenBuckets:
    """A bucket per key holding up to `per_minute` tokens, refilled continuously."""

    def __init__(self, per_minute: int) -> None:
        self.capacity = float(per_minute)
        self.rate = per_minute / 60.0
        self._buckets: dict[str, _Bucket] = {}

    def take(self, key: str, now: float | None = None) -> float:
        """Spend one token; return 0 when allowed, else the seconds until one is available."""
        now = time.monotonic() if now is None else now
        bucket = self._buckets.setdefault(key, _Bucket(self.capacity, now))
        bucket.tokens = min(self.capacity, bucket.tokens + (now - bucket.updated) * self.rate)
        bucket.updated = now
        if bucket.tokens >= 1:
            bucket.tokens -= 1
            return 0.0
        return (1 - bucket.tokens) / self.rate


class RateLimitMiddleware(ASGIMiddleware):
    """Answer 429 `rate_limited` with `Retry-After` once a key exhausts its bucket."""

    scopes = (ScopeType.HTTP,)

    def __init__(self, buckets: TokenBuckets) -> None:
        self.buckets = buckets

    async def handle(self, scope: Scope, receive: Receive, send: Send, next_app: ASGIApp) -> None:
        principal = scope.get("user")
        if isinstance(principal, Principal):
            wait = self.buckets.take(principal.api_key_id)
            if wait > 0:
                raise RateLimited(max(1, math.ceil(wait)))
        await next_app(scope, receive, send)
