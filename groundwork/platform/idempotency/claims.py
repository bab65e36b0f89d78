"""An Idempotency-Key claim held while its request runs: refreshed so a retry knows the request is alive,
completed or released without failing the answer when the database is gone (the claim is then taken over as
abandoned)."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator

from groundwork.persistence.repositories.platform import idempotency as store

log = logging.getLogger(__name__)


@contextlib.asynccontextmanager
async def held(api_key_id: str, key: str) -> AsyncIterator[None]:
    """Refresh the claim every `store.CLAIM_REFRESH` while the block runs."""

    async def refresh() -> None:
        while True:
            await asyncio.sleep(store.CLAIM_REFRESH.total_seconds())
            try:
                await store.refresh(api_key_id, key)
            except Exception as exc:  # the database is out of reach: the request fails or ends on its own
                log.warning("could not refresh an idempotency claim: %s", exc)

    task = asyncio.create_task(refresh())
    try:
        yield
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task


async def release_quietly(api_key_id: str, key: str) -> None:
    """Release a claim whose answer is not stored (5xx, 429); if the database is out of reach the claim
    stays and a retry takes it over once it is abandoned, so the caller still gets the answer it is owed."""
    try:
        await store.release(api_key_id, key)
    except Exception as exc:
        log.warning("could not release an idempotency claim (taken over once abandoned): %s", exc)


async def complete_quietly(
    api_key_id: str, key: str, status: int, headers: list[tuple[str, str]], body: bytes, *, sealed: bool = False
) -> None:
    """Store a finished answer for replay. If the database is out of reach the answer is still sent: its change
    is committed and the client is owed it. The claim stays unanswered and a retry takes it over once it is
    abandoned, answering from the resource the request recorded."""
    try:
        await store.complete(api_key_id, key, status, headers, body, sealed=sealed)
    except Exception as exc:
        log.warning("could not store an idempotent answer (the claim is taken over once abandoned): %s", exc)
