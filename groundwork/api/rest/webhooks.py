"""REST: webhook endpoints, their secrets and deliveries, redelivery and test events."""

from __future__ import annotations

from typing import Annotated, Any

import msgspec
from litestar import Controller, Request, Response, delete, get, patch, post
from litestar.params import Parameter

from groundwork.api.documented import HTTP_URL, LIMIT, documented
from groundwork.api.rest.documents.common import created, typed
from groundwork.api.rest.documents.webhooks import (
    WebhookDeliveryDocument,
    WebhookDeliveryList,
    WebhookEndpointDocument,
    WebhookEndpointList,
)
from groundwork.domain.tenancy.principals import Principal
from groundwork.domain.times import timestamp
from groundwork.domain.webhooks import (
    DELIVERY_STATUSES,
    EVENT_TYPES,
    MAX_EVENT_TYPES,
    MAX_URL_LENGTH,
    SERVICE_PREFIXES,
    TEST_EVENT,
)
from groundwork.persistence.repositories.webhooks.deliveries import AttemptRow, DeliveryRow
from groundwork.persistence.repositories.webhooks.endpoints import EndpointRow
from groundwork.services.webhooks import endpoints as service

MANAGE = {"scope": "webhooks:manage"}
MANAGE_WRITE = {"scope": "webhooks:manage", "idempotent": True}
# The answer shows the signing secret: its idempotency record keeps it sealed.
ISSUE_SECRET = {**MANAGE_WRITE, "sealed_answer": True}


# Exact event types, or a service's wildcard (`work_item_enhancement.*`); checked by the service (422).
EndpointUrl = Annotated[str, documented(pattern=HTTP_URL, maxLength=MAX_URL_LENGTH)]
EventTypes = Annotated[
    list[str],
    documented(
        items={
            "type": "string",
            "enum": [*sorted(set(EVENT_TYPES) - {TEST_EVENT}), *(f"{p}.*" for p in SERVICE_PREFIXES)],
        },
        minItems=1,
        maxItems=MAX_EVENT_TYPES,
    ),
]


class CreateEndpointBody(msgspec.Struct, forbid_unknown_fields=True):
    url: EndpointUrl
    event_types: EventTypes
    description: str = ""


class UpdateEndpointBody(msgspec.Struct, forbid_unknown_fields=True):
    url: EndpointUrl | msgspec.UnsetType = msgspec.UNSET
    event_types: EventTypes | msgspec.UnsetType = msgspec.UNSET
    description: str | msgspec.UnsetType = msgspec.UNSET
    enabled: bool | msgspec.UnsetType = msgspec.UNSET


def _given(value: Any) -> Any:
    return None if value is msgspec.UNSET else value


def endpoint_resource(row: EndpointRow, *, secret: bool = False) -> dict[str, Any]:
    """A webhook endpoint; `secret` only in the answers to create and rotate-secret."""
    resource = {
        "id": row.id,
        "url": row.url,
        "description": row.description,
        "eventTypes": list(row.event_types),
        "enabled": row.enabled,
        "disabledReason": row.disabled_reason,
        "disabledAt": timestamp(row.disabled_at),
        "failingSince": timestamp(row.failing_since),
        "consecutiveFailures": row.consecutive_failures,
        "previousSecretExpiresAt": timestamp(row.previous_secret_expires_at),
        "createdAt": timestamp(row.created_at),
        "updatedAt": timestamp(row.updated_at),
    }
    if secret:
        resource["secret"] = row.secret
    return resource


def attempt_resource(row: AttemptRow) -> dict[str, Any]:
    """One attempt: what was answered (status, latency, the start of the body) or why nothing was."""
    return {
        "number": row.number,
        "redelivery": row.generation,
        "attemptedAt": timestamp(row.attempted_at),
        "outcome": row.outcome,
        "statusCode": row.status_code,
        "latencyMs": row.latency_ms,
        "response": {"body": row.response_body, "truncated": row.response_truncated}
        if row.response_body is not None
        else None,
        "error": row.error,
        "retryAfterSeconds": row.retry_after_seconds,
    }


def delivery_resource(row: DeliveryRow) -> dict[str, Any]:
    """A delivery of one event to one endpoint, with every attempt."""
    return {
        "id": row.id,
        "endpointId": row.endpoint_id,
        "eventId": row.event_id,
        "eventType": row.event_type,
        "status": row.status,
        "failureReason": row.failure_reason,
        "attemptCount": row.attempt_count,
        "redeliveries": row.generation,
        "lastStatusCode": row.last_status_code,
        "lastAttemptAt": timestamp(row.last_attempt_at),
        "nextAttemptAt": timestamp(row.next_attempt_at),
        "completedAt": timestamp(row.completed_at),
        "createdAt": timestamp(row.created_at),
        "updatedAt": timestamp(row.updated_at),
        "temporal": {"workflowId": row.workflow_id, "runId": row.workflow_run_id},
        "attempts": [attempt_resource(a) for a in row.attempts],
    }


def _accepted(row: DeliveryRow) -> Response[WebhookDeliveryDocument]:
    # Delivery goes on in a workflow: `Location` is the delivery, whose status and attempts `GET` shows.
    document = typed(WebhookDeliveryDocument, {"data": delivery_resource(row)})
    return Response(document, status_code=202, headers={"Location": f"/api/v1/webhook-deliveries/{row.id}"})


def _allow_private(request: Request[Principal, Any, Any]) -> bool:
    return bool(request.app.state.settings.webhook_allow_private)


class WebhookEndpointController(Controller):
    path = "/api/v1/webhook-endpoints"
    tags = ["webhooks"]

    @post("/", opt=ISSUE_SECRET, summary="Create an endpoint; the answer shows its secret, once")
    async def create_endpoint(
        self, request: Request[Principal, Any, Any], data: CreateEndpointBody
    ) -> Response[WebhookEndpointDocument]:
        row = await service.create_endpoint(
            request.user,
            service.NewEndpoint(data.url, list(data.event_types), data.description),
            allow_private=_allow_private(request),
        )
        document = typed(WebhookEndpointDocument, {"data": endpoint_resource(row, secret=True)})
        return created(document, f"/api/v1/webhook-endpoints/{row.id}")

    @get("/", opt=MANAGE, summary="List the workspace's endpoints, newest first")
    async def list_endpoints(
        self,
        request: Request[Principal, Any, Any],
        limit: int | None = LIMIT,
        cursor: str | None = None,
    ) -> WebhookEndpointList:
        rows, page = await service.list_endpoints(request.user, limit=limit, cursor=cursor)
        return typed(WebhookEndpointList, {"data": [endpoint_resource(r) for r in rows], "page": page})

    @get("/{endpoint_id:str}", opt=MANAGE, summary="Retrieve an endpoint")
    async def get_endpoint(self, request: Request[Principal, Any, Any], endpoint_id: str) -> WebhookEndpointDocument:
        row = await service.get_endpoint(request.user, endpoint_id)
        return typed(WebhookEndpointDocument, {"data": endpoint_resource(row)})

    @patch("/{endpoint_id:str}", opt=MANAGE, summary="Change url, event types, description or enabled")
    async def update_endpoint(
        self, request: Request[Principal, Any, Any], endpoint_id: str, data: UpdateEndpointBody
    ) -> WebhookEndpointDocument:
        changes = service.EndpointChanges(
            url=_given(data.url),
            event_types=_given(data.event_types),
            description=_given(data.description),
            enabled=_given(data.enabled),
        )
        row = await service.update_endpoint(request.user, endpoint_id, changes, allow_private=_allow_private(request))
        return typed(WebhookEndpointDocument, {"data": endpoint_resource(row)})

    @delete("/{endpoint_id:str}", opt=MANAGE, summary="Delete an endpoint and its delivery history")
    async def delete_endpoint(self, request: Request[Principal, Any, Any], endpoint_id: str) -> None:
        await service.delete_endpoint(request.user, endpoint_id)

    @post(
        "/{endpoint_id:str}/rotate-secret",
        opt=ISSUE_SECRET,
        status_code=200,
        summary="Issue a new secret; the old one keeps signing for 24 h",
    )
    async def rotate_secret(self, request: Request[Principal, Any, Any], endpoint_id: str) -> WebhookEndpointDocument:
        row = await service.rotate_secret(request.user, endpoint_id)
        return typed(WebhookEndpointDocument, {"data": endpoint_resource(row, secret=True)})

    @get("/{endpoint_id:str}/deliveries", opt=MANAGE, summary="Deliveries to an endpoint with their attempts")
    async def list_deliveries(
        self,
        request: Request[Principal, Any, Any],
        endpoint_id: str,
        status: str | None = Parameter(default=None, schema_extra={"enum": list(DELIVERY_STATUSES)}),
        event_type: str | None = Parameter(default=None, schema_extra={"enum": sorted(EVENT_TYPES)}),
        limit: int | None = LIMIT,
        cursor: str | None = None,
    ) -> WebhookDeliveryList:
        rows, page = await service.list_deliveries(
            request.user, endpoint_id, status=status, event_type=event_type, limit=limit, cursor=cursor
        )
        return typed(WebhookDeliveryList, {"data": [delivery_resource(r) for r in rows], "page": page})

    @post(
        "/{endpoint_id:str}/test",
        opt=MANAGE_WRITE,
        status_code=202,
        summary="Send a webhook.test event to this endpoint",
    )
    async def send_test(
        self, request: Request[Principal, Any, Any], endpoint_id: str
    ) -> Response[WebhookDeliveryDocument]:
        row = await service.send_test(request.user, endpoint_id)
        return _accepted(row)


class WebhookDeliveryController(Controller):
    path = "/api/v1/webhook-deliveries"
    tags = ["webhooks"]

    @get("/{delivery_id:str}", opt=MANAGE, summary="Retrieve a delivery with its attempts")
    async def get_delivery(self, request: Request[Principal, Any, Any], delivery_id: str) -> WebhookDeliveryDocument:
        row = await service.get_delivery(request.user, delivery_id)
        return typed(WebhookDeliveryDocument, {"data": delivery_resource(row)})

    @post(
        "/{delivery_id:str}/redeliver",
        opt=MANAGE_WRITE,
        status_code=202,
        summary="Send a finished delivery's event again (same webhook-id)",
    )
    async def redeliver(
        self, request: Request[Principal, Any, Any], delivery_id: str
    ) -> Response[WebhookDeliveryDocument]:
        row = await service.redeliver(request.user, delivery_id)
        return _accepted(row)
