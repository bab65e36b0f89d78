"""Waiting for an enhancement run to change state: woken by PostgreSQL NOTIFY, with a slow poll as a net.

Every state change of a run notifies `groundwork_enhancement_run` with the run id (a trigger, in the
transaction of the change). An API process that listens (the app's lifespan opens one connection for
it) wakes a waiting create at the commit instead of at the next poll; without a listener (MCP over
stdio), or if a notification is lost, waiting falls back to polling the row.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Callable, Iterator

import asyncpg

log = logging.getLogger(__name__)
CHANNEL = "groundwork_enhancement_run"
SETTLING = ("queued", "running")
# Called with (run id, state) on every state change this process hears (MCP resource subscriptions).
_observers: list[Callable[[str, str], None]] = []


def observe(callback: Callable[[str, str], None]) -> None:
    """Call `callback(run_id, state)` on every run state change heard (it must be quick and never raise)."""
    if callback not in _observers:
        _observers.append(callback)


def unobserve(callback: Callable[[str, str], None]) -> None:
    """Stop calling `callback`."""
    with contextlib.suppress(ValueError):
        _observers.remove(callback)


class RunWaits:
    """One LISTEN connection; each waiter is an event keyed by run id."""

    def __init__(self, dsn: str) -> None:
        self.dsn = dsn
        self.users = 0
        self._connection: asyncpg.Connection | None = None
        self._waiters: dict[str, set[asyncio.Event]] = {}

    @property
    def listening(self) -> bool:
        return self._connection is not None and not self._connection.is_closed()

    async def start(self) -> None:
        """Open the listening connection (a failure leaves waiting to the poll)."""
        try:
            self._connection = await asyncpg.connect(self.dsn)
            await self._connection.add_listener(CHANNEL, self._notified)
        except Exception as exc:
            log.warning("LISTEN %s failed, waiting for runs by polling: %s", CHANNEL, exc)
            self._connection = None

    async def close(self) -> None:
        if self._connection is not None:
            with contextlib.suppress(Exception):
                await self._connection.close()
        self._connection = None

    def _notified(self, _connection: object, _pid: int, _channel: str, payload: str) -> None:
        run_id, _, state = payload.partition(" ")
        for observer in list(_observers):
            try:
                observer(run_id, state)
            except Exception:  # an observer's bug must not stop the waiters
                log.exception("run state observer failed on %s", run_id)
        if state in SETTLING:  # a run that is (still) queued or running is not worth a read
            return
        for event in self._waiters.get(run_id, ()):
            event.set()

    @contextlib.contextmanager
    def watching(self, run_id: str) -> Iterator[asyncio.Event]:
        """An event set whenever the run's state changes, for the duration of the block."""
        event = asyncio.Event()
        self._waiters.setdefault(run_id, set()).add(event)
        try:
            yield event
        finally:
            waiters = self._waiters.get(run_id)
            if waiters is not None:
                waiters.discard(event)
                if not waiters:
                    del self._waiters[run_id]


_active: dict[str, RunWaits] = {}


@contextlib.asynccontextmanager
async def listening(dsn: str) -> AsyncIterator[RunWaits]:
    """Listen for run changes while the block runs (shared by the apps of one process on one database)."""
    waits = _active.get(dsn)
    if waits is None:
        waits = _active[dsn] = RunWaits(dsn)
        await waits.start()
    waits.users += 1
    try:
        yield waits
    finally:
        waits.users -= 1
        if waits.users == 0:
            _active.pop(dsn, None)
            await waits.close()


def current(dsn: str) -> RunWaits | None:
    """The listener for this database in this process, if one is open."""
    waits = _active.get(dsn)
    return waits if waits is not None and waits.listening else None
