"""View links: the signed, expiring address of a read-only page of one notification, behind an e-mail's "View".

The token names the notification, its recipient and the expiry (7 days, as action links), signed for
this purpose only: it opens that one page and nothing else (not the API, not another notification, not
an action). Opening it changes nothing, however often (mail scanners prefetch links). The page shows
the notification as it is now, and its actions as fresh action links (`actions.py`): the recipient acts
through them, once each, never through the view link itself.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from groundwork.domain.errors import NotFound
from groundwork.persistence.repositories.notifications import inbox as repo
from groundwork.persistence.repositories.notifications.inbox import NotificationRow
from groundwork.platform.secrets.keyring import KeyRing
from groundwork.services.notifications.actions import LINK_LIFETIME, ActionLinkExpired, link_for
from groundwork.services.notifications.signed_tokens import read_token, sign_token

PURPOSE = "notification-view-link"
VIEW_LIFETIME = LINK_LIFETIME
VIEW_PATH = "/api/v1/notification-views/"


class ViewLinkExpired(ActionLinkExpired):
    code = "view_link_expired"
    title = "View link expired"


@dataclass(frozen=True)
class NotificationView:
    """What the page shows: the notification now, until when the link works, and its actions' links."""

    notification: NotificationRow
    expires_at: datetime
    acknowledge_url: str | None


def view_url(keyring: KeyRing, public_url: str, *, notification_id: str, recipient_id: str, now: datetime) -> str:
    """The view link of a notification for its recipient, valid for 7 days."""
    payload = {"n": notification_id, "r": recipient_id, "e": int((now + VIEW_LIFETIME).timestamp())}
    return public_url.rstrip("/") + VIEW_PATH + sign_token(keyring, PURPOSE, payload)


def _link(keyring: KeyRing | None, token: str) -> tuple[str, str, datetime]:
    payload = read_token(keyring, PURPOSE, token)
    try:
        if payload is None:
            raise ValueError(token)
        return str(payload["n"]), str(payload["r"]), datetime.fromtimestamp(int(payload["e"]), UTC)
    except (ValueError, KeyError, TypeError, OverflowError, OSError):
        raise NotFound("No such page.") from None


async def view(keyring: KeyRing | None, public_url: str, token: str, now: datetime | None = None) -> NotificationView:
    """The notification a view link shows (404 forged, 410 expired), with an acknowledge link while it may be."""
    notification_id, recipient_id, expires_at = _link(keyring, token)
    moment = now or datetime.now(UTC)
    if moment >= expires_at:
        raise ViewLinkExpired("This link has expired; open the notification in Groundwork instead.")
    notification = await repo.get_notification(recipient_id, notification_id)
    if notification is None:
        raise NotFound("No such page.")
    acknowledge = link_for(
        keyring,
        public_url,
        notification_id=notification.id,
        recipient_id=notification.recipient_id,
        status=notification.status,
        version=notification.version,
        channel="email",
        now=moment,
        expires_at=max(expires_at, moment + timedelta(minutes=15)),
    )
    return NotificationView(notification, expires_at, acknowledge)
