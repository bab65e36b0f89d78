"""What an e-mail, a digest and a chat message say: the notification, a link to it, and its action link."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from email.message import EmailMessage
from email.utils import format_datetime
from typing import Any

from groundwork.persistence.repositories.notifications.deliveries import DeliveryContextRow
from groundwork.platform.secrets.keyring import KeyRing
from groundwork.services.notifications.actions import link_for


@dataclass(frozen=True)
class Composer:
    """How messages are addressed and linked: the sender, the API's public address, the key ring."""

    sender: str
    public_url: str
    keyring: KeyRing | None

    def _lines(self, context: DeliveryContextRow, channel: str, now: datetime) -> list[str]:
        view = f"{self.public_url.rstrip('/')}/api/v1/notifications/{context.notification_id}"
        link = link_for(
            self.keyring,
            self.public_url,
            notification_id=context.notification_id,
            recipient_id=context.recipient_id,
            status=context.notification_status,
            version=context.notification_version,
            channel=channel,
            now=now,
        )
        lines = [context.title, "", context.body, "", f"View: {view}"]
        if link:
            lines.append(f"Acknowledge: {link}")
        return lines

    def email(self, context: DeliveryContextRow, address: str, now: datetime, message_id: str) -> EmailMessage:
        """One notification as an e-mail to `address`; `message_id` is stable across retries."""
        message = EmailMessage()
        message["From"] = self.sender
        message["To"] = address
        message["Subject"] = context.title
        message["Date"] = format_datetime(now)
        message["Message-ID"] = message_id
        message["X-Groundwork-Notification"] = context.notification_id
        text = self._lines(context, "email", now)
        text += ["", "-- ", "Sent by Groundwork because of your notification preferences."]
        message.set_content("\n".join(text))
        return message

    def digest(
        self, contexts: list[DeliveryContextRow], address: str, cadence: str, now: datetime, message_id: str
    ) -> EmailMessage:
        """Several notifications of one window as one e-mail."""
        message = EmailMessage()
        message["From"] = self.sender
        message["To"] = address
        message["Subject"] = f"Groundwork {cadence} digest: {len(contexts)} notification(s)"
        message["Date"] = format_datetime(now)
        message["Message-ID"] = message_id
        text: list[str] = [f"{len(contexts)} notification(s) since your last {cadence} digest:", ""]
        for number, context in enumerate(contexts, start=1):
            lines = self._lines(context, "email", now)
            text += [f"{number}. {lines[0]}", *("   " + line if line else "" for line in lines[1:]), ""]
        text += ["-- ", "Sent by Groundwork because of your notification preferences."]
        message.set_content("\n".join(text))
        return message

    def chat(self, context: DeliveryContextRow, now: datetime) -> dict[str, Any]:
        """One notification as an incoming-webhook message (`{"text": ...}`)."""
        return {"text": "\n".join(line for line in self._lines(context, "chat", now) if line)}
