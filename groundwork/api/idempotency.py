"""Idempotency-Key handling for every state-changing POST, as ASGI middleware around the handler.

The key is claimed before the handler runs (one row per API key and Idempotency-Key, taken with
INSERT ... ON CONFLICT), so two simultaneous requests with one key produce one effect: the second
sees the claim and gets 409 `idempotency_key_in_use`. The finished answer is stored and replayed
byte for byte; 5xx and 429 answers release the claim so the request can be retried. An answer that
holds a secret (routes declared `opt={"sealed_answer": True}`: webhook endpoint creation and secret
rotation) is stored sealed under the key ring and opened to replay it.
"""

from __future__ import annotations

from typing import Any

from litestar.enums import ScopeType
from litestar.middleware import ASGIMiddleware
from litestar.types import ASGIApp, Message, Receive, Scope, Send

from groundwork.api.request_body import read_body, replaying
from groundwork.domain.errors import IdempotencyKeyInUse, IdempotencyKeyReused, ServiceUnavailable
from groundwork.domain.idempotency import check_key, fingerprint
from groundwork.domain.tenancy.principals import Principal
from groundwork.persistence.repositories.platform import idempotency as store
from groundwork.platform.idempotency import request_results
from groundwork.platform.idempotency.claims import complete_quietly, held, release_quietly
from groundwork.platform.secrets.at_rest import open_answer, seal_answer
from groundwork.platform.secrets.keyring import KeyRing, KeyRingError

REPLAY_HEADER = "Idempotent-Replayed"


def wants_idempotency(scope: Scope) -> bool:
    """Whether the matched route is a state-changing POST (declared with `opt={"idempotent": True}`)."""
    opt: dict[str, Any] = getattr(scope.get("route_handler"), "opt", {}) or {}
    return scope.get("method") == "POST" and bool(opt.get("idempotent"))


def answer_holds_secret(scope: Scope) -> bool:
    """Whether the matched route's answer holds a secret (declared with `opt={"sealed_answer": True}`)."""
    opt: dict[str, Any] = getattr(scope.get("route_handler"), "opt", {}) or {}
    return bool(opt.get("sealed_answer"))


def _header(scope: Scope, name: bytes) -> str | None:
    for key, value in scope.get("headers", []):
        if key == name:
            return str(value.decode("latin-1"))
    return None


class IdempotencyMiddleware(ASGIMiddleware):
    """Claim, run once, store, replay."""

    scopes = (ScopeType.HTTP,)

    def __init__(self, max_body_bytes: int, keyring: KeyRing | None = None) -> None:
        self.max_body_bytes = max_body_bytes
        self.keyring = keyring

    async def handle(self, scope: Scope, receive: Receive, send: Send, next_app: ASGIApp) -> None:
        principal = scope.get("user")
        if not wants_idempotency(scope) or not isinstance(principal, Principal):
            await next_app(scope, receive, send)
            return
        key = check_key(_header(scope, b"idempotency-key"))
        body = await read_body(receive, self.max_body_bytes)
        fp = fingerprint(str(scope.get("method", "POST")), scope["path"], body)
        claim = await store.claim(principal.api_key_id, key, fp)
        if not claim.claimed:
            if claim.fingerprint is not None and claim.fingerprint != fp:
                raise IdempotencyKeyReused(
                    "This Idempotency-Key was used for a different request; use a new key for a new request."
                )
            if claim.response is None:
                raise IdempotencyKeyInUse("A request with this Idempotency-Key is still in progress; retry later.")
            await _replay(send, claim.response, self._opened(principal.api_key_id, key, claim.response))
            return
        sealed = answer_holds_secret(scope)

        status = 500
        headers: list[tuple[str, str]] = []
        chunks: list[bytes] = []
        settled = False

        async def settle() -> None:
            # Store (or release) before the client sees the end of the answer, so a retry that follows
            # at once finds the stored answer instead of an in-flight claim.
            nonlocal settled
            settled = True
            if status >= 500 or status == 429 or (sealed and self.keyring is None):
                await release_quietly(principal.api_key_id, key)
            elif sealed:
                assert self.keyring is not None
                answer = seal_answer(self.keyring, principal.api_key_id, key, b"".join(chunks))
                await complete_quietly(principal.api_key_id, key, status, headers, answer, sealed=True)
            else:
                # The status line is already on its way: failing here would cut the answer off mid-body.
                await complete_quietly(principal.api_key_id, key, status, headers, b"".join(chunks))

        async def capture(message: Message) -> None:
            nonlocal status, headers
            if message["type"] == "http.response.start":
                status = message["status"]
                headers = [(k.decode("latin-1"), v.decode("latin-1")) for k, v in message.get("headers", [])]
            elif message["type"] == "http.response.body":
                chunks.append(message.get("body", b""))
                if not message.get("more_body", False):
                    await settle()
            await send(message)

        try:
            async with held(principal.api_key_id, key):
                with request_results.serving(principal.api_key_id, key):
                    await next_app(scope, replaying(body, receive), capture)
        except BaseException:
            if not settled:
                await release_quietly(principal.api_key_id, key)
            raise
        if not settled:  # the app ended without a final body message
            await settle()

    def _opened(self, api_key_id: str, key: str, response: store.StoredResponse) -> bytes:
        if not response.sealed:
            return response.body
        try:
            return open_answer(self.keyring, api_key_id, key, response.body)
        except KeyRingError:
            raise ServiceUnavailable(
                "The stored answer to this Idempotency-Key cannot be opened (its key left GROUNDWORK_SECRET_KEY)."
            ) from None


async def _replay(send: Send, response: store.StoredResponse, body: bytes) -> None:
    headers = [(k.encode("latin-1"), v.encode("latin-1")) for k, v in response.headers]
    headers.append((REPLAY_HEADER.lower().encode(), b"true"))
    await send({"type": "http.response.start", "status": response.status, "headers": headers})
    await send({"type": "http.response.body", "body": body, "more_body": False})
