"""`WebhookDeliveryWorkflow`: one event to one endpoint, retried on the Standard Webhooks schedule."""

from __future__ import annotations

from datetime import timedelta

from temporalio import workflow
from temporalio.common import RetryPolicy

from groundwork.workflows.search_attributes import DELIVERY_STATUS

with workflow.unsafe.imports_passed_through():
    from pydantic import BaseModel

    from groundwork.domain import webhooks as rules
    from groundwork.domain.webhooks import jittered


# An attempt that cannot even be recorded (PostgreSQL down) is retried by Temporal until it can.
_ATTEMPT_RETRY = RetryPolicy(
    initial_interval=timedelta(seconds=1), backoff_coefficient=2.0, maximum_interval=timedelta(minutes=1)
)
# Attempts run as local activities (in the workflow's own task: no activity task round trip through the
# server, about half its work per delivery); runs started before this change replay with regular ones.
LOCAL_ATTEMPTS_PATCH = "attempts-as-local-activities"
# Retries of an attempt that cannot start (PostgreSQL down, no key opens the secret) wait on a workflow
# timer once their backoff passes this: a local retry holds the workflow task open, and a worker asked
# to stop waits for every open one, so with the SDK's default (one minute) shutdown never finished.
LOCAL_RETRY_THRESHOLD = timedelta(seconds=2)


# The workflow's input and output, and its activity's: the workflow calls the activity by name.


class DeliveryPolicy(BaseModel):
    """How deliveries are attempted; carried in the workflow input so the workflow stays deterministic."""

    schedule: list[float]
    jitter: float = 0.1
    allow_private: bool = False
    disable_after_seconds: float = rules.DISABLE_AFTER_SECONDS
    timeout_seconds: float = rules.ATTEMPT_TIMEOUT_SECONDS


class DeliveryRequest(BaseModel):
    """Input of `WebhookDeliveryWorkflow`: one event to one endpoint, in one generation."""

    delivery_id: str
    generation: int
    workspace_id: str
    endpoint_id: str
    event_id: str
    event_type: str
    policy: DeliveryPolicy


class AttemptRequest(BaseModel):
    """Input of one attempt: which slot of the schedule, whether it is the last, and the next delay."""

    delivery_id: str
    generation: int
    slot: int
    final: bool
    next_delay_seconds: float | None
    policy: DeliveryPolicy


class AttemptResult(BaseModel):
    """Where the delivery stands after an attempt: `pending`, `succeeded`, `failed`, or `stale`."""

    delivery_status: str
    status_code: int | None = None
    retry_after_seconds: float | None = None
    number: int | None = None


# Outside the sandbox: re-importing this module (and rebuilding its models) for every run cost the worker
# more than the delivery itself (docs/decisions.md). Keep it a plain loop over `workflow.*` calls.
@workflow.defn(name="WebhookDeliveryWorkflow", sandboxed=False)
class WebhookDeliveryWorkflow:
    """Attempts a delivery on each slot of the schedule until a 2xx, a 410, or the last slot."""

    def __init__(self) -> None:
        self._status = "pending"
        self._attempts = 0

    @workflow.query(name="status")
    def status(self) -> str:
        """The status as this workflow sees it: `pending`, `retrying`, `succeeded`, `failed` or `stale`."""
        return self._status

    @workflow.run
    async def run(self, request: DeliveryRequest) -> AttemptResult:
        policy = request.policy
        delays = [jittered(d, policy.jitter, workflow.random().random()) for d in policy.schedule]
        result = AttemptResult(delivery_status="pending")
        wait = delays[0]
        for slot in range(len(delays)):
            if wait > 0:
                await workflow.sleep(timedelta(seconds=wait))
            final = slot == len(delays) - 1
            attempt = AttemptRequest(
                delivery_id=request.delivery_id,
                generation=request.generation,
                slot=slot,
                final=final,
                next_delay_seconds=None if final else delays[slot + 1],
                policy=policy,
            )
            timeout = timedelta(seconds=policy.timeout_seconds + 30)
            if workflow.patched(LOCAL_ATTEMPTS_PATCH):
                result = await workflow.execute_local_activity(
                    "attempt_webhook_delivery",
                    attempt,
                    result_type=AttemptResult,
                    start_to_close_timeout=timeout,
                    retry_policy=_ATTEMPT_RETRY,
                    local_retry_threshold=LOCAL_RETRY_THRESHOLD,
                )
            else:
                result = await workflow.execute_activity(
                    "attempt_webhook_delivery",
                    attempt,
                    result_type=AttemptResult,
                    start_to_close_timeout=timeout,
                    retry_policy=_ATTEMPT_RETRY,
                )
            self._attempts = slot + 1
            if result.delivery_status != "pending" or final:
                break
            self._set_status("retrying")
            wait = max(delays[slot + 1], result.retry_after_seconds or 0.0)
        # `stale`: the endpoint was deleted or a redelivery replaced this generation; nothing was sent.
        self._set_status(result.delivery_status)
        return result

    def _set_status(self, status: str) -> None:
        if status != self._status:
            self._status = status
            workflow.upsert_search_attributes([DELIVERY_STATUS.value_set(status)])
