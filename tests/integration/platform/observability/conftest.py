"""Observability tests reuse the webhook and notification fixtures: real receivers on 127.0.0.1, a running
relay, people with keys, a real SMTP server and a worker that sends to it."""

from __future__ import annotations

from tests.integration.notifications.conftest import mailbox, people, sending  # noqa: F401 (fixtures)
from tests.integration.webhooks.conftest import receivers, relay, webhook_settings  # noqa: F401 (fixtures)
