"""What a state-changing request created, kept with its Idempotency-Key claim in the same transaction.

The idempotency layer (REST middleware, GraphQL and MCP `call_once`) stores a request's answer after
the handler returns. If the process dies between the handler's commit and that store, the retry with
the same key runs the handler again: a create then looks here first and answers what the first
attempt created, so the retry gets the one result and nothing is created twice.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from contextvars import ContextVar

from groundwork.persistence.repositories.platform import idempotency as store

# (API key id, Idempotency-Key) of the request this task serves, set by the idempotency layer.
_serving: ContextVar[tuple[str, str] | None] = ContextVar("groundwork_request_claim", default=None)


@contextlib.contextmanager
def serving(api_key_id: str, key: str) -> Iterator[None]:
    """Mark the code run inside as serving the request claimed under (`api_key_id`, `key`)."""
    token = _serving.set((api_key_id, key))
    try:
        yield
    finally:
        _serving.reset(token)


async def earlier_result(resource_type: str) -> str | None:
    """The id of the `resource_type` an earlier attempt of this same request created, if any."""
    claim = _serving.get()
    return await store.recorded_resource(*claim, resource_type) if claim is not None else None


async def record_result(resource_type: str, resource_id: str) -> None:
    """Remember what this request created; call inside the transaction that creates it."""
    claim = _serving.get()
    if claim is not None:
        await store.record_resource(*claim, resource_type, resource_id)
