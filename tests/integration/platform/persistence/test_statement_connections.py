"""Statements outside a transaction run on a few connections kept aside: reused while they work, given back to
the pool when a statement fails, is cancelled or finds its connection closed, and never holding up a close."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from typing import Any

# Each scenario runs in a process of its own: `db` is one pool per process, and this session's tests share it.
PRELUDE = textwrap.dedent(
    """
    import asyncio, json, sys, time
    import asyncpg
    from groundwork.persistence import db

    async def terminate(pid: int) -> None:
        other = await asyncpg.connect(sys.argv[1])
        await other.execute("SELECT pg_terminate_backend($1)", pid)
        await other.close()

    async def pid() -> int:
        return (await db.fetchrow("SELECT pg_backend_pid() AS pid"))["pid"]
    """
)


def _run(body: str, database: str) -> tuple[dict[str, Any], str]:
    script = PRELUDE + textwrap.dedent(body) + "\nasyncio.run(main())\n"
    done = subprocess.run([sys.executable, "-c", script, database], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1]), done.stderr


def test_statements_alone_reuse_a_kept_connection_while_transactions_use_the_rest(database: str) -> None:
    outcome, _ = _run(
        """
        async def main() -> None:
            await db.connect(sys.argv[1], max_size=3)  # one connection kept for statements, two for the rest
            first, second = await pid(), await pid()
            inside, done = asyncio.Event(), asyncio.Event()
            seen = {}

            async def in_transaction() -> None:
                async with db.transaction():
                    [row] = await db.fetch("SELECT pg_backend_pid() AS pid")
                    seen["pid"] = row["pid"]
                    inside.set()
                    await done.wait()

            holding = asyncio.ensure_future(in_transaction())
            await inside.wait()
            alone = await pid()  # a statement of another task while the transaction holds its connection
            done.set()
            await holding
            await db.execute("SELECT 1")
            print(json.dumps({"first": first, "second": second, "in_tx": seen["pid"], "alone": alone,
                              "after": await pid()}))
            await db.disconnect()
        """,
        database,
    )
    assert outcome["first"] == outcome["second"] == outcome["alone"] == outcome["after"]
    assert outcome["in_tx"] != outcome["first"]  # a transaction never takes the kept connection


def test_a_cancelled_statement_gives_its_connection_back_and_the_next_one_runs(database: str) -> None:
    outcome, stderr = _run(
        """
        async def main() -> None:
            await db.connect(sys.argv[1], max_size=3)
            before = await pid()
            sleeping = asyncio.ensure_future(db.fetch("SELECT pg_sleep(30)"))
            await asyncio.sleep(0.3)
            sleeping.cancel()
            await asyncio.gather(sleeping, return_exceptions=True)
            started = time.monotonic()
            after = await pid()
            took = time.monotonic() - started
            closing = time.monotonic()
            await db.disconnect(within=5)
            print(json.dumps({"before": before, "after": after, "took": took,
                              "close": time.monotonic() - closing}))
        """,
        database,
    )
    assert outcome["took"] < 5  # not stuck behind the cancelled pg_sleep(30)
    assert outcome["close"] < 4  # nothing left borrowed: the close did not wait out its limit
    assert "was never released" not in stderr


def test_a_kept_connection_the_server_closed_is_replaced_without_a_failed_statement(database: str) -> None:
    outcome, _ = _run(
        """
        async def main() -> None:
            await db.connect(sys.argv[1], max_size=3)
            kept = await pid()
            await terminate(kept)  # as a PostgreSQL restart would, while the connection sits idle
            await asyncio.sleep(0.3)
            print(json.dumps({"kept": kept, "next": await pid()}))
            await db.disconnect()
        """,
        database,
    )
    assert outcome["next"] != outcome["kept"]


def test_closing_waits_only_for_the_statement_in_flight_on_a_kept_connection(database: str) -> None:
    outcome, stderr = _run(
        """
        async def main() -> None:
            await db.connect(sys.argv[1], max_size=3)
            await pid()  # a connection is kept now
            running = asyncio.ensure_future(db.fetch("SELECT pg_sleep(0.5)"))
            await asyncio.sleep(0.1)
            started = time.monotonic()
            await db.disconnect(within=8)
            rows = await running
            print(json.dumps({"close": time.monotonic() - started, "rows": len(rows)}))
        """,
        database,
    )
    assert outcome["rows"] == 1  # the statement finished
    assert outcome["close"] < 4  # the close waited for it, not for its 8 s limit
    assert "was never released" not in stderr
