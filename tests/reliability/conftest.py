"""Fixtures of the reliability suite: one whole stack of real processes for the fault tests (their own
PostgreSQL and Temporal: stopping them breaks no other test; each test leaves it whole again), and the
integration suites' fixtures that the race and matrix tests extend."""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.integration.enhancement.conftest import work_item
from tests.integration.notifications.conftest import notify, people
from tests.integration.webhooks.conftest import receivers
from tests.reliability.processes import OwnStack

__all__ = ["notify", "people", "receivers", "work_item"]

# Compressed for tests: six attempts within about 12 s, the same order and ratios as the standard schedule.
WEBHOOK_SCHEDULE = "0,0.5,1,2,3,5"


@pytest.fixture(scope="package")
def own_stack() -> Iterator[OwnStack]:
    # Not under pytest's base temp: another pytest session starting on this machine resets that directory to
    # mode 0700, which locks out the PostgreSQL server's own user mid-initdb.
    root = Path(tempfile.mkdtemp(prefix="groundwork-reliability-"))
    stack = OwnStack(root, GROUNDWORK_WEBHOOK_SCHEDULE=WEBHOOK_SCHEDULE, GROUNDWORK_QUEUED_RUN_SWEEP_SECONDS="2")
    try:
        yield stack.start()
    finally:
        stack.close()
        shutil.rmtree(root, ignore_errors=True)


@pytest.fixture
def stack(own_stack: OwnStack) -> OwnStack:
    """The shared stack, whole: every part running and the API ready (a failed test may have left a part down)."""
    own_stack.heal()
    return own_stack
