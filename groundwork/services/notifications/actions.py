"""Action links: signed, single-use, expiring links in e-mail and chat that acknowledge as the recipient.

A link's token is `<payload>.<signature>`, both URL-safe base64: the payload names the link, the
notification, its recipient, the version the message showed, the channel and the expiry; the
signature is HMAC-SHA256 under the `GROUNDWORK_SECRET_KEY` ring (the first key signs, any key
verifies, so keys rotate). Redeeming runs the same `change_notification` command as every other
door, with `via` e-mail or chat and the version the link carries (a notification that moved since
the message was sent is a 409, as the sink's declared conflict behaviour is to reject): an unread
notification is read first (clicking is reading), then acknowledged, each move audited. A sink may
acknowledge, never dismiss. The link is taken in the same transaction, so it works once.
"""

from __future__ import annotations

import base64
import binascii
import json
import secrets
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from groundwork.domain.errors import GroundworkError, NotFound
from groundwork.domain.notifications.inbox import SCOPE_OPERATE, SCOPE_READ, SINK_VIA
from groundwork.domain.tenancy.principals import Principal
from groundwork.persistence import db
from groundwork.persistence.repositories.notifications import action_links
from groundwork.persistence.repositories.notifications import inbox as repo
from groundwork.persistence.repositories.notifications.inbox import NotificationRow
from groundwork.persistence.repositories.tenancy import workspaces as tenancy
from groundwork.platform.secrets.keyring import KeyRing
from groundwork.services.notifications.inbox import CommandResult, change_notification

PURPOSE = "notification-action-link"
LINK_LIFETIME = timedelta(days=7)
ACTION_PATH = "/api/v1/notification-actions/"
# Statuses a link can still acknowledge from (read first when unread).
_ACKNOWLEDGEABLE = ("unread", "read")


class ActionLinkExpired(GroundworkError):
    status = 410
    code = "action_link_expired"
    title = "Action link expired"


class ActionLinkUsed(GroundworkError):
    status = 410
    code = "action_link_used"
    title = "Action link already used"


@dataclass(frozen=True)
class ActionLink:
    """A verified link: which notification, whose, at which version, through which sink, until when."""

    link_id: str
    notification_id: str
    recipient_id: str
    version: int
    channel: str
    expires_at: datetime


def _b64(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def issue_token(
    keyring: KeyRing, *, notification_id: str, recipient_id: str, version: int, channel: str, now: datetime
) -> str:
    """A signed token for one acknowledge through `channel` (`email` or `chat`), valid for 7 days."""
    if channel not in SINK_VIA:
        raise ValueError(channel)
    payload = {
        "l": _b64(secrets.token_bytes(12)),
        "n": notification_id,
        "r": recipient_id,
        "v": version,
        "c": channel,
        "e": int((now + LINK_LIFETIME).timestamp()),
    }
    body = _b64(json.dumps(payload, separators=(",", ":"), sort_keys=True).encode())
    return f"{body}.{_b64(keyring.sign(PURPOSE, body.encode()))}"


def action_url(public_url: str, token: str) -> str:
    """Where a link points: the API's public address."""
    return public_url.rstrip("/") + ACTION_PATH + token


def link_for(
    keyring: KeyRing | None,
    public_url: str,
    *,
    notification_id: str,
    recipient_id: str,
    status: str,
    version: int,
    channel: str,
    now: datetime,
) -> str | None:
    """The acknowledge link to put in a message about a notification at `status` and `version`, or None when it
    could not be used."""
    if keyring is None or status not in _ACKNOWLEDGEABLE:
        return None
    token = issue_token(
        keyring, notification_id=notification_id, recipient_id=recipient_id, version=version, channel=channel, now=now
    )
    return action_url(public_url, token)


def verify_token(keyring: KeyRing | None, token: str) -> ActionLink:
    """The link a token names if its signature holds (404 otherwise: a forged link finds nothing)."""
    unknown = NotFound("No such action link.")
    if keyring is None or len(token) > 1024 or token.count(".") != 1:
        raise unknown
    body, signature = token.split(".")
    try:
        if not keyring.verify(PURPOSE, body.encode(), _unb64(signature)):
            raise unknown
        payload = json.loads(_unb64(body))
        return ActionLink(
            link_id=str(payload["l"]),
            notification_id=str(payload["n"]),
            recipient_id=str(payload["r"]),
            version=int(payload["v"]),
            channel=str(payload["c"]),
            expires_at=datetime.fromtimestamp(int(payload["e"]), UTC),
        )
    except (ValueError, KeyError, TypeError, binascii.Error, UnicodeDecodeError):
        raise unknown from None


def _unexpired(keyring: KeyRing | None, token: str, now: datetime | None) -> ActionLink:
    link = verify_token(keyring, token)
    if (now or datetime.now(UTC)) >= link.expires_at:
        raise ActionLinkExpired("This action link has expired; open the notification in Groundwork instead.")
    return link


async def describe(keyring: KeyRing | None, token: str) -> tuple[ActionLink, NotificationRow]:
    """A usable link and the notification it acts on (for the confirmation page); changes nothing."""
    link = _unexpired(keyring, token, None)
    notification = await repo.get_notification(link.recipient_id, link.notification_id)
    if notification is None:
        raise NotFound("No such action link.")
    if await action_links.action_link_used(link.link_id):
        raise ActionLinkUsed("This action link was already used.")
    return link, notification


async def redeem(keyring: KeyRing | None, token: str, now: datetime | None = None) -> CommandResult:
    """Acknowledge as the link's recipient, once, before it expires (read first when still unread)."""
    link = _unexpired(keyring, token, now)
    async with db.transaction():
        row = await tenancy.get_principal(link.recipient_id)
        current = await repo.get_notification(link.recipient_id, link.notification_id)
        if row is None or current is None:
            raise NotFound("No such action link.")
        if not await action_links.claim_action_link(link.link_id, link.notification_id, link.expires_at):
            raise ActionLinkUsed("This action link was already used.")
        current = await repo.get_notification(link.recipient_id, link.notification_id)
        recipient = Principal(
            id=row.id,
            workspace_id=row.workspace_id,
            name=row.name,
            kind=row.kind,
            is_admin=row.is_admin,
            api_key_id="",
            scopes=frozenset({SCOPE_READ, SCOPE_OPERATE}),
        )
        version = link.version
        if current is not None and current.status == "unread" and current.version == version:
            version = (
                await change_notification(
                    recipient, link.notification_id, "read", expected_version=version, via=link.channel
                )
            ).version
        result = await change_notification(
            recipient,
            link.notification_id,
            "acknowledge",
            expected_version=version,
            reason=f"acknowledged from the {link.channel} action link",
            confirm=True,
            via=link.channel,
        )
        await action_links.record_action_link_operation(link.link_id, result.operation_id)
    return result
