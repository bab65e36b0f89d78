"""Idempotency for GraphQL mutations and MCP tools: the same store and rules as REST.

REST replays the stored HTTP answer byte for byte (middleware); GraphQL and MCP have no HTTP answer
of their own to replay, so they store the call's outcome (the resource id it produced, or its error)
and a replay renders that outcome again with `idempotencyReplayed: true`.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from typing import Any

from groundwork.domain.errors import GroundworkError, IdempotencyKeyInUse, IdempotencyKeyReused
from groundwork.domain.idempotency import check_key, fingerprint
from groundwork.domain.tenancy.principals import Principal
from groundwork.persistence.repositories.platform import idempotency as store
from groundwork.platform.idempotency import request_results
from groundwork.platform.idempotency.claims import held, release_quietly


async def call_once(
    principal: Principal,
    key: str | None,
    operation: str,
    request: dict[str, Any],
    call: Callable[[], Awaitable[dict[str, Any]]],
) -> tuple[dict[str, Any], bool]:
    """Run `call` once per (API key, idempotency key); returns its JSON outcome and whether it was replayed.

    A `GroundworkError` outcome is stored too (as `{"error": {...}}`), so a retry sees the same answer.
    """
    checked = check_key(key)
    body = json.dumps(request, sort_keys=True, separators=(",", ":"), default=str).encode()
    fp = fingerprint("CALL", operation, body)
    claim = await store.claim(principal.api_key_id, checked, fp)
    if not claim.claimed:
        if claim.fingerprint is not None and claim.fingerprint != fp:
            raise IdempotencyKeyReused("This idempotency key was used for a different request.")
        if claim.response is None:
            raise IdempotencyKeyInUse("A request with this idempotency key is still in progress; retry later.")
        return json.loads(claim.response.body), True
    try:
        async with held(principal.api_key_id, checked):
            with request_results.serving(principal.api_key_id, checked):
                outcome = await call()
    except GroundworkError as error:
        if error.status >= 500 or error.status == 429:
            await release_quietly(principal.api_key_id, checked)
            raise
        outcome = {"error": {"code": error.code, "message": error.detail, **error.extra}}
    except BaseException:
        await release_quietly(principal.api_key_id, checked)
        raise
    await store.complete(principal.api_key_id, checked, 200, [], json.dumps(outcome, default=str).encode())
    return outcome, False
