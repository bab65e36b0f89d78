"""Closing the pool never waits forever for a connection that a stuck task still holds."""

from __future__ import annotations

import subprocess
import sys
import textwrap

# Run in a process of its own: `db` is one pool per process, and this session's tests share it.
SCRIPT = textwrap.dedent(
    """
    import asyncio, sys, time
    from groundwork.persistence import db

    async def main() -> None:
        engine = await db.connect(sys.argv[1], max_size=2)
        borrowed = await engine.pool.acquire()  # never released, like a task stuck mid-query
        started = time.monotonic()
        await db.disconnect(within=0.5)
        elapsed = time.monotonic() - started
        try:
            await borrowed.fetchval("SELECT 1")
            closed = False
        except Exception:
            closed = True
        print(f"{elapsed:.2f} {closed} {db._engine is None}")

    asyncio.run(main())
    """
)


def test_closing_the_pool_terminates_a_connection_never_released_instead_of_waiting(database: str) -> None:
    done = subprocess.run([sys.executable, "-c", SCRIPT, database], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    seconds, closed, forgotten = done.stdout.split()
    assert 0.5 <= float(seconds) < 5
    assert closed == "True"  # the borrowed connection was terminated, not left open
    assert forgotten == "True"  # the next connect starts afresh
    assert "was never released" in done.stderr


LOST_TRANSACTIONS = textwrap.dedent(
    """
    import asyncio, sys
    import asyncpg
    from groundwork.persistence import db

    async def lose(pid: int) -> None:
        other = await asyncpg.connect(sys.argv[1])
        await other.execute("SELECT pg_terminate_backend($1)", pid)
        await other.close()

    async def main() -> None:
        await db.connect(sys.argv[1], max_size=1)  # one connection: a leaked one leaves none
        outcomes = []
        for ending in ("commit", "rollback"):
            try:
                async with db.transaction():
                    [row] = await db.fetch("SELECT pg_backend_pid() AS pid")
                    await lose(row["pid"])  # PostgreSQL goes away under the open transaction
                    if ending == "rollback":
                        raise KeyError("the block fails, so the transaction rolls back")
            except Exception as exc:
                outcomes.append(type(exc).__name__)
            [again] = await asyncio.wait_for(db.fetch("SELECT 1 AS one"), 5)
            outcomes.append(str(again["one"]))
        print(" ".join(outcomes))
        await db.disconnect(within=2)

    asyncio.run(main())
    """
)


def test_a_transaction_whose_commit_or_rollback_fails_gives_its_connection_back(database: str) -> None:
    done = subprocess.run(
        [sys.executable, "-c", LOST_TRANSACTIONS, database], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    # Each failure is reported, and the next query gets the pool's one connection (a fresh one) at once.
    assert done.stdout.split() == ["DatabaseUnavailable", "1", "KeyError", "1"]
    assert "was never released" not in done.stderr
