"""One whole stack of real processes for the reliability tests (their own PostgreSQL and Temporal: stopping
them breaks no other test). Each test leaves it whole again; `healthy_stack` checks that before each test."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.reliability.processes import OwnStack

# Compressed for tests: six attempts within about 12 s, the same order and ratios as the standard schedule.
WEBHOOK_SCHEDULE = "0,0.5,1,2,3,5"


@pytest.fixture(scope="package")
def own_stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[OwnStack]:
    stack = OwnStack(tmp_path_factory.mktemp("reliability"), GROUNDWORK_WEBHOOK_SCHEDULE=WEBHOOK_SCHEDULE)
    try:
        yield stack.start()
    finally:
        stack.close()


@pytest.fixture
def stack(own_stack: OwnStack) -> OwnStack:
    """The shared stack, whole: every part running and the API ready (a failed test may have left a part down)."""
    own_stack.heal()
    return own_stack
