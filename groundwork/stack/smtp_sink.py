"""`groundwork up --smtp-sink`: a local SMTP server (aiosmtpd) that prints every mail it receives.

For trying e-mail notifications with no mail server: the worker sends to it, it prints each message
(envelope, subject and text) on the terminal of `groundwork up`, and keeps nothing.
"""

from __future__ import annotations

import email
import email.policy
import threading
from collections.abc import Callable
from typing import Any

from aiosmtpd.controller import Controller


def render(mail_from: str, rcpt_tos: list[str], data: bytes) -> str:
    """A received message as the sink prints it: envelope, subject, and its text part."""
    message = email.message_from_bytes(data, policy=email.policy.default)
    body = message.get_body(preferencelist=("plain",)) if hasattr(message, "get_body") else None
    text = body.get_content() if body is not None else ""  # type: ignore[union-attr]
    lines = [
        f"----- mail from {mail_from} to {', '.join(rcpt_tos)}",
        f"Subject: {message.get('Subject', '')}",
        "",
        str(text).replace("\r\n", "\n").rstrip(),
        "-----",
    ]
    return "\n".join(lines)


class _Printing:
    def __init__(self, write: Callable[[str], None]) -> None:
        self._write = write
        self._lock = threading.Lock()

    async def handle_DATA(self, server: Any, session: Any, envelope: Any) -> str:
        with self._lock:
            self._write(render(envelope.mail_from, list(envelope.rcpt_tos), envelope.content))
        return "250 Message accepted for delivery"


class SmtpSink:
    """An SMTP server on `host:port` that prints what it receives; `start()` and `stop()`."""

    def __init__(self, host: str, port: int, write: Callable[[str], None] | None = None) -> None:
        self.host = host
        self.port = port
        self._controller = Controller(
            _Printing(write or (lambda text: print(text, flush=True))), hostname=host, port=port
        )

    @property
    def url(self) -> str:
        """What to put in `GROUNDWORK_SMTP_URL`."""
        return f"smtp://{self.host}:{self.port}"

    def start(self) -> None:
        """Listen (in a thread of its own)."""
        self._controller.start()

    def stop(self) -> str:
        """Stop listening."""
        self._controller.stop()
        return "stopped"
