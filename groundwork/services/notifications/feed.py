"""The live feed: the caller's own notification changes as they commit, resumable, bounded per key.

Each change of a recipient's notifications (created, a status move, a snooze, unsnooze or a snooze's
end) is stored in its transaction with the recipient's next number (`notification_changes`). A trigger
tells every listening process `inbox:<recipient>` on the change feed at commit; a stream of that
recipient wakes and reads what follows the last number it sent, from PostgreSQL, so nothing is missed,
doubled or reordered, whichever process made the change. Without a live change feed a stream polls.

A stream takes one of its API key's slots (a lease renewed with each heartbeat, so the bound holds
across API processes and a dead process frees its slots within a lease), re-checks the key at every
wake and heartbeat (a revoked key, or one that lost `notifications:read`, ends it), and ends after its
lifetime, when clients reconnect with `Last-Event-ID`.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import secrets
from collections.abc import AsyncIterator
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import anyio

from groundwork.domain.errors import RateLimited
from groundwork.domain.notifications.feed import LEASE_GRACE, RESUME_WINDOW, STREAM_BATCH, parse_last_event_id
from groundwork.domain.notifications.inbox import SCOPE_READ
from groundwork.domain.tenancy.principals import Principal
from groundwork.domain.times import format_timestamp
from groundwork.persistence import change_feed
from groundwork.persistence.repositories.notifications import changes
from groundwork.persistence.repositories.notifications.changes import ChangeRow
from groundwork.platform.observability import metrics
from groundwork.services.tenancy import api_keys

log = logging.getLogger("groundwork.services.notifications.feed")
TOPIC = "inbox:"
# Without a live change feed (it reconnects), streams look for changes this often.
POLL_SECONDS = 1.0

# recipient id -> the wake-up events of its open streams in this process
_waiting: dict[str, set[asyncio.Event]] = {}


def _on_change(topic: str) -> None:
    if topic == "*":
        for events in _waiting.values():
            for event in events:
                event.set()
    elif topic.startswith(TOPIC):
        for event in _waiting.get(topic.removeprefix(TOPIC), ()):
            event.set()


change_feed.subscribe(_on_change)


class TooManyStreams(RateLimited):
    """The key holds every stream slot it may: 429 `rate_limited`, retry once one closes or its lease lapses."""

    def __init__(self, limit: int, retry_after_seconds: int) -> None:
        super().__init__(retry_after_seconds)
        self.detail = (
            f"This API key has {limit} open notification streams, the most it may; close one or retry after "
            f"{retry_after_seconds} s."
        )
        self.args = (self.detail,)


@dataclass(frozen=True)
class StreamSettings:
    """How streams behave: heartbeat interval, lifetime, and open streams per key."""

    heartbeat_seconds: float
    lifetime_seconds: float
    per_key: int


@dataclass(frozen=True)
class FeedEvent:
    """One thing to send: a change (with its number), `ready`, `reset`, or a heartbeat comment."""

    kind: str  # change | ready | reset | heartbeat
    id: int | None = None
    change: ChangeRow | None = None
    data: dict[str, Any] | None = None


class Feed:
    """One open stream of one caller: `events()` yields until the client leaves, the key stops working, or the
    stream's lifetime ends; its slot is given back then."""

    def __init__(self, principal: Principal, key: str, after: int | None, lease_id: str, options: StreamSettings):
        self.principal = principal
        self._key = key
        self._after = after
        self._lease_id = lease_id
        self.options = options
        self._wake = asyncio.Event()

    def _forget(self) -> None:
        waiting = _waiting.get(self.principal.id)
        if waiting is not None:
            waiting.discard(self._wake)
            if not waiting:
                _waiting.pop(self.principal.id, None)

    async def _still_allowed(self) -> bool:
        current = await api_keys.resolve_key(self._key)
        return current is not None and current.id == self.principal.id and current.has_scope(SCOPE_READ)

    async def _start(self) -> tuple[int, FeedEvent]:
        """Where the stream goes on from, and its first event: `ready`, or `reset` when it cannot resume."""
        head = await changes.head(self.principal.id)
        info = {
            "heartbeatSeconds": self.options.heartbeat_seconds,
            "resumeWindowSeconds": int(RESUME_WINDOW.total_seconds()),
        }
        after = self._after
        if after is None or after == head:
            return head, FeedEvent("ready", head, data={"lastEventId": str(head), "resumed": after is not None, **info})
        first = await changes.changes_after(self.principal.id, after, 1) if after < head else []
        if after < head and first and first[0].seq == after + 1:
            return after, FeedEvent("ready", after, data={"lastEventId": str(after), "resumed": True, **info})
        why = "the changes after it are past the resume window" if after < head else "this stream never sent it"
        reset = {
            "lastEventId": str(head),
            "reason": f"Cannot resume after event {after}: {why}. List the inbox again, then follow from here.",
            **info,
        }
        return head, FeedEvent("reset", head, data=reset)

    async def events(self) -> AsyncIterator[FeedEvent]:
        """Every change of the caller's notifications after the start, then on, with heartbeats."""
        # Listening starts before the stream reads its position, so no change committed in between is missed.
        _waiting.setdefault(self.principal.id, set()).add(self._wake)
        metrics.NOTIFICATION_STREAMS.inc()
        try:
            position, first = await self._start()
            yield first
            loop = asyncio.get_running_loop()
            ends = loop.time() + self.options.lifetime_seconds
            beat = loop.time() + self.options.heartbeat_seconds
            while True:
                self._wake.clear()
                if not await self._still_allowed():
                    return
                while batch := await changes.changes_after(self.principal.id, position, STREAM_BATCH):
                    for change in batch:
                        position = change.seq
                        yield FeedEvent("change", change.seq, change)
                now = loop.time()
                if now >= ends:
                    return
                if now >= beat:
                    if not await changes.renew_lease(self._lease_id, self._lease_seconds):
                        log.warning("stream lease %s lapsed; its slot may have been taken", self._lease_id)
                    yield FeedEvent("heartbeat", data={"at": format_timestamp(datetime.now(UTC))})
                    beat = now + self.options.heartbeat_seconds
                timeout = min(beat, ends) - now
                if not change_feed.is_live():
                    timeout = min(timeout, POLL_SECONDS)
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._wake.wait(), max(timeout, 0.0))
        finally:
            self._forget()
            metrics.NOTIFICATION_STREAMS.dec()
            # The client may be gone and this task cancelled: give the slot back regardless.
            with anyio.CancelScope(shield=True), contextlib.suppress(Exception):
                await changes.drop_lease(self._lease_id)

    @property
    def _lease_seconds(self) -> float:
        return self.options.heartbeat_seconds + LEASE_GRACE.total_seconds()


async def open_feed(principal: Principal, key: str, last_event_id: str | None, options: StreamSettings) -> Feed:
    """Open the caller's stream: 400 for a malformed `Last-Event-ID`, 429 when the key's slots are taken."""
    after = parse_last_event_id(last_event_id)
    lease_id = secrets.token_hex(16)
    lease_seconds = options.heartbeat_seconds + LEASE_GRACE.total_seconds()
    if not await changes.take_lease(principal.api_key_id, lease_id, lease_seconds, options.per_key):
        raise TooManyStreams(options.per_key, max(1, round(min(options.heartbeat_seconds, 60))))
    return Feed(principal, key, after, lease_id, options)
