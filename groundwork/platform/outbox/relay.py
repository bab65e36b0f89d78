"""The outbox relay: hands committed events to the consumers that act on them, exactly once per event.

It wakes on `LISTEN groundwork_outbox` (the outbox trigger notifies at commit) and sweeps on a timer
as well, so a lost notification or a dropped listener only delays. Each pass claims undispatched
events with `FOR UPDATE SKIP LOCKED`, so several relays (one per worker process) share the work
without taking the same event. Every consumer writes what the events cause (webhook deliveries,
notifications) in the claim's transaction, which also marks the events dispatched; after the commit
each consumer starts the workflows it planned, and its sweep restarts those a dead relay left unstarted.
The consumers are the domains' (the worker wires them); this module knows none of them.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Sequence
from typing import Protocol

import asyncpg

from groundwork.persistence.repositories.platform import outbox
from groundwork.persistence.repositories.platform.outbox import ClaimedEventRow

log = logging.getLogger(__name__)

NOTIFY_CHANNEL = "groundwork_outbox"


class OutboxConsumer(Protocol):
    """What acts on claimed outbox events: writes in the claim's transaction, starts after its commit."""

    async def consume(self, events: list[ClaimedEventRow]) -> None:
        """Write what `events` cause, inside the claim's transaction."""

    async def start_consumed(self) -> int:
        """Start the workflows the last committed `consume` planned; returns how many started."""

    async def restart_stranded(self, grace_seconds: float, batch_size: int = 200) -> int:
        """Start what a relay planned and did not start `grace_seconds` ago; returns how many started."""


class OutboxRelay:
    """Dispatches the outbox to its consumers: `run_once()` for one pass, `run()` until stopped."""

    def __init__(
        self,
        database_url: str,
        consumers: Sequence[OutboxConsumer],
        *,
        batch_size: int = 200,
        restart_grace_seconds: float = 15.0,
        sweep_seconds: float = 5.0,
    ) -> None:
        self.database_url = database_url
        self.consumers = list(consumers)
        self.batch_size = batch_size
        self.restart_grace_seconds = restart_grace_seconds
        self.sweep_seconds = sweep_seconds

    async def _consume(self, events: list[ClaimedEventRow]) -> None:
        for consumer in self.consumers:
            await consumer.consume(events)

    async def run_once(self, *, restart_stranded: bool = True) -> int:
        """Dispatch every undispatched event and (unless told not to) restart what was left unstarted; returns
        workflows started."""
        started = 0
        while True:
            claimed = await outbox.claim_batch(self.batch_size, on_claimed=self._consume)
            for consumer in self.consumers:
                started += await consumer.start_consumed()
            if claimed < self.batch_size:
                break
        if restart_stranded:
            for consumer in self.consumers:
                started += await consumer.restart_stranded(self.restart_grace_seconds, self.batch_size)
        return started

    async def run(self, stop: asyncio.Event | None = None) -> None:
        """Pass on every notification and at least every `sweep_seconds`, until `stop` is set."""
        stop = stop or asyncio.Event()
        wake = asyncio.Event()
        listener: asyncpg.Connection | None = None
        failures = 0
        loop = asyncio.get_running_loop()
        # A delivery counts as stranded only `restart_grace_seconds` after its start was asked for, so looking
        # for stranded ones more often than that finds nothing: under load the relay passes many times a
        # second, and those three statements were most of an idle pass's round trips.
        restart_every = min(self.sweep_seconds, self.restart_grace_seconds)
        next_restart = loop.time()
        try:
            while not stop.is_set():
                if listener is None or listener.is_closed():
                    listener = await self._listen(wake)
                wake.clear()
                try:
                    restart = loop.time() >= next_restart
                    await self.run_once(restart_stranded=restart)
                    if restart:
                        next_restart = loop.time() + restart_every
                    failures = 0
                except Exception:
                    failures += 1
                    log.exception("outbox relay pass failed (%d in a row)", failures)
                    # Back off while PostgreSQL or Temporal is down, without oversleeping a stop.
                    with contextlib.suppress(TimeoutError):
                        await asyncio.wait_for(stop.wait(), min(30.0, 0.5 * 2**failures))
                    continue
                await _first_of(wake, stop, timeout=self.sweep_seconds)
        finally:
            if listener is not None and not listener.is_closed():
                await listener.close()

    async def _listen(self, wake: asyncio.Event) -> asyncpg.Connection | None:
        try:
            connection = await asyncpg.connect(self.database_url)
            await connection.add_listener(NOTIFY_CHANNEL, lambda *_: wake.set())
            return connection
        except Exception as exc:
            log.warning("LISTEN %s failed, sweeping only: %s", NOTIFY_CHANNEL, exc)
            return None


async def _first_of(wake: asyncio.Event, stop: asyncio.Event, *, timeout: float) -> None:
    waiters = [asyncio.create_task(wake.wait()), asyncio.create_task(stop.wait())]
    try:
        await asyncio.wait(waiters, timeout=timeout, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for waiter in waiters:
            waiter.cancel()
