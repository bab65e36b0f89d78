"""Fixtures the tenancy tests share with the notifications tests (people with keys, a notification source)."""

from tests.integration.notifications.conftest import notify, people

__all__ = ["notify", "people"]
