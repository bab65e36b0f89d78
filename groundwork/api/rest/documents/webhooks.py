"""REST answers of webhook endpoints and deliveries."""

from __future__ import annotations

import msgspec
from msgspec import UNSET, UnsetType

from groundwork.api.rest.documents.common import Page, Resource, Timestamp


class WebhookEndpoint(Resource, kw_only=True):
    """A webhook endpoint; `secret` only in the answers to create and rotate-secret."""

    id: str
    url: str
    description: str | None
    event_types: list[str]
    enabled: bool
    disabled_reason: str | None
    disabled_at: Timestamp | None
    failing_since: Timestamp | None
    consecutive_failures: int
    previous_secret_expires_at: Timestamp | None
    created_at: Timestamp | None
    updated_at: Timestamp | None
    secret: str | UnsetType = UNSET


class AttemptResponse(Resource, kw_only=True):
    """The start of the body an endpoint answered."""

    body: str
    truncated: bool


class DeliveryAttempt(Resource, kw_only=True):
    """One attempt: what was answered (status, latency, the start of the body) or why nothing was."""

    number: int
    redelivery: int
    attempted_at: Timestamp | None
    outcome: str
    status_code: int | None
    latency_ms: float | None
    response: AttemptResponse | None
    error: str | None
    retry_after_seconds: float | None


class DeliveryWorkflow(Resource, kw_only=True):
    """The Temporal workflow that delivers."""

    workflow_id: str | None
    run_id: str | None


class WebhookDelivery(Resource, kw_only=True):
    """A delivery of one event to one endpoint, with every attempt."""

    id: str
    endpoint_id: str
    event_id: str
    event_type: str
    status: str
    failure_reason: str | None
    attempt_count: int
    redeliveries: int
    last_status_code: int | None
    last_attempt_at: Timestamp | None
    next_attempt_at: Timestamp | None
    completed_at: Timestamp | None
    created_at: Timestamp | None
    updated_at: Timestamp | None
    temporal: DeliveryWorkflow
    attempts: list[DeliveryAttempt]


class WebhookEndpointDocument(msgspec.Struct):
    """One webhook endpoint."""

    data: WebhookEndpoint


class WebhookEndpointList(msgspec.Struct):
    """A page of webhook endpoints, newest first."""

    data: list[WebhookEndpoint]
    page: Page


class WebhookDeliveryDocument(msgspec.Struct):
    """One webhook delivery."""

    data: WebhookDelivery


class WebhookDeliveryList(msgspec.Struct):
    """A page of an endpoint's deliveries."""

    data: list[WebhookDelivery]
    page: Page
