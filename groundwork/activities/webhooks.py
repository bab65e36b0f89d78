"""Webhook activities: one signed POST per attempt, recorded in PostgreSQL with its consequences."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from temporalio import activity
from temporalio.exceptions import ApplicationError

from groundwork import __version__
from groundwork.config import Settings
from groundwork.domain import webhooks as rules
from groundwork.domain.errors import GroundworkError
from groundwork.domain.notifications.inbox import ENDPOINT_DISABLED
from groundwork.domain.times import format_timestamp
from groundwork.persistence.repositories.platform import outbox
from groundwork.persistence.repositories.webhooks import attempts, endpoints
from groundwork.persistence.repositories.webhooks.attempts import AttemptContextRow
from groundwork.platform import http_targets as webhook_targets
from groundwork.platform.observability import metrics
from groundwork.platform.secrets.keyring import KeyRing, KeyRingError
from groundwork.services.webhooks.secrets import open_webhook_secret
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


async def _post(
    target: webhook_targets.CheckedTarget, headers: dict[str, str], body: bytes, timeout: float
) -> _Observation:
    started = time.perf_counter()
    observed = _Observation()
    try:
        async with (
            asyncio.timeout(timeout),
            webhook_targets.pinned(target),
            webhook_targets.http_client().stream("POST", target.url, content=body, headers=headers) as response,
        ):
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
    endpoint = await endpoints.get_endpoint(workspace_id, endpoint_id)
    now = datetime.now(UTC)
    await outbox.append_event(
        type=ENDPOINT_DISABLED,
        workspace_id=workspace_id,
        resource_type="webhook_endpoint",
        resource_id=endpoint_id,
        actor_id=None,
        payload={
            "endpoint_id": endpoint_id,
            "url": endpoint.url if endpoint else None,
            "reason": reason,
            "disabled_at": format_timestamp(now),
        },
        occurred_at=now,
        project_id=None,
    )
    log.warning("webhook endpoint %s of workspace %s disabled (%s)", endpoint_id, workspace_id, reason)


def _live_secrets(context: AttemptContextRow, keyring: KeyRing | None) -> list[str]:
    """The secrets that sign now (current, then replaced ones still in their overlap), opened."""
    stored = [context.secret]
    expires = context.previous_secret_expires_at
    if context.previous_secret and expires is not None and expires > context.now:
        stored.append(context.previous_secret)
    stored += list(context.older_live_secrets)
    try:
        return [open_webhook_secret(keyring, context.endpoint_id, s) for s in stored]
    except (KeyRingError, ValueError, GroundworkError) as exc:
        # Our configuration (no key ring, or none of its keys opens it), not the receiver's fault: retry
        # (Temporal backs off) until the key ring is fixed; nothing is sent and no attempt is recorded.
        raise ApplicationError(f"cannot open the signing secret of {context.endpoint_id}: {exc}") from None


class WebhookActivities:
    """The delivery attempt, with the worker's key ring (it opens the sealed signing secrets)."""

    def __init__(self, settings: Settings | None = None) -> None:
        # Without settings (a worker built for tests) the key ring comes from the environment.
        self.keyring = (settings or Settings(database_url="")).keyring

    def all(self) -> list[Callable[..., Any]]:
        """Every activity this class provides, for the worker."""
        return [self.attempt_webhook_delivery]

    @activity.defn(name="attempt_webhook_delivery")
    async def attempt_webhook_delivery(self, request: AttemptRequest) -> AttemptResult:
        """One signed POST of a delivery's event to its endpoint, recorded with its consequences."""
        return await _attempt(request, self.keyring)


async def _attempt(request: AttemptRequest, keyring: KeyRing | None) -> AttemptResult:
    """One signed POST of a delivery's event to its endpoint, recorded with its consequences."""
    context = await attempts.attempt_context(request.delivery_id)
    if context is None or context.generation != request.generation:
        return AttemptResult(delivery_status="stale")
    if context.status != "pending":
        return AttemptResult(delivery_status=context.status)  # a duplicate run already finished it
    if not context.enabled:
        await attempts.fail_undeliverable(request.delivery_id, request.generation, "endpoint_disabled")
        metrics.WEBHOOK_DELIVERIES.labels("failed").inc()
        return AttemptResult(delivery_status="failed")

    body = rules.envelope_body(
        rules.envelope(
            event_id=context.event_id,
            type=context.type,
            event_version=context.event_version,
            occurred_at=context.occurred_at,
            workspace_id=context.workspace_id,
            resource_type=context.resource_type,
            resource_id=context.resource_id,
            actor_id=context.actor_id,
            payload=context.payload,
            source=context.source,
        )
    )
    live_secrets = _live_secrets(context, keyring)
    attempted_at = datetime.now(UTC)
    timestamp = int(attempted_at.timestamp())
    headers = {
        "content-type": "application/json",
        "user-agent": USER_AGENT,
        "webhook-id": context.event_id,
        "webhook-timestamp": str(timestamp),
        "webhook-signature": rules.signature_header(live_secrets, context.event_id, timestamp, body),
    }
    # Resolved and checked once; the connection goes to exactly the address checked.
    target = await webhook_targets.check_target(context.url, allow_private=request.policy.allow_private)
    observed = (
        _Observation(error=target.reason)
        if isinstance(target, webhook_targets.TargetRefused)
        else await _post(target, headers, body, request.policy.timeout_seconds)
    )
    retry_after = (
        rules.retry_after_seconds(observed.retry_after, attempted_at)
        if rules.honours_retry_after(observed.status_code)
        else None
    )
    outcome = await attempts.record_attempt(
        attempts.AttemptRecord(
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
    metrics.WEBHOOK_ATTEMPTS.labels("succeeded" if rules.is_success(observed.status_code) else "failed").inc()
    if outcome.delivery_status in ("succeeded", "failed"):
        metrics.WEBHOOK_DELIVERIES.labels(outcome.delivery_status).inc()
    return AttemptResult(
        delivery_status=outcome.delivery_status,
        status_code=observed.status_code,
        retry_after_seconds=retry_after,
        number=outcome.number,
    )
