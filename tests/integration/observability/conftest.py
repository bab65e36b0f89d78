"""Observability tests reuse the webhook fixtures: real receivers on 127.0.0.1 and a running relay."""

from __future__ import annotations

from tests.integration.webhooks.conftest import receivers, relay, webhook_settings  # noqa: F401 (fixtures)
