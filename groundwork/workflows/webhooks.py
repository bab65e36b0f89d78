"""`WebhookDeliveryWorkflow`: one event to one endpoint, retried on the Standard Webhooks schedule."""

from __future__ import annotations

from datetime import timedelta

from temporalio import workflow
from temporalio.common import RetryPolicy, SearchAttributeKey

with workflow.unsafe.imports_passed_through():
    from groundwork.activities.webhooks import (
        AttemptRequest,
        AttemptResult,
        DeliveryRequest,
        attempt_webhook_delivery,
    )
    from groundwork.domain.webhooks import jittered

ENDPOINT_ATTRIBUTE = SearchAttributeKey.for_keyword("GroundworkEndpoint")
EVENT_TYPE_ATTRIBUTE = SearchAttributeKey.for_keyword("GroundworkEventType")
STATUS_ATTRIBUTE = SearchAttributeKey.for_keyword("GroundworkDeliveryStatus")
WORKSPACE_ATTRIBUTE = SearchAttributeKey.for_keyword("GroundworkWorkspace")

# An attempt that cannot even be recorded (PostgreSQL down) is retried by Temporal until it can.
_ATTEMPT_RETRY = RetryPolicy(
    initial_interval=timedelta(seconds=1), backoff_coefficient=2.0, maximum_interval=timedelta(minutes=1)
)


@workflow.defn(name="WebhookDeliveryWorkflow")
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
            result = await workflow.execute_activity(
                attempt_webhook_delivery,
                AttemptRequest(
                    delivery_id=request.delivery_id,
                    generation=request.generation,
                    slot=slot,
                    final=final,
                    next_delay_seconds=None if final else delays[slot + 1],
                    policy=policy,
                ),
                start_to_close_timeout=timedelta(seconds=policy.timeout_seconds + 30),
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
            workflow.upsert_search_attributes([STATUS_ATTRIBUTE.value_set(status)])
