"""Webhook activities: one signed POST per attempt, recorded in PostgreSQL with its consequences."""

from __future__ import annotations

import asyncio
import logging
import socket
import time
import weakref
from dataclasses import dataclass
from datetime import UTC, datetime
from urllib.parse import urlsplit

import httpx
from temporalio import activity

from groundwork import __version__
from groundwork.domain import webhooks as rules
from groundwork.domain.notifications import ENDPOINT_DISABLED
from groundwork.domain.times import format_timestamp
from groundwork.persistence.repositories import outbox
from groundwork.persistence.repositories import webhooks as repo
from groundwork.workflows.webhooks import AttemptRequest, AttemptResult

log = logging.getLogger("groundwork.webhooks")

USER_AGENT = f"Groundwork-Webhooks/{__version__}"
# Enough of a response to show what the receiver said; the rest is read no further.
_READ_LIMIT = 16 * 1024


@dataclass
class _Observation:
    status_code: int | None = None
    latency_ms: float = 0.0
    response_body: str | None = None
    response_truncated: bool = False
    error: str | None = None
    retry_after: str | None = None


_clients: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, httpx.AsyncClient] = weakref.WeakKeyDictionary()


def http_client() -> httpx.AsyncClient:
    """One pooled client per event loop; redirects are not followed, proxies from the environment unused."""
    loop = asyncio.get_running_loop()
    client = _clients.get(loop)
    if client is None:
        client = httpx.AsyncClient(
            follow_redirects=False,
            trust_env=False,
            limits=httpx.Limits(max_connections=200, max_keepalive_connections=50),
        )
        _clients[loop] = client
    return client


async def target_refusal(url: str, allow_private: bool) -> str | None:
    """Why a target may not be contacted now (a private address, maybe only after DNS), or None."""
    if allow_private:
        return None
    errors = rules.url_errors(url, allow_private=False)
    if errors:
        return f"refused: the url {errors[0].message}"
    parts = urlsplit(url)
    host = parts.hostname or ""
    try:
        infos = await asyncio.get_running_loop().getaddrinfo(
            host, parts.port or (443 if parts.scheme == "https" else 80), type=socket.SOCK_STREAM
        )
    except (OSError, UnicodeError) as exc:
        return f"DNS lookup of {host} failed: {exc}"
    if any(rules.is_private_address(str(info[4][0])) for info in infos):
        return f"refused: {host} resolves to a loopback, private or link-local address"
    return None


async def _post(url: str, headers: dict[str, str], body: bytes, timeout: float) -> _Observation:
    started = time.perf_counter()
    observed = _Observation()
    try:
        async with asyncio.timeout(timeout):
            async with http_client().stream("POST", url, content=body, headers=headers) as response:
                observed.status_code = response.status_code
                observed.retry_after = response.headers.get("retry-after")
                received = bytearray()
                async for chunk in response.aiter_bytes():
                    received += chunk
                    if len(received) > _READ_LIMIT:
                        observed.response_truncated = True
                        break
        text = received.decode("utf-8", errors="replace")
        if len(text) > rules.RESPONSE_EXCERPT_CHARS:
            text, observed.response_truncated = text[: rules.RESPONSE_EXCERPT_CHARS], True
        # PostgreSQL text cannot hold NUL: a receiver's reply must never stop the attempt being recorded.
        observed.response_body = text.replace("\x00", "\ufffd")
    except TimeoutError:
        observed.error = f"no complete answer within {timeout:g} s"
    except Exception as exc:  # any failure to talk to the receiver is a failed attempt, recorded as such
        observed.error = (f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__).replace("\x00", "")
    observed.latency_ms = round((time.perf_counter() - started) * 1000, 3)
    return observed


async def notify_admins_of_disabled_endpoint(workspace_id: str, endpoint_id: str, reason: str) -> None:
    """Record that an endpoint was disabled; the notifications service tells the workspace's admins.

    Runs inside the transaction that disables the endpoint, so the `webhook_endpoint.disabled` event
    (internal: not in the webhook catalogue) commits with it, and the outbox relay creates one
    notification per admin from it, exactly once.
    """
    endpoint = await repo.get_endpoint(workspace_id, endpoint_id)
    now = datetime.now(UTC)
    await outbox.append_event(
        type=ENDPOINT_DISABLED,
        workspace_id=workspace_id,
        resource_type="webhook_endpoint",
        resource_id=endpoint_id,
        actor_id=None,
        payload={
            "endpoint_id": endpoint_id,
            "url": endpoint["url"] if endpoint else None,
            "reason": reason,
            "disabled_at": format_timestamp(now),
        },
        occurred_at=now,
    )
    log.warning("webhook endpoint %s of workspace %s disabled (%s)", endpoint_id, workspace_id, reason)


@activity.defn(name="attempt_webhook_delivery")
async def attempt_webhook_delivery(request: AttemptRequest) -> AttemptResult:
    """One signed POST of a delivery's event to its endpoint, recorded with its consequences."""
    context = await repo.attempt_context(request.delivery_id)
    if context is None or context["generation"] != request.generation:
        return AttemptResult(delivery_status="stale")
    if context["status"] != "pending":
        return AttemptResult(delivery_status=context["status"])  # a duplicate run already finished it
    if not context["enabled"]:
        await repo.fail_undeliverable(request.delivery_id, request.generation, "endpoint_disabled")
        return AttemptResult(delivery_status="failed")

    body = rules.envelope_body(
        rules.envelope(
            event_id=context["event_id"],
            type=context["type"],
            event_version=context["event_version"],
            occurred_at=context["occurred_at"],
            workspace_id=context["workspace_id"],
            resource_type=context["resource_type"],
            resource_id=context["resource_id"],
            actor_id=context["actor_id"],
            payload=context["payload"],
            source=context["source"],
        )
    )
    live_secrets = [context["secret"]]
    expires = context["previous_secret_expires_at"]
    if context["previous_secret"] and expires is not None and expires > context["now"]:
        live_secrets.append(context["previous_secret"])
    live_secrets += list(context["older_live_secrets"])
    attempted_at = datetime.now(UTC)
    timestamp = int(attempted_at.timestamp())
    headers = {
        "content-type": "application/json",
        "user-agent": USER_AGENT,
        "webhook-id": context["event_id"],
        "webhook-timestamp": str(timestamp),
        "webhook-signature": rules.signature_header(live_secrets, context["event_id"], timestamp, body),
    }
    refusal = await target_refusal(context["url"], request.policy.allow_private)
    observed = (
        _Observation(error=refusal)
        if refusal
        else await _post(context["url"], headers, body, request.policy.timeout_seconds)
    )
    retry_after = (
        rules.retry_after_seconds(observed.retry_after, attempted_at)
        if rules.honours_retry_after(observed.status_code)
        else None
    )
    outcome = await repo.record_attempt(
        repo.AttemptRecord(
            delivery_id=request.delivery_id,
            generation=request.generation,
            slot=request.slot,
            final=request.final,
            attempted_at=attempted_at,
            status_code=observed.status_code,
            latency_ms=observed.latency_ms,
            response_body=observed.response_body,
            response_truncated=observed.response_truncated,
            error=observed.error,
            succeeded=rules.is_success(observed.status_code),
            gone=observed.status_code == 410,
            retry_after_seconds=retry_after,
            next_delay_seconds=request.next_delay_seconds,
            disable_after_seconds=request.policy.disable_after_seconds,
        ),
        on_endpoint_disabled=notify_admins_of_disabled_endpoint,
    )
    if outcome is None:
        return AttemptResult(delivery_status="stale", status_code=observed.status_code)
    return AttemptResult(
        delivery_status=outcome.delivery_status,
        status_code=observed.status_code,
        retry_after_seconds=retry_after,
        number=outcome.number,
    )
