"""Webhook rules: event catalogue, subscriptions, target URLs, the v1 envelope, signing, schedule."""

from __future__ import annotations

import base64
import hashlib
import hmac
import ipaddress
import json
import math
import re
import secrets
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from typing import Any
from urllib.parse import urlsplit

from groundwork.domain.errors import FieldError
from groundwork.domain.times import format_timestamp


@dataclass(frozen=True)
class EventType:
    """One event type of the catalogue: its resource type, payload fields and when it is emitted."""

    name: str
    resource_type: str
    payload_fields: tuple[str, ...]
    emitted_when: str


TEST_EVENT = "webhook.test"

# Every event of the three specs, as they name them. `webhook.test` is sent only on request, to one endpoint.
EVENT_TYPES: dict[str, EventType] = {
    e.name: e
    for e in (
        EventType(
            "work_item_enhancement.queued",
            "work_item_enhancement_run",
            ("run_id", "target_type", "target_id", "requested_actions", "queued_at"),
            "a run is accepted and queued",
        ),
        EventType(
            "work_item_enhancement.action_completed",
            "work_item_enhancement_run",
            ("run_id", "action", "draft_ids", "artifact_ids", "completed_at"),
            "one action completed and produced drafts or artifacts",
        ),
        EventType(
            "work_item_enhancement.draft_created",
            "work_item_enhancement_run",
            ("run_id", "draft_id", "field", "target_id", "created_at"),
            "a field-level draft is created for review",
        ),
        EventType(
            "work_item_enhancement.completed",
            "work_item_enhancement_run",
            ("run_id", "target_id", "draft_count", "artifact_count", "completed_at"),
            "the run finished and is ready for review",
        ),
        EventType(
            "work_item_enhancement.applied",
            "work_item_enhancement_run",
            ("run_id", "target_id", "applied_draft_ids", "target_version", "applied_at"),
            "selected drafts were applied to the work item",
        ),
        EventType(
            "work_item_enhancement.draft_rejected",
            "work_item_enhancement_run",
            ("run_id", "draft_id", "action", "field", "target_id", "reason", "rejected_by", "rejected_at"),
            "a reviewer rejected a draft; it is never applied",
        ),
        EventType(
            "work_item_enhancement.failed",
            "work_item_enhancement_run",
            ("run_id", "action", "error_code", "failed_at"),
            "the run or an action failed with a durable error code",
        ),
        EventType(
            "context_engine.contribution_persisted",
            "context_engine_evolution",
            ("subject_id", "related_entry_id", "evolution_kind", "occurred_at"),
            "a governed provider contribution is persisted",
        ),
        EventType(
            "context_engine.merge_decided",
            "context_engine_evolution",
            ("subject_id", "related_entry_id", "evolution_kind", "occurred_at"),
            "a governed overlap or merge decision is committed",
        ),
        EventType(
            "context_engine.entry_superseded",
            "context_engine_evolution",
            ("subject_id", "related_entry_id", "evolution_kind", "occurred_at"),
            "an entry is superseded by a governed successor",
        ),
        EventType(
            "notification.created",
            "notification",
            ("notification_id", "status", "created_at"),
            "a notification was created",
        ),
        EventType(
            "notification.updated",
            "notification",
            ("notification_id", "changed_fields", "version", "occurred_at"),
            "governed fields of a notification changed",
        ),
        EventType(
            "notification.acknowledged",
            "notification",
            ("notification_id", "prior_status", "status", "occurred_at"),
            "the acknowledge command completed",
        ),
        EventType(
            TEST_EVENT,
            "webhook_endpoint",
            ("endpoint_id", "message", "requested_at"),
            "a caller asked for a test delivery to one endpoint (`POST .../{id}/test`)",
        ),
    )
}

# A subscription names exact types or `<service>.*` for every event of one service.
SERVICE_PREFIXES: tuple[str, ...] = ("work_item_enhancement", "context_engine", "notification")

MAX_URL_LENGTH = 2048
MAX_EVENT_TYPES = 50
MAX_DESCRIPTION_LENGTH = 500
SECRET_PREFIX = "whsec_"
SECRET_BYTES = 24
# The Standard Webhooks schedule: delays before attempts 1..10, in seconds.
STANDARD_SCHEDULE: tuple[float, ...] = (0, 5, 300, 1800, 7200, 18000, 36000, 50400, 72000, 86400)
MAX_SCHEDULE_LENGTH = 20
MAX_RETRY_AFTER_SECONDS = 86400.0
ROTATION_OVERLAP_SECONDS = 24 * 3600
DISABLE_AFTER_SECONDS = 5 * 24 * 3600.0
ATTEMPT_TIMEOUT_SECONDS = 15.0
RESPONSE_EXCERPT_CHARS = 1000
DISABLED_REASONS = ("manual", "gone", "failing")
DELIVERY_STATUSES = ("pending", "succeeded", "failed")
FAILURE_REASONS = ("exhausted", "endpoint_gone", "endpoint_disabled")


def subscription_errors(event_types: list[str], path: str = "event_types") -> list[FieldError]:
    """What is wrong with a list of subscribed event types (exact types or `<service>.*`)."""
    if not event_types:
        return [FieldError(path, "subscribe to at least one event type")]
    if len(event_types) > MAX_EVENT_TYPES:
        return [FieldError(path, f"at most {MAX_EVENT_TYPES} entries")]
    errors = []
    for index, name in enumerate(event_types):
        if name == TEST_EVENT:
            errors.append(FieldError(f"{path}[{index}]", "webhook.test is sent on request to one endpoint"))
        elif name not in EVENT_TYPES and not (name.endswith(".*") and name.removesuffix(".*") in SERVICE_PREFIXES):
            known = ", ".join(f"{p}.*" for p in SERVICE_PREFIXES)
            errors.append(
                FieldError(f"{path}[{index}]", f"unknown event type {name!r}; use an exact type or one of {known}")
            )
    return errors


def normalized_subscription(event_types: list[str]) -> list[str]:
    """The subscription without duplicates, in the caller's order."""
    return list(dict.fromkeys(event_types))


def subscribes(event_types: list[str] | tuple[str, ...], event_type: str) -> bool:
    """Whether a subscription covers `event_type`."""
    service = event_type.split(".", 1)[0]
    return event_type in event_types or f"{service}.*" in event_types


def required_permission(event_type: str) -> str:
    """The project permission that reading an event's resource through the API needs."""
    return "context:read" if event_type.startswith("context_engine.") else "project:read"


@dataclass(frozen=True)
class EndpointOwner:
    """Who an endpoint belongs to, as far as seeing events goes, at dispatch time."""

    principal_id: str | None
    is_admin: bool
    # Project id → the permissions the owner's role grants there (projects it is not a member of: absent).
    permissions: Mapping[str, frozenset[str]] = field(default_factory=dict)


def endpoint_may_receive(
    owner: EndpointOwner, *, event_type: str, project_id: str | None, private_to: str | None
) -> bool:
    """Whether an endpoint's owner may see what an event is about, so the endpoint may receive it.

    A personal event (a notification) reaches only its owner's endpoints, a workspace admin's
    included; an admin sees every project; anyone else needs the event type's permission on the
    event's project; an event about no project is for admins only.
    """
    if private_to is not None:
        return owner.principal_id == private_to
    if owner.is_admin:
        return True
    if project_id is None:
        return False
    return required_permission(event_type) in owner.permissions.get(project_id, frozenset())


_CGNAT = ipaddress.ip_network("100.64.0.0/10")
# NAT64: the well-known prefix (RFC 6052) embeds the IPv4 address in its last 32 bits; the local-use
# prefix (RFC 8215) translates for one network only, so it is never a public host.
_NAT64_WELL_KNOWN = ipaddress.ip_network("64:ff9b::/96")
_NAT64_LOCAL_USE = ipaddress.ip_network("64:ff9b:1::/48")


def _embedded_ipv4(ip: ipaddress.IPv6Address) -> list[ipaddress.IPv4Address] | None:
    """The IPv4 addresses an IPv6 address stands for (mapped, 6to4, Teredo, NAT64), or None if it wraps none."""
    if ip.ipv4_mapped is not None:
        return [ip.ipv4_mapped]
    if ip.sixtofour is not None:
        return [ip.sixtofour]
    if ip.teredo is not None:
        return list(ip.teredo)  # the Teredo server and the (de-obfuscated) client
    if ip in _NAT64_WELL_KNOWN:
        return [ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF)]
    return None


def _is_refused_ip(ip: ipaddress.IPv4Address | ipaddress.IPv6Address) -> bool:
    return bool(
        ip.is_private
        or ip.is_loopback
        or ip.is_link_local
        or ip.is_multicast
        or ip.is_reserved
        or ip.is_unspecified
        or not ip.is_global
        or (isinstance(ip, ipaddress.IPv4Address) and ip in _CGNAT)
        or (isinstance(ip, ipaddress.IPv6Address) and ip.is_site_local)
    )


def is_private_address(address: str) -> bool:
    """Whether an IP address may not be a webhook target: anything but a public unicast host.

    Refused: loopback, RFC 1918, link-local, CGNAT (100.64.0.0/10), unique-local and site-local,
    multicast, reserved, unspecified and every other non-global range; IPv4-compatible IPv6 (deprecated)
    and local-use NAT64 always; IPv4-mapped, 6to4, Teredo and well-known NAT64 addresses whenever an
    IPv4 address they wrap is refused.
    """
    ip = ipaddress.ip_address(address.split("%", 1)[0])
    if isinstance(ip, ipaddress.IPv6Address):
        if ip in _NAT64_LOCAL_USE:
            return True
        if int(ip) >> 32 == 0 and int(ip) > 1:  # ::a.b.c.d, IPv4-compatible
            return True
        wrapped = _embedded_ipv4(ip)
        if wrapped is not None:
            # The wrapper's own range says little (6to4 and NAT64 look global): judge what it reaches.
            return any(_is_refused_ip(v4) for v4 in wrapped)
    return _is_refused_ip(ip)


def url_errors(url: str, *, allow_private: bool, path: str = "url") -> list[FieldError]:
    """What is wrong with a target URL, judged from its text (the service also resolves its host)."""
    if len(url) > MAX_URL_LENGTH:
        return [FieldError(path, f"at most {MAX_URL_LENGTH} characters")]
    if any(c.isspace() or ord(c) < 0x20 for c in url):
        return [FieldError(path, "must not contain whitespace or control characters")]
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError as exc:
        return [FieldError(path, f"is not a valid URL: {exc}")]
    if parts.scheme not in ("http", "https"):
        return [FieldError(path, "must be an http or https URL")]
    host = parts.hostname
    if not host:
        return [FieldError(path, "must name a host")]
    if parts.username is not None or parts.password is not None:
        return [FieldError(path, "must not carry credentials; receivers verify the signature instead")]
    if parts.fragment:
        return [FieldError(path, "must not have a fragment")]
    if port == 0:
        return [FieldError(path, "port 0 is not a valid port")]
    if not is_ip_literal(host):
        try:
            host.encode("idna")  # what the resolver and the HTTP client will do with it
        except UnicodeError:
            return [FieldError(path, "has a host name that is not a valid DNS name")]
    if allow_private:
        return []
    if host == "localhost" or host.endswith((".localhost", ".local", ".internal")):
        return [FieldError(path, "loopback and private hosts are refused")]
    try:
        literal = ipaddress.ip_address(host)
    except ValueError:
        return []
    if is_private_address(str(literal)):
        return [FieldError(path, "loopback, private and link-local addresses are refused")]
    return []


def is_ip_literal(host: str) -> bool:
    """Whether a URL host is an IP address rather than a name."""
    try:
        ipaddress.ip_address(host)
    except ValueError:
        return False
    return True


def new_secret() -> str:
    """A fresh signing secret, `whsec_` followed by base64 of 24 random bytes."""
    return SECRET_PREFIX + base64.b64encode(secrets.token_bytes(SECRET_BYTES)).decode()


def secret_key(secret: str) -> bytes:
    """The HMAC key a `whsec_` secret stands for."""
    return base64.b64decode(secret.removeprefix(SECRET_PREFIX))


def signature(secret: str, message_id: str, timestamp: int, body: bytes) -> str:
    """`v1,<base64 HMAC-SHA256>` over `id.timestamp.body`, as Standard Webhooks defines it."""
    signed = f"{message_id}.{timestamp}.".encode() + body
    digest = hmac.new(secret_key(secret), signed, hashlib.sha256).digest()
    return "v1," + base64.b64encode(digest).decode()


def signature_header(secrets_in_use: list[str], message_id: str, timestamp: int, body: bytes) -> str:
    """The `webhook-signature` value: one signature per live secret, space-separated, newest first."""
    return " ".join(signature(s, message_id, timestamp, body) for s in secrets_in_use)


def delivery_workflow_id(event_id: str, endpoint_id: str, generation: int = 0) -> str:
    """The workflow id of one event to one endpoint, `whd_<event>_<endpoint>`; redelivery n adds `_r<n>`."""
    base = f"whd_{event_id}_{endpoint_id}"
    return base if generation == 0 else f"{base}_r{generation}"


def envelope(
    *,
    event_id: str,
    type: str,
    event_version: int,
    occurred_at: datetime,
    workspace_id: str,
    resource_type: str,
    resource_id: str,
    actor_id: str | None,
    payload: dict[str, Any],
    source: dict[str, Any] | None,
) -> dict[str, Any]:
    """The v1 envelope of DESIGN.md for one event."""
    return {
        "event_id": event_id,
        "type": type,
        "event_version": event_version,
        "occurred_at": format_timestamp(occurred_at),
        "workspace_id": workspace_id,
        "resource": {"type": resource_type, "id": resource_id},
        "actor": {"id": actor_id},
        "payload": payload,
        "source": source,
    }


def envelope_body(event: dict[str, Any]) -> bytes:
    """The exact bytes sent and signed: compact UTF-8 JSON in envelope order, the same on every attempt."""
    return json.dumps(event, separators=(",", ":"), ensure_ascii=False).encode()


def parse_schedule(text: str | None) -> tuple[float, ...]:
    """A schedule from `GROUNDWORK_WEBHOOK_SCHEDULE` (comma-separated seconds); the standard one if unset."""
    if text is None or not text.strip():
        return STANDARD_SCHEDULE
    try:
        delays = tuple(float(part) for part in text.split(","))
    except ValueError:
        raise ValueError(f"not a list of seconds: {text!r}") from None
    if not 1 <= len(delays) <= MAX_SCHEDULE_LENGTH:
        raise ValueError(f"between 1 and {MAX_SCHEDULE_LENGTH} delays")
    if any(not math.isfinite(d) or d < 0 for d in delays):
        raise ValueError("delays must be finite and not negative")
    return delays


def jittered(delay: float, jitter: float, unit: float) -> float:
    """`delay` stretched by up to `jitter` (a fraction) by `unit` in [0, 1): never earlier than scheduled."""
    return delay * (1.0 + jitter * unit)


def retry_after_seconds(value: str | None, now: datetime) -> float | None:
    """Seconds a `Retry-After` asks for (delta-seconds or HTTP-date), capped at 24 h; None if absent/bad."""
    if not value:
        return None
    value = value.strip()
    seconds: float
    # ASCII digits only: str.isdigit() also accepts "²", which float() refuses.
    if re.fullmatch(r"[0-9]{1,12}", value):
        seconds = float(value)
    else:
        try:
            when = parsedate_to_datetime(value)
            if when.tzinfo is None:
                when = when.replace(tzinfo=UTC)
            seconds = (when - now).total_seconds()
        except (TypeError, ValueError, IndexError, OverflowError):
            return None
    return min(max(seconds, 0.0), MAX_RETRY_AFTER_SECONDS)


def honours_retry_after(status_code: int | None) -> bool:
    """Whether the receiver's `Retry-After` sets the next attempt (429 and 503 only)."""
    return status_code in (429, 503)


def is_success(status_code: int | None) -> bool:
    """Only a 2xx answer delivers."""
    return status_code is not None and 200 <= status_code < 300


def delivery_status_after(*, current: str, succeeded: bool, gone: bool, final: bool) -> tuple[str, str | None]:
    """A delivery's (status, failure reason) after an attempt; a finished delivery stays as it is."""
    if current != "pending":
        return current, None
    if succeeded:
        return "succeeded", None
    if gone:
        return "failed", "endpoint_gone"
    if final:
        return "failed", "exhausted"
    return "pending", None


def disable_reason_after_failure(
    *,
    enabled: bool,
    gone: bool,
    failing_since: datetime,
    attempted_at: datetime,
    disable_after_seconds: float,
) -> str | None:
    """Why a failed attempt disables its endpoint now (410 `gone`, or `failing` for too long), if it does."""
    if not enabled:
        return None
    if gone:
        return "gone"
    if (attempted_at - failing_since).total_seconds() >= disable_after_seconds:
        return "failing"
    return None
