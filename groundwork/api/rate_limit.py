"""Rate limiting with token buckets, per API process (see docs/decisions.md): per key for requests with a
valid key (here), and per client address for requests without one (applied by the auth middleware)."""

from __future__ import annotations

import math
import time
from dataclasses import dataclass

from litestar.enums import ScopeType
from litestar.middleware import ASGIMiddleware
from litestar.types import ASGIApp, Message, Receive, Scope, Send

from groundwork.domain.errors import RateLimited
from groundwork.domain.tenancy.principals import Principal

# The name of the per-key policy in the `RateLimit-Policy` and `RateLimit` fields.
POLICY = "per-key"


@dataclass
class _Bucket:
    tokens: float
    updated: float


class TokenBuckets:
    """A bucket per key holding up to `per_minute` tokens, refilled continuously."""

    # Past this many buckets, full ones (a key or address idle long enough to refill) are forgotten.
    PRUNE_ABOVE = 10_000

    def __init__(self, per_minute: int) -> None:
        self.capacity = float(per_minute)
        self.rate = per_minute / 60.0
        self._buckets: dict[str, _Bucket] = {}

    def _refilled(self, key: str, now: float) -> _Bucket:
        bucket = self._buckets.get(key)
        if bucket is None:
            if len(self._buckets) >= self.PRUNE_ABOVE:
                self._prune(now)
            bucket = self._buckets[key] = _Bucket(self.capacity, now)
        bucket.tokens = min(self.capacity, bucket.tokens + (now - bucket.updated) * self.rate)
        bucket.updated = now
        return bucket

    def _prune(self, now: float) -> None:
        full = [k for k, b in self._buckets.items() if b.tokens + (now - b.updated) * self.rate >= self.capacity]
        for key in full:
            del self._buckets[key]

    def take(self, key: str, now: float | None = None) -> float:
        """Spend one token; return 0 when allowed, else the seconds until one is available."""
        bucket = self._refilled(key, time.monotonic() if now is None else now)
        if bucket.tokens >= 1:
            bucket.tokens -= 1
            return 0.0
        return (1 - bucket.tokens) / self.rate

    def remaining(self, key: str, now: float | None = None) -> tuple[int, int]:
        """Whole tokens `key` has left, and the seconds until its bucket is full again."""
        bucket = self._refilled(key, time.monotonic() if now is None else now)
        return int(bucket.tokens), math.ceil((self.capacity - bucket.tokens) / self.rate)

    def policy(self) -> str:
        """The `RateLimit-Policy` field (IETF draft-ietf-httpapi-ratelimit-headers): quota per 60 s window."""
        return f'"{POLICY}";q={int(self.capacity)};w=60'

    def wait(self, key: str, now: float | None = None) -> float:
        """Seconds until `key` has a token again (0 if it has one now), without spending it."""
        bucket = self._refilled(key, time.monotonic() if now is None else now)
        return 0.0 if bucket.tokens >= 1 else (1 - bucket.tokens) / self.rate


def client_address(scope: Scope) -> str:
    """The client's address (after uvicorn's trusted proxy headers), the key of unauthenticated buckets."""
    client = scope.get("client")
    return str(client[0]) if client else "unknown"


def refuse_if_waiting(wait: float) -> None:
    """429 `rate_limited` with `Retry-After` when a bucket has no token now."""
    if wait > 0:
        raise RateLimited(max(1, math.ceil(wait)))


class RateLimitMiddleware(ASGIMiddleware):
    """Answer 429 `rate_limited` with `Retry-After` once a key exhausts its bucket."""

    scopes = (ScopeType.HTTP,)

    def __init__(self, buckets: TokenBuckets) -> None:
        self.buckets = buckets

    def fields(self, key: str) -> dict[str, str]:
        """The `RateLimit-Policy` and `RateLimit` fields of a key's quota as it stands."""
        left, reset = self.buckets.remaining(key)
        return {"RateLimit-Policy": self.buckets.policy(), "RateLimit": f'"{POLICY}";r={left};t={reset}'}

    async def handle(self, scope: Scope, receive: Receive, send: Send, next_app: ASGIApp) -> None:
        principal = scope.get("user")
        if not isinstance(principal, Principal):
            await next_app(scope, receive, send)
            return
        key = principal.api_key_id
        wait = self.buckets.take(key)
        if wait > 0:  # the refusal carries the quota too, so a client learns when it is full again
            raise RateLimited(max(1, math.ceil(wait)), self.fields(key))

        async def send_with_limits(message: Message) -> None:
            if message["type"] == "http.response.start":
                limits = [(name.lower().encode(), value.encode()) for name, value in self.fields(key).items()]
                message = {**message, "headers": [*message.get("headers", ()), *limits]}
            await send(message)

        await next_app(scope, receive, send_with_limits)
