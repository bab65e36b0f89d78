"""A principal's channel and delivery preferences: in-app always, e-mail and chat per event type."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from groundwork.domain.errors import FieldError, ValidationFailed
from groundwork.domain.notifications.inbox import NOTIFYING_EVENT_TYPES
from groundwork.domain.webhooks import url_errors

DIGESTS = ("immediate", "hourly", "daily")
CHANNELS = ("email", "chat")
MAX_ADDRESS = 254
_ADDRESS = re.compile(r"^[^@\s<>\"',;]+@[^@\s<>\"',;]+\.[^@\s<>\"',;.]+$")


@dataclass(frozen=True)
class Preferences:
    """What a principal chose; absent choices are the defaults (e-mail and chat off, every event on)."""

    email_enabled: bool = False
    email_address: str | None = None
    email_digest: str = "immediate"
    chat_enabled: bool = False
    chat_webhook_url: str | None = None
    # event type -> {"email": bool, "chat": bool}; an absent entry or channel means "on".
    events: dict[str, dict[str, bool]] = field(default_factory=dict)

    def wants(self, event_type: str, channel: str) -> bool:
        """Whether `channel` should carry notifications of `event_type` (in-app always does)."""
        if channel == "in_app":
            return True
        if channel == "email":
            enabled = self.email_enabled and bool(self.email_address)
        elif channel == "chat":
            enabled = self.chat_enabled and bool(self.chat_webhook_url)
        else:
            return False
        return enabled and self.events.get(event_type, {}).get(channel, True)

    def document(self) -> dict[str, Any]:
        """The wire form of DESIGN.md, with the effective choice for every event type."""
        return {
            "channels": {
                "in_app": {"enabled": True},
                "email": {"enabled": self.email_enabled, "address": self.email_address, "digest": self.email_digest},
                "chat": {"enabled": self.chat_enabled, "webhook_url": self.chat_webhook_url},
            },
            "events": {
                name: {channel: self.events.get(name, {}).get(channel, True) for channel in CHANNELS}
                for name in NOTIFYING_EVENT_TYPES
            },
        }


def _object(value: Any, path: str, errors: list[FieldError]) -> dict[str, Any]:
    if value is None:
        return {}
    if not isinstance(value, dict):
        errors.append(FieldError(path, "must be an object"))
        return {}
    return value


def _unknown(value: dict[str, Any], allowed: tuple[str, ...], path: str, errors: list[FieldError]) -> None:
    errors.extend(FieldError(f"{path}.{k}", "unknown field") for k in value if k not in allowed)


def _bool(value: Any, default: bool, path: str, errors: list[FieldError]) -> bool:
    if value is None:
        return default
    if not isinstance(value, bool):
        errors.append(FieldError(path, "must be true or false"))
        return default
    return value


def parse_preferences(body: Any, *, allow_private: bool) -> Preferences:
    """Validate a whole preferences document (PUT replaces); every problem is reported with its path."""
    errors: list[FieldError] = []
    document = _object(body, "body", errors)
    _unknown(document, ("channels", "events"), "body", errors)
    channels = _object(document.get("channels"), "channels", errors)
    _unknown(channels, ("in_app", "email", "chat"), "channels", errors)

    in_app = _object(channels.get("in_app"), "channels.in_app", errors)
    _unknown(in_app, ("enabled",), "channels.in_app", errors)
    if in_app.get("enabled") is not None and in_app.get("enabled") is not True:
        errors.append(FieldError("channels.in_app.enabled", "in-app notifications cannot be turned off"))

    email = _object(channels.get("email"), "channels.email", errors)
    _unknown(email, ("enabled", "address", "digest"), "channels.email", errors)
    email_enabled = _bool(email.get("enabled"), False, "channels.email.enabled", errors)
    address = email.get("address")
    if address is not None and (
        not isinstance(address, str) or len(address) > MAX_ADDRESS or not _ADDRESS.match(address)
    ):
        errors.append(FieldError("channels.email.address", "must be an e-mail address"))
        address = None
    if email_enabled and not address:
        errors.append(FieldError("channels.email.address", "is required when e-mail is enabled"))
    digest = email.get("digest", "immediate")
    if digest not in DIGESTS:
        errors.append(FieldError("channels.email.digest", f"must be one of {', '.join(DIGESTS)}"))
        digest = "immediate"

    chat = _object(channels.get("chat"), "channels.chat", errors)
    _unknown(chat, ("enabled", "webhook_url"), "channels.chat", errors)
    chat_enabled = _bool(chat.get("enabled"), False, "channels.chat.enabled", errors)
    url = chat.get("webhook_url")
    if url is not None:
        if not isinstance(url, str):
            errors.append(FieldError("channels.chat.webhook_url", "must be a URL"))
            url = None
        else:
            problems = url_errors(url, allow_private=allow_private, path="channels.chat.webhook_url")
            errors.extend(problems)
            url = None if problems else url
    if chat_enabled and not url:
        errors.append(FieldError("channels.chat.webhook_url", "is required when chat is enabled"))

    events: dict[str, dict[str, bool]] = {}
    for name, choice in _object(document.get("events"), "events", errors).items():
        path = f"events.{name}"
        if name not in NOTIFYING_EVENT_TYPES:
            errors.append(FieldError(path, f"unknown event type; one of {', '.join(NOTIFYING_EVENT_TYPES)}"))
            continue
        choice = _object(choice, path, errors)
        _unknown(choice, CHANNELS, path, errors)
        events[name] = {c: _bool(choice[c], True, f"{path}.{c}", errors) for c in CHANNELS if c in choice}
    if errors:
        raise ValidationFailed("Invalid preferences.", errors)
    return Preferences(
        email_enabled=email_enabled,
        email_address=address,
        email_digest=str(digest),
        chat_enabled=chat_enabled,
        chat_webhook_url=url,
        events=events,
    )
