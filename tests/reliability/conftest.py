"""Fixtures of the reliability suite, shared with the integration suites they extend."""

from __future__ import annotations

from tests.integration.enhancement.conftest import work_item
from tests.integration.notifications.conftest import notify, people
from tests.integration.webhooks.conftest import receivers

__all__ = ["notify", "people", "receivers", "work_item"]
