"""This process's change feed: PostgreSQL LISTEN/NOTIFY telling caches and index readers what changed.

Triggers (migration 0007) send `auth`, `visibility` or `corpus` on channel `groundwork_cache` when a
cached fact changes in any process's transaction; an index writer sends the index's folder on
`groundwork_index` after each commit; the change logs' triggers (migrations 0002, 0005) send on
`groundwork_corpus_index` and `groundwork_package_index` when a change set is appended. A process that
listens (the API and the worker) hands each topic to its subscribers: `auth`, `visibility`, `corpus`,
`index:<folder>`, `log:corpus`, `log:packages` (a search replica has changes to apply), and `*`
(anything may have changed: the feed was lost or has just been (re)connected). While the feed is not
live, `is_live()` is False and caches must not answer from memory.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import secrets
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any

import asyncpg

from groundwork.persistence import db

log = logging.getLogger(__name__)

CACHE_CHANNEL = "groundwork_cache"
INDEX_CHANNEL = "groundwork_index"
# The change logs search replicas follow: a notification means "a change set was appended".
LOG_CHANNELS = {"groundwork_corpus_index": "log:corpus", "groundwork_package_index": "log:packages"}
# A safety net beside NOTIFY: index readers look for a commit they were not told about this often.
_INDEX_TICK_SECONDS = 2.0

_subscribers: list[Callable[[str], None]] = []
_live_listeners = 0
# A channel only this process listens on: `caught_up` sends itself a token on it. PostgreSQL delivers
# notifications to a listener in the order their transactions committed, so hearing the token back
# means every change committed before it has been heard (and handed to the subscribers) too.
_SYNC_CHANNEL = f"groundwork_sync_{os.getpid()}_{secrets.token_hex(4)}"
_sync_waiters: dict[str, asyncio.Future[None]] = {}


def is_live() -> bool:
    """Whether this process hears every change now (caches may answer from memory only then)."""
    return _live_listeners > 0


def subscribe(callback: Callable[[str], None]) -> None:
    """Call `callback(topic)` on every change this process hears (it must be quick and never raise)."""
    if callback not in _subscribers:
        _subscribers.append(callback)


def unsubscribe(callback: Callable[[str], None]) -> None:
    """Stop calling `callback`."""
    with contextlib.suppress(ValueError):
        _subscribers.remove(callback)


def publish_locally(topic: str) -> None:
    """Hand `topic` to this process's subscribers."""
    for callback in list(_subscribers):
        try:
            callback(topic)
        except Exception:  # a subscriber's bug must not stop the others
            log.exception("change feed subscriber failed on %s", topic)


async def announce_index_commit(folder: str) -> None:
    """Tell every listening process that the index in `folder` committed (best effort: readers also poll)."""
    try:
        await db.execute("SELECT pg_notify($1, $2)", INDEX_CHANNEL, folder)
    except Exception:  # no database here (a bare CLI), or it is gone: the periodic check covers it
        log.debug("could not announce a commit of the %s index", folder, exc_info=True)


async def caught_up(timeout: float = 2.0) -> None:
    """Return once this process has heard every change committed before the call.

    A service calls it after committing a change that a cache of this process holds (a revoked key, a
    new membership), so the next request this process serves sees the change. Without a live feed (or
    inside a transaction, where the token would wait for the commit) there is nothing to wait for.
    """
    if not is_live() or db.engine().current_transaction.get() is not None:
        return
    token = secrets.token_hex(8)
    heard: asyncio.Future[None] = asyncio.get_running_loop().create_future()
    _sync_waiters[token] = heard
    try:
        await db.execute("SELECT pg_notify($1, $2)", _SYNC_CHANNEL, token)
        await asyncio.wait_for(heard, timeout)
    except Exception:  # the feed went away meanwhile: it publishes "*" then, which drops every cache
        log.debug("change feed did not echo a sync token", exc_info=True)
    finally:
        _sync_waiters.pop(token, None)


def _on_notification(_connection: Any, _pid: int, channel: str, payload: str) -> None:
    if channel == _SYNC_CHANNEL:
        waiter = _sync_waiters.get(payload)
        if waiter is not None and not waiter.done():
            waiter.set_result(None)
        return
    if channel in LOG_CHANNELS:
        publish_locally(LOG_CHANNELS[channel])
    else:
        publish_locally(f"index:{payload}" if channel == INDEX_CHANNEL else payload)


async def _listen_once(dsn: str, stop: asyncio.Event, connected: asyncio.Event) -> None:
    global _live_listeners
    connection = await asyncpg.connect(dsn)
    lost = asyncio.Event()
    connection.add_termination_listener(lambda _c: lost.set())
    live = False
    waiters = [asyncio.ensure_future(stop.wait()), asyncio.ensure_future(lost.wait())]
    try:
        await connection.add_listener(CACHE_CHANNEL, _on_notification)
        await connection.add_listener(INDEX_CHANNEL, _on_notification)
        await connection.add_listener(_SYNC_CHANNEL, _on_notification)
        for channel in LOG_CHANNELS:
            await connection.add_listener(channel, _on_notification)
        _live_listeners += 1
        live = True
        # Whatever changed before we listened is unknown: start from nothing.
        publish_locally("*")
        connected.set()
        while not stop.is_set() and not lost.is_set():
            await asyncio.wait(waiters, timeout=_INDEX_TICK_SECONDS, return_when=asyncio.FIRST_COMPLETED)
            publish_locally("index:*")
    finally:
        for waiter in waiters:
            waiter.cancel()
        if live:
            _live_listeners -= 1
        publish_locally("*")
        with contextlib.suppress(Exception):
            await connection.close(timeout=2)


async def _listen(dsn: str, stop: asyncio.Event, connected: asyncio.Event) -> None:
    delay = 0.5
    while not stop.is_set():
        try:
            await _listen_once(dsn, stop, connected)
            delay = 0.5
        except Exception as exc:
            log.warning("change feed lost (%s); caches are bypassed until it reconnects", exc)
        if not stop.is_set():
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), delay)
            delay = min(delay * 2, 5.0)


@asynccontextmanager
async def listening(dsn: str, *, connect_timeout: float = 5.0) -> AsyncIterator[None]:
    """Listen for changes until the block ends (reconnecting when the connection drops)."""
    stop, connected = asyncio.Event(), asyncio.Event()
    task = asyncio.create_task(_listen(dsn, stop, connected))
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(connected.wait(), connect_timeout)
    try:
        yield
    finally:
        stop.set()
        with contextlib.suppress(Exception):
            await task
