"""The loop that keeps one of this process's index replicas following its change log."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable

from groundwork.search.generations import IndexBusy

log = logging.getLogger(__name__)


async def follow(stop: asyncio.Event, catch_up: Callable[[], Awaitable[int]], label: str, interval: float) -> None:
    """Run `catch_up` every `interval` seconds until `stop` (the worker runs one per index)."""
    while not stop.is_set():
        try:
            await catch_up()
        except IndexBusy:
            log.warning("the %s index is held by another process; retrying", label)
        except Exception:  # the next round retries; never let the follower die silently
            log.exception("%s index catch-up failed", label)
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(stop.wait(), interval)
