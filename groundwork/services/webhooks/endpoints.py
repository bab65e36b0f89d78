"""The webhook application service: endpoints, secrets, deliveries, redelivery and test events."""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import Any

from groundwork.domain import webhooks as rules
from groundwork.domain.choices import check_choice
from groundwork.domain.errors import FieldError, GroundworkError, NotFound, ValidationFailed
from groundwork.domain.ids import new_id
from groundwork.domain.pagination import page_info, page_request
from groundwork.domain.tenancy.principals import Principal
from groundwork.domain.times import format_timestamp
from groundwork.persistence import db
from groundwork.persistence.repositories.tenancy import workspaces as tenancy
from groundwork.persistence.repositories.webhooks import attempts, deliveries, endpoints
from groundwork.persistence.repositories.webhooks.attempts import AttemptTailRow
from groundwork.persistence.repositories.webhooks.deliveries import DeliveryRow
from groundwork.persistence.repositories.webhooks.endpoints import EndpointRow
from groundwork.platform import http_targets as webhook_targets
from groundwork.platform.idempotency import request_results
from groundwork.platform.secrets.at_rest import require_keyring
from groundwork.platform.secrets.keyring import KeyRing
from groundwork.platform.temporal.client import current_connection
from groundwork.services.webhooks.deliveries import DeliveryStarter, delivery_policy
from groundwork.services.webhooks.secrets import open_webhook_secret, seal_webhook_secret

MAX_ENDPOINTS_PER_WORKSPACE = 100


class EndpointLimitReached(GroundworkError):
    """A workspace already has as many endpoints as it may."""

    status = 422
    code = "endpoint_limit_reached"
    title = "Endpoint limit reached"


class EndpointDisabled(GroundworkError):
    """Nothing is sent to a disabled endpoint; enable it first."""

    status = 409
    code = "endpoint_disabled"
    title = "Endpoint disabled"


class DeliveryInProgress(GroundworkError):
    """A delivery still being attempted cannot be redelivered yet."""

    status = 409
    code = "delivery_in_progress"
    title = "Delivery in progress"


@dataclass
class NewEndpoint:
    """What a caller supplies to create an endpoint."""

    url: str
    event_types: list[str]
    description: str = ""


@dataclass
class EndpointChanges:
    """A partial update; attributes left None stay as they are."""

    url: str | None = None
    event_types: list[str] | None = None
    description: str | None = None
    enabled: bool | None = None


async def check_url(url: str, *, allow_private: bool) -> None:
    """Refuse a target that is not http(s), or (unless allowed) is or resolves to a non-public address.

    A name that does not resolve now is accepted: every attempt checks its target again.
    """
    errors = rules.url_errors(url, allow_private=allow_private)
    if not errors and not allow_private:
        checked = await webhook_targets.check_target(url, allow_private=False)
        if isinstance(checked, webhook_targets.TargetRefused) and not checked.lookup_failed:
            errors = [
                FieldError("url", "resolves to a loopback, private or otherwise non-public address, which is refused")
            ]
    if errors:
        raise ValidationFailed("The endpoint URL is not acceptable.", errors)


def _owner(principal: Principal) -> str | None:
    """Whose endpoints the caller manages: a workspace admin all of them (None), anyone else its own."""
    return None if principal.is_admin else principal.id


def _keyring() -> KeyRing | None:
    return current_connection().settings.keyring


def _issue_secret(keyring: KeyRing, endpoint_id: str) -> tuple[str, str]:
    """A new secret, and its sealed form to store."""
    secret = rules.new_secret()
    return secret, seal_webhook_secret(keyring, endpoint_id, secret)


def _check_description(description: str) -> None:
    if len(description) > rules.MAX_DESCRIPTION_LENGTH:
        raise ValidationFailed(
            "The description is too long.",
            [FieldError("description", f"at most {rules.MAX_DESCRIPTION_LENGTH} characters")],
        )


def _check_subscription(event_types: list[str]) -> list[str]:
    errors = rules.subscription_errors(event_types)
    if errors:
        raise ValidationFailed("The event types are not valid.", errors)
    return rules.normalized_subscription(event_types)


async def create_endpoint(principal: Principal, new: NewEndpoint, *, allow_private: bool) -> EndpointRow:
    """Create an endpoint owned by the caller; the answer carries its secret, which is never shown again.

    The endpoint receives only events about what its owner may see (checked at each dispatch).
    """
    event_types = _check_subscription(new.event_types)
    _check_description(new.description)
    keyring = require_keyring(_keyring())
    await check_url(new.url, allow_private=allow_private)
    # The same request retried after its first attempt's answer was lost gets that endpoint and secret.
    earlier = await request_results.earlier_result("webhook_endpoint")
    found = await endpoints.get_endpoint(principal.workspace_id, earlier) if earlier is not None else None
    if found is not None:
        return replace(found, secret=open_webhook_secret(keyring, found.id, found.secret))
    endpoint_id = new_id("whe")
    secret, sealed = _issue_secret(keyring, endpoint_id)
    async with db.transaction():
        # Serialise creations per workspace so the limit holds under concurrency.
        await endpoints.lock_workspace_endpoints(principal.workspace_id)
        if await endpoints.count_endpoints(principal.workspace_id) >= MAX_ENDPOINTS_PER_WORKSPACE:
            raise EndpointLimitReached(f"A workspace may have at most {MAX_ENDPOINTS_PER_WORKSPACE} webhook endpoints.")
        row = await endpoints.insert_endpoint(
            endpoint_id=endpoint_id,
            workspace_id=principal.workspace_id,
            url=new.url,
            description=new.description,
            event_types=event_types,
            sealed_secret=sealed,
            created_by=principal.id,
        )
        await request_results.record_result("webhook_endpoint", endpoint_id)
    return replace(row, secret=secret)


async def get_endpoint(principal: Principal, endpoint_id: str) -> EndpointRow:
    """An endpoint the caller manages (its own, or any of the workspace for an admin); 404 for anything else."""
    endpoint = await endpoints.get_endpoint(principal.workspace_id, endpoint_id, owner_id=_owner(principal))
    if endpoint is None:
        raise NotFound("No such webhook endpoint.")
    return endpoint


async def list_endpoints(
    principal: Principal, *, limit: int | None = None, cursor: str | None = None
) -> tuple[list[EndpointRow], dict[str, Any]]:
    """The endpoints the caller manages, newest first, keyset-paginated."""
    page = page_request(limit, cursor)
    after = page.after_text()
    rows = await endpoints.list_endpoints(
        principal.workspace_id,
        owner_id=_owner(principal),
        after_id=str(after) if after is not None else None,
        limit=page.limit + 1,
    )
    return page_info(rows, page.limit, lambda row: {"id": row.id})


async def update_endpoint(
    principal: Principal, endpoint_id: str, changes: EndpointChanges, *, allow_private: bool
) -> EndpointRow:
    """Change url, event types, description or enabled; enabling clears the failure history."""
    event_types = _check_subscription(changes.event_types) if changes.event_types is not None else None
    if changes.description is not None:
        _check_description(changes.description)
    if changes.url is not None:
        await check_url(changes.url, allow_private=allow_private)
    async with db.transaction():
        current = await endpoints.get_endpoint(
            principal.workspace_id, endpoint_id, owner_id=_owner(principal), for_update=True
        )
        if current is None:
            raise NotFound("No such webhook endpoint.")
        updated = await endpoints.update_endpoint(
            endpoint_id,
            url=changes.url if changes.url is not None else current.url,
            description=changes.description if changes.description is not None else current.description,
            event_types=event_types if event_types is not None else list(current.event_types),
            enabled=changes.enabled if changes.enabled is not None else current.enabled,
        )
        if current.enabled and not updated.enabled:
            # Nothing more is sent to it: its pending deliveries end now, so each can be redelivered at once.
            await deliveries.fail_pending_deliveries(endpoint_id)
        return updated


async def delete_endpoint(principal: Principal, endpoint_id: str) -> None:
    """Delete an endpoint and its delivery history; its pending deliveries stop at their next attempt."""
    if not await endpoints.delete_endpoint(principal.workspace_id, endpoint_id, owner_id=_owner(principal)):
        raise NotFound("No such webhook endpoint.")


async def rotate_secret(principal: Principal, endpoint_id: str) -> EndpointRow:
    """Issue a new secret; the old one keeps signing alongside it for 24 h."""
    keyring = require_keyring(_keyring())
    secret, sealed = _issue_secret(keyring, endpoint_id)
    async with db.transaction():
        found = await endpoints.get_endpoint(
            principal.workspace_id, endpoint_id, owner_id=_owner(principal), for_update=True
        )
        if found is None:
            raise NotFound("No such webhook endpoint.")
        # A retry after the first attempt's answer was lost: that rotation stands, its secret is answered.
        if await request_results.earlier_result("webhook_secret_rotation") == endpoint_id:
            return replace(found, secret=open_webhook_secret(keyring, endpoint_id, found.secret))
        row = await endpoints.rotate_secret(endpoint_id, sealed, rules.ROTATION_OVERLAP_SECONDS)
        await request_results.record_result("webhook_secret_rotation", endpoint_id)
    return replace(row, secret=secret)


async def list_deliveries(
    principal: Principal,
    endpoint_id: str,
    *,
    status: str | None = None,
    event_type: str | None = None,
    limit: int | None = None,
    cursor: str | None = None,
) -> tuple[list[DeliveryRow], dict[str, Any]]:
    """Deliveries to one endpoint with their attempts, newest first."""
    page = page_request(limit, cursor)
    check_choice(status, rules.DELIVERY_STATUSES, "status")
    check_choice(event_type, sorted(rules.EVENT_TYPES), "event_type")
    await get_endpoint(principal, endpoint_id)
    after = page.after_text()
    rows = await deliveries.list_deliveries(
        endpoint_id,
        status=status,
        event_type=event_type,
        after_id=str(after) if after is not None else None,
        limit=page.limit + 1,
    )
    return page_info(rows, page.limit, lambda row: {"id": row.id})


async def get_delivery(principal: Principal, delivery_id: str) -> DeliveryRow:
    """A delivery to an endpoint the caller manages, with its attempts; 404 for anything else."""
    delivery = await deliveries.get_delivery(principal.workspace_id, delivery_id, owner_id=_owner(principal))
    if delivery is None:
        raise NotFound("No such webhook delivery.")
    return delivery


def _starter() -> DeliveryStarter:
    """Starts delivery workflows through the Temporal connection of the current request."""
    connection = current_connection()
    settings = connection.settings
    return DeliveryStarter(connection.get, settings.temporal_task_queue, delivery_policy(settings))


async def redeliver(principal: Principal, delivery_id: str) -> DeliveryRow:
    """Send a finished delivery's event to its endpoint again, same `webhook-id`, on a fresh schedule.

    Each generation has its own workflow (`..._r<n>`), so whatever still runs of an earlier one (a
    run sleeping after its endpoint was disabled, a start that failed and is left to the sweep) can
    neither block nor stand in for the new one: the old run ends without sending when it wakes.
    """
    # The same request retried after its first attempt's answer was lost: that redelivery stands.
    if await request_results.earlier_result("webhook_redelivery") == delivery_id:
        return await get_delivery(principal, delivery_id)
    async with db.transaction():
        delivery = await deliveries.lock_delivery(principal.workspace_id, delivery_id, owner_id=_owner(principal))
        if delivery is None:
            raise NotFound("No such webhook delivery.")
        if delivery.status == "pending":
            raise DeliveryInProgress(
                "This delivery is still being attempted; redeliver it once it has succeeded or failed."
            )
        if not delivery.endpoint_enabled:
            raise EndpointDisabled("The endpoint is disabled; enable it before redelivering.")
        generation = delivery.generation + 1
        workflow_id = rules.delivery_workflow_id(delivery.event_id, delivery.endpoint_id, generation)
        reopened = await deliveries.reopen_delivery(delivery_id, generation, workflow_id)
        await request_results.record_result("webhook_redelivery", delivery_id)
    # If Temporal is unreachable now, the relay's sweep starts it: the row says it is not started.
    await _starter().start([reopened])
    return await get_delivery(principal, delivery_id)


async def send_test(principal: Principal, endpoint_id: str) -> DeliveryRow:
    """Send a `webhook.test` event to one endpoint, whatever it subscribes to."""
    now = datetime.now(UTC)
    # The same request retried after its first attempt's answer was lost gets that test delivery.
    if (earlier := await request_results.earlier_result("webhook_test_delivery")) is not None:
        return await get_delivery(principal, earlier)
    async with db.transaction():
        endpoint = await endpoints.get_endpoint(
            principal.workspace_id, endpoint_id, owner_id=_owner(principal), for_update=True
        )
        if endpoint is None:
            raise NotFound("No such webhook endpoint.")
        if not endpoint.enabled:
            raise EndpointDisabled("The endpoint is disabled; enable it before sending a test event.")
        delivery = await deliveries.insert_test_delivery(
            workspace_id=principal.workspace_id,
            endpoint_id=endpoint_id,
            actor_id=principal.id,
            payload={
                "endpoint_id": endpoint_id,
                "message": "A test event from Groundwork: your endpoint is reachable.",
                "requested_at": format_timestamp(now),
            },
            occurred_at=now,
        )
        await request_results.record_result("webhook_test_delivery", delivery.id)
    await _starter().start([delivery])
    return await get_delivery(principal, delivery.id)


async def tail_start(lines: int, *, workspace_slug: str | None, endpoint_id: str | None) -> int:
    """Where `groundwork webhooks tail` starts: just before the last `lines` matching attempts."""
    if workspace_slug is not None and await tenancy.get_workspace_by_slug(workspace_slug) is None:
        raise NotFound(f"No workspace {workspace_slug!r}.")
    if lines == 0:
        return await attempts.last_attempt_id()
    return await attempts.recent_attempt_ids(lines, workspace_slug=workspace_slug, endpoint_id=endpoint_id)


async def attempts_after(
    after_id: int, *, workspace_slug: str | None, endpoint_id: str | None, limit: int = 500
) -> list[AttemptTailRow]:
    """Delivery attempts newer than `after_id`, oldest first (for operators, across workspaces)."""
    return await attempts.attempts_after(after_id, workspace_slug=workspace_slug, endpoint_id=endpoint_id, limit=limit)
