"""Notification activities: send one delivery (e-mail over SMTP, or a chat incoming-webhook POST), or a digest.

Each checks its row first (a settled delivery is not sent again), checks the recipient's current
preferences (switched off since: `skipped`), sends while heartbeating (a dead worker's attempt is
retried elsewhere within the heartbeat timeout), and records the outcome. A send that can never
succeed raises the non-retryable `permanent_delivery_failure`; anything else is retried.

Delivery is at least once: a worker that dies after the server accepted a message but before the
row says `sent` sends it again; the e-mail keeps its `Message-ID`, so clients can tell the copy.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, TypeVar
from urllib.parse import unquote, urlsplit

import aiosmtplib
from temporalio import activity
from temporalio.exceptions import ApplicationError

from groundwork.config import Settings
from groundwork.persistence.repositories.notifications import deliveries as repo
from groundwork.platform import http_targets as webhook_targets
from groundwork.platform.observability import metrics
from groundwork.platform.secrets.keyring import KeyRing
from groundwork.services.notifications.preferences import preferences_for_sending
from groundwork.services.notifications.sink_messages import Composer
from groundwork.workflows.notifications import (
    PERMANENT_FAILURE,
    DeliveryRequest,
    DigestRequest,
    SendFailure,
    SendOutcome,
)

log = logging.getLogger("groundwork.notifications")
T = TypeVar("T")
_CHAT_TIMEOUT_SECONDS = 15.0
_SMTP_TIMEOUT_SECONDS = 30.0


class SendFailed(Exception):
    """A send did not go through; `permanent` when retrying cannot help."""

    def __init__(self, message: str, *, permanent: bool) -> None:
        super().__init__(message)
        self.permanent = permanent

    def retryable(self) -> ApplicationError:
        """The error Temporal retries (or, when permanent, does not)."""
        return ApplicationError(
            str(self), type=PERMANENT_FAILURE if self.permanent else "send_failed", non_retryable=self.permanent
        )


@dataclass(frozen=True)
class SmtpServer:
    """Where e-mail goes: `smtp://[user:password@]host[:port]` (STARTTLS when offered) or `smtps://` (TLS)."""

    host: str
    port: int
    use_tls: bool
    username: str | None
    password: str | None

    @classmethod
    def parse(cls, url: str) -> SmtpServer:
        """Parse `GROUNDWORK_SMTP_URL`; ValueError names what is wrong."""
        parts = urlsplit(url)
        if parts.scheme not in ("smtp", "smtps") or not parts.hostname:
            raise ValueError("GROUNDWORK_SMTP_URL must look like smtp://host:port or smtps://user:password@host")
        return cls(
            host=parts.hostname,
            port=parts.port or (465 if parts.scheme == "smtps" else 25),
            use_tls=parts.scheme == "smtps",
            username=unquote(parts.username) if parts.username else None,
            password=unquote(parts.password) if parts.password else None,
        )


async def _heartbeating(work: Awaitable[T]) -> T:
    """Await `work`, heartbeating every second so a dead worker's attempt times out quickly."""
    task = asyncio.ensure_future(work)
    try:
        while True:
            done, _ = await asyncio.wait({task}, timeout=1.0)
            if done:
                return task.result()
            activity.heartbeat()
    finally:
        task.cancel()


class NotificationActivities:
    """Sends, configured from a worker's settings (SMTP server, sender, public address, key ring)."""

    def __init__(self, settings: Settings | None = None) -> None:
        # Without settings (a worker built for tests), e-mail is unconfigured and links use the environment.
        settings = settings or Settings(database_url="")
        self.smtp = SmtpServer.parse(settings.smtp_url) if settings.smtp_url else None
        self.keyring: KeyRing | None = settings.keyring
        self.composer = Composer(settings.smtp_from, settings.public_url, settings.keyring)

    async def _send_email(self, message: Any) -> None:
        if self.smtp is None:
            raise SendFailed("no SMTP server is configured (GROUNDWORK_SMTP_URL)", permanent=True)
        try:
            await aiosmtplib.send(
                message,
                hostname=self.smtp.host,
                port=self.smtp.port,
                use_tls=self.smtp.use_tls,
                username=self.smtp.username,
                password=self.smtp.password,
                timeout=_SMTP_TIMEOUT_SECONDS,
            )
        except aiosmtplib.SMTPRecipientsRefused as exc:
            raise SendFailed(f"recipient refused: {exc}", permanent=True) from None
        except aiosmtplib.SMTPResponseException as exc:
            raise SendFailed(f"SMTP {exc.code}: {exc.message}", permanent=500 <= exc.code < 600) from None
        except (aiosmtplib.SMTPException, OSError, TimeoutError) as exc:
            raise SendFailed(f"{type(exc).__name__}: {exc}", permanent=False) from None

    async def _send_chat(self, url: str, payload: dict[str, Any], allow_private: bool) -> None:
        target = await webhook_targets.check_target(url, allow_private=allow_private)
        if isinstance(target, webhook_targets.TargetRefused):
            raise SendFailed(target.reason, permanent=not target.lookup_failed)
        try:
            async with asyncio.timeout(_CHAT_TIMEOUT_SECONDS), webhook_targets.pinned(target):
                response = await webhook_targets.http_client().post(url, json=payload)
        except Exception as exc:  # a chat service we cannot reach now may answer later
            raise SendFailed(f"{type(exc).__name__}: {exc}", permanent=False) from None
        if response.is_success:
            return
        permanent = 400 <= response.status_code < 500 and response.status_code not in (408, 429)
        raise SendFailed(f"chat webhook answered {response.status_code}", permanent=permanent)

    @activity.defn(name="send_notification")
    async def send_notification(self, request: DeliveryRequest) -> SendOutcome:
        """Send one notification on its channel, unless it was settled already or the recipient opted out."""
        context = await repo.delivery_context(request.delivery_id)
        if context is None:
            return SendOutcome("stale", "the delivery no longer exists")
        if context.status != "pending":
            return SendOutcome(context.status, "settled before")
        prefs, unavailable = preferences_for_sending(context.preferences, self.keyring)
        if request.channel == "chat" and unavailable:
            await repo.finish_delivery(request.delivery_id, "failed", unavailable)
            metrics.NOTIFICATION_SENDS.labels(request.channel, "failed").inc()
            return SendOutcome("failed", unavailable)
        if not prefs.wants(context.event_type, request.channel):
            await repo.finish_delivery(request.delivery_id, "skipped", f"{request.channel} turned off since")
            metrics.NOTIFICATION_SENDS.labels(request.channel, "skipped").inc()
            return SendOutcome("skipped", f"{request.channel} turned off in the recipient's preferences")
        now = datetime.now(UTC)
        try:
            if request.channel == "email":
                assert prefs.email_address is not None
                message = self.composer.email(
                    context, prefs.email_address, now, f"<ntd-{request.delivery_id}@groundwork>"
                )
                await _heartbeating(self._send_email(message))
            else:
                assert prefs.chat_webhook_url is not None
                await _heartbeating(
                    self._send_chat(
                        prefs.chat_webhook_url, self.composer.chat(context, now), request.policy.allow_private
                    )
                )
        except SendFailed as failure:
            await repo.record_attempt(request.delivery_id, str(failure))
            metrics.NOTIFICATION_SENDS.labels(request.channel, "failed").inc()
            raise failure.retryable() from None
        await repo.record_attempt(request.delivery_id, None)
        await repo.finish_delivery(request.delivery_id, "sent")
        metrics.NOTIFICATION_SENDS.labels(request.channel, "sent").inc()
        return SendOutcome("sent")

    @activity.defn(name="fail_notification_delivery")
    async def fail_notification_delivery(self, failure: SendFailure) -> SendOutcome:
        """Record that a delivery failed for good (its last error stays on the row)."""
        await repo.finish_delivery(failure.id, "failed", failure.error)
        return SendOutcome("failed", failure.error)

    @activity.defn(name="send_notification_digest")
    async def send_notification_digest(self, request: DigestRequest) -> SendOutcome:
        """Close the window and send its notifications that still need attention as one e-mail."""
        digest, contexts = await repo.close_digest(request.digest_id)
        if digest is None:
            return SendOutcome("stale", "the digest no longer exists")
        if digest.status in ("sent", "empty", "failed"):
            return SendOutcome(digest.status, "settled before")
        if not contexts:
            await repo.finish_digest(request.digest_id, "empty", [])
            return SendOutcome("empty")
        prefs, _ = preferences_for_sending(contexts[0].preferences, self.keyring)
        wanted = [
            c for c in contexts if prefs.wants(c.event_type, "email") and c.notification_status in ("unread", "read")
        ]
        skipped = [c.id for c in contexts if c not in wanted]
        if not wanted:
            await repo.finish_digest(request.digest_id, "empty", [], skipped)
            return SendOutcome("empty", "nothing left that needs attention")
        now = datetime.now(UTC)
        assert prefs.email_address is not None
        message = self.composer.digest(
            wanted, prefs.email_address, request.cadence, now, f"<ntdg-{request.digest_id}@groundwork>"
        )
        try:
            await _heartbeating(self._send_email(message))
        except SendFailed as failure:
            await repo.record_digest_attempt(request.digest_id, str(failure))
            metrics.NOTIFICATION_SENDS.labels("email_digest", "failed").inc()
            raise failure.retryable() from None
        await repo.record_digest_attempt(request.digest_id, None)
        metrics.NOTIFICATION_SENDS.labels("email_digest", "sent").inc()
        await repo.finish_digest(request.digest_id, "sent", [c.id for c in wanted], skipped)
        return SendOutcome("sent", f"{len(wanted)} notification(s)")

    @activity.defn(name="fail_notification_digest")
    async def fail_notification_digest(self, failure: SendFailure) -> SendOutcome:
        """Record that a digest failed for good, with its deliveries."""
        _, contexts = await repo.close_digest(failure.id)
        await repo.finish_digest(failure.id, "failed", [c.id for c in contexts], error=failure.error)
        return SendOutcome("failed", failure.error)

    def all(self) -> list[Any]:
        """Every activity of this object, for the worker."""
        return [
            self.send_notification,
            self.fail_notification_delivery,
            self.send_notification_digest,
            self.fail_notification_digest,
        ]
