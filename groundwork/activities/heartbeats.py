"""Heartbeats for activities that may run long: a worker killed mid-step is noticed within the workflow's
`heartbeat_timeout` (seconds) and the step retried on another worker, not after its whole start-to-close
timeout (minutes)."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator

from temporalio import activity

# Well under every heartbeat_timeout the workflows set (workflows.heartbeat.HEARTBEAT_TIMEOUT).
BEAT_SECONDS = 3.0


@contextlib.asynccontextmanager
async def beating(every: float = BEAT_SECONDS) -> AsyncIterator[None]:
    """Heartbeat every `every` seconds while the block runs (its heavy work runs in threads, so the loop beats)."""

    async def beat() -> None:
        while True:
            activity.heartbeat()
            await asyncio.sleep(every)

    task = asyncio.create_task(beat())
    try:
        yield
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
