"""Fixtures of the API suites: the notification fixtures, for tests that need people and their notifications."""

from __future__ import annotations

from tests.integration.enhancement.conftest import work_item
from tests.integration.notifications.conftest import notify, people

__all__ = ["notify", "people", "work_item"]
