"""Notification sends: `NotificationDeliveryWorkflow` (one notification, one channel) and
`NotificationDigestWorkflow` (one recipient's e-mail digest of one window, sent when a durable timer fires);
`NotificationSnoozeWorkflow` (a snooze's durable timer, which brings the notification back) and
`PurgeNotificationChangesWorkflow` (the live feed's changes past the resume window).

Each send is an activity Temporal retries with backoff; the activity heartbeats while it talks to
the SMTP server or the chat webhook, so a worker that dies mid-send has its attempt retried on
another worker within the heartbeat timeout. Rows in PostgreSQL are the truth the activities check
before sending, so a duplicate run sends nothing twice by itself.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from temporalio import workflow
from temporalio.common import RetryPolicy
from temporalio.exceptions import ActivityError

from groundwork.workflows.search_attributes import DELIVERY_STATUS

# The error type of a send that can never succeed (no SMTP server configured, address refused, 4xx from chat).
PERMANENT_FAILURE = "permanent_delivery_failure"
_RECORD_RETRY = RetryPolicy(initial_interval=timedelta(seconds=1), maximum_interval=timedelta(minutes=1))


@dataclass
class SendPolicy:
    """How sends are retried; travels in the input so a running workflow keeps the policy it started with."""

    retry_seconds: float
    max_attempts: int
    heartbeat_seconds: float
    allow_private: bool


@dataclass
class DeliveryRequest:
    """Input of `NotificationDeliveryWorkflow` and of its send activity."""

    delivery_id: int
    notification_id: str
    workspace_id: str
    recipient_id: str
    channel: str
    policy: SendPolicy


@dataclass
class DigestRequest:
    """Input of `NotificationDigestWorkflow` and of its send activity; `window_end` is ISO 8601 UTC."""

    digest_id: int
    workspace_id: str
    recipient_id: str
    cadence: str
    window_end: str
    policy: SendPolicy


@dataclass
class SendFailure:
    """Input of the activity that records a send that failed for good."""

    id: int
    error: str


@dataclass
class SendOutcome:
    """How a delivery or digest ended: `sent`, `skipped`, `empty`, `failed`, or `stale` (its row is gone)."""

    status: str
    detail: str | None = None


def delivery_workflow_id(notification_id: str, channel: str) -> str:
    """The workflow id of one notification's delivery on one channel."""
    return f"ntd_{notification_id}_{channel}"


def digest_workflow_id(recipient_id: str, cadence: str, window_start: datetime) -> str:
    """The workflow id of one recipient's digest of one window."""
    return f"ntdg_{recipient_id}_{cadence}_{window_start.strftime('%Y%m%dT%H%M%SZ')}"


def _send_retry(policy: SendPolicy) -> RetryPolicy:
    return RetryPolicy(
        initial_interval=timedelta(seconds=policy.retry_seconds),
        backoff_coefficient=2.0,
        maximum_interval=timedelta(minutes=30),
        maximum_attempts=policy.max_attempts,
        non_retryable_error_types=[PERMANENT_FAILURE],
    )


def _reason(error: ActivityError) -> str:
    cause = error.cause
    return str(getattr(cause, "message", None) or cause or error)[:1000]


async def _send(
    activity: str, request: DeliveryRequest | DigestRequest, failed: str, row_id: int, seconds: int
) -> SendOutcome:
    """Run a send activity with retries; when it fails for good, record why. Marks the outcome for operators."""
    try:
        outcome = await workflow.execute_activity(
            activity,
            request,
            result_type=SendOutcome,
            start_to_close_timeout=timedelta(seconds=seconds),
            heartbeat_timeout=timedelta(seconds=request.policy.heartbeat_seconds),
            retry_policy=_send_retry(request.policy),
        )
    except ActivityError as error:
        outcome = await workflow.execute_activity(
            failed,
            SendFailure(row_id, _reason(error)),
            result_type=SendOutcome,
            start_to_close_timeout=timedelta(seconds=30),
            retry_policy=_RECORD_RETRY,
        )
    workflow.upsert_search_attributes([DELIVERY_STATUS.value_set(outcome.status)])
    return outcome


@workflow.defn(name="NotificationDeliveryWorkflow")
class NotificationDeliveryWorkflow:
    """Sends one notification on one channel (e-mail or chat), retried until it is sent or fails for good."""

    @workflow.run
    async def run(self, request: DeliveryRequest) -> SendOutcome:
        return await _send("send_notification", request, "fail_notification_delivery", request.delivery_id, 120)


@workflow.defn(name="NotificationDigestWorkflow")
class NotificationDigestWorkflow:
    """Waits (a durable timer) until the window ends, then sends the recipient one e-mail for all of it."""

    @workflow.run
    async def run(self, request: DigestRequest) -> SendOutcome:
        wait = (datetime.fromisoformat(request.window_end) - workflow.now()).total_seconds()
        if wait > 0:
            await workflow.sleep(timedelta(seconds=wait))
        return await _send("send_notification_digest", request, "fail_notification_digest", request.digest_id, 300)


@dataclass
class SnoozeTimer:
    """Input of `NotificationSnoozeWorkflow` and of its wake activity; `until` is ISO 8601 UTC."""

    snooze_id: str
    notification_id: str
    until: str


@workflow.defn(name="NotificationSnoozeWorkflow")
class NotificationSnoozeWorkflow:
    """Sleeps on a durable timer until the snooze ends, then brings the notification back (unless the snooze
    was replaced or ended since: the activity then changes nothing)."""

    @workflow.run
    async def run(self, timer: SnoozeTimer) -> str:
        wait = (datetime.fromisoformat(timer.until) - workflow.now()).total_seconds()
        if wait > 0:
            await workflow.sleep(timedelta(seconds=wait))
        return await workflow.execute_activity(
            "wake_snoozed_notification",
            timer,
            result_type=str,
            start_to_close_timeout=timedelta(seconds=30),
            retry_policy=_RECORD_RETRY,
        )


CHANGES_PURGE_SCHEDULE_ID = "groundwork-purge-notification-changes"


@workflow.defn(name="PurgeNotificationChangesWorkflow")
class PurgeNotificationChangesWorkflow:
    """Deletes the live feed's changes older than its resume window; safe to run any number of times."""

    @workflow.run
    async def run(self) -> int:
        return await workflow.execute_activity(
            "purge_notification_changes",
            result_type=int,
            start_to_close_timeout=timedelta(minutes=10),
            retry_policy=RetryPolicy(maximum_attempts=5),
        )


NOTIFICATION_WORKFLOWS: list[type] = [
    NotificationDeliveryWorkflow,
    NotificationDigestWorkflow,
    NotificationSnoozeWorkflow,
    PurgeNotificationChangesWorkflow,
]
