"""A session teardown that hangs fails the run loudly instead of eating CI's budget.

After the last test pytest tears down the session (worker, API servers, Temporal, PostgreSQL). If that
takes longer than `TEARDOWN_SECONDS`, the stacks of every thread and every asyncio task of the session's
loop go to the real stderr (pytest's capture would swallow them) and the process exits with status 3.
"""

from __future__ import annotations

import asyncio
import faulthandler
import gc
import os
import threading
import warnings
from collections.abc import Awaitable, Generator
from typing import IO

import pytest

# The whole teardown takes a few seconds; the session worker alone is given 60 (tests/conftest.py).
TEARDOWN_SECONDS = float(os.environ.get("GROUNDWORK_TEST_TEARDOWN_SECONDS", "180"))
HUNG_TEARDOWN_EXIT_STATUS = 3

_stderr: IO[str] | None = None
_session_loop: asyncio.AbstractEventLoop | None = None


def remember_session_loop(loop: asyncio.AbstractEventLoop) -> None:
    """Record the loop whose tasks a hang report lists."""
    global _session_loop
    _session_loop = loop


def pytest_configure(config: pytest.Config) -> None:
    """Keep a handle on the real stderr while capture is suspended (as pytest's own faulthandler does)."""
    global _stderr
    _stderr = os.fdopen(os.dup(2), "w", buffering=1)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_teardown(item: pytest.Item, nextitem: pytest.Item | None) -> Generator[None, None, None]:
    """Watch the last item's teardown, which is where the session fixtures stop."""
    if nextitem is not None:
        return (yield)
    timer = threading.Timer(TEARDOWN_SECONDS, _report_and_exit)
    timer.daemon = True
    timer.start()
    try:
        return (yield)
    finally:
        timer.cancel()


def _report_and_exit() -> None:
    report(f"Session teardown still running after {TEARDOWN_SECONDS:.0f} s")
    os._exit(HUNG_TEARDOWN_EXIT_STATUS)


def report(headline: str) -> None:
    """Write `headline` and the stacks of every thread and every task of the session's loop to stderr."""
    stream = _stderr
    if stream is None:
        return
    stream.write(f"\n\n{headline}. Threads:\n")
    stream.flush()
    faulthandler.dump_traceback(file=stream, all_threads=True)
    stream.write("\nTasks of the session's event loop:\n")
    for task in _tasks():
        stream.write(f"\n{task!r}\n")
        for line in _awaiting(task.get_coro()):
            stream.write(f"  {line}\n")
    stream.flush()


async def stop_within(seconds: float, what: str, stopping: Awaitable[object]) -> bool:
    """Wait at most `seconds` for `stopping`; past that, report every stack, warn, and go on, so the rest of
    the teardown still runs and the run ends. True if it finished in time."""
    task = asyncio.ensure_future(stopping)
    done, _ = await asyncio.wait({task}, timeout=seconds)
    if task in done:
        task.result()
        return True
    report(f"{what} did not stop within {seconds:.0f} s")
    warnings.warn(f"{what} did not stop within {seconds:.0f} s (stacks on stderr)", stacklevel=2)
    return False


def _awaiting(awaitable: object) -> list[str]:
    """Where a suspended coroutine waits, outermost first (Task.print_stack shows only the outermost frame)."""
    lines: list[str] = []
    while awaitable is not None and len(lines) < 50:
        frame = getattr(awaitable, "cr_frame", None) or getattr(awaitable, "ag_frame", None)
        frame = frame or getattr(awaitable, "gi_frame", None)
        if frame is None:
            # An async generator's asend() hides its generator; the garbage collector still knows it.
            inner = [o for o in gc.get_referents(awaitable) if hasattr(o, "ag_frame") or hasattr(o, "cr_frame")]
            if inner:
                awaitable = inner[0]
                continue
            lines.append(repr(awaitable))
            break
        lines.append(f"{frame.f_code.co_filename}:{frame.f_lineno} in {frame.f_code.co_name}")
        awaitable = (
            getattr(awaitable, "cr_await", None)
            or getattr(awaitable, "ag_await", None)
            or getattr(awaitable, "gi_yieldfrom", None)
        )
    return lines


def _tasks() -> list[asyncio.Task[object]]:
    if _session_loop is None:
        return []
    # Read from another thread while the loop waits: the set may change under us, so try again.
    for _ in range(10):
        try:
            return list(asyncio.all_tasks(_session_loop))
        except RuntimeError:
            continue
    return []
