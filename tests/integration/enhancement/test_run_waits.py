"""services/enhancement/run_waits: a waiter wakes on a run's settling NOTIFY, not on queued or running, and one
connection serves every user of a database in the process."""

from __future__ import annotations

import asyncio

from groundwork.persistence import db
from groundwork.services.enhancement import run_waits


async def _notify(payload: str) -> None:
    await db.execute("SELECT pg_notify($1, $2)", run_waits.CHANNEL, payload)


async def test_a_waiter_wakes_when_its_run_settles_and_not_before(database: str) -> None:
    async with run_waits.listening(database) as waits:
        assert waits.listening and run_waits.current(database) is waits
        with waits.watching("run_a") as event, waits.watching("run_b") as other:
            await _notify("run_a running")
            await asyncio.sleep(0.3)
            assert not event.is_set()
            await _notify("run_a ready")
            await asyncio.wait_for(event.wait(), 5)
            assert not other.is_set()


async def test_nested_users_share_one_connection_closed_after_the_last(database: str) -> None:
    before = run_waits.current(database)
    async with run_waits.listening(database) as outer:
        users = outer.users
        async with run_waits.listening(database) as inner:
            assert inner is outer and outer.users == users + 1
        assert run_waits.current(database) is outer and outer.users == users
    if before is None:  # no app of this process listens: the last user closed the connection
        assert run_waits.current(database) is None and not outer.listening
    else:  # the apps this process serves still listen on it
        assert run_waits.current(database) is before and before.listening


async def test_an_unreachable_database_leaves_waiting_to_the_poll() -> None:
    async with run_waits.listening("postgresql://nobody@127.0.0.1:1/none") as waits:
        assert not waits.listening
        assert run_waits.current("postgresql://nobody@127.0.0.1:1/none") is None
