"""Ids made in a batch are the same kind of id as one made alone: a known prefix and a ULID of now."""

from __future__ import annotations

import re
import time

import pytest
from ulid import ULID

from groundwork.domain import ids
from groundwork.domain.ids import new_id, new_ids

_ID = re.compile(r"psg_[0-7][0-9A-HJKMNP-TV-Z]{25}")


def _assert_fresh_ulids(batch: list[str], before_ms: int, after_ms: int) -> None:
    for made in batch:
        assert _ID.fullmatch(made), made
        parsed = ULID.from_str(made.removeprefix("psg_"))
        assert str(parsed) == made.removeprefix("psg_")
        assert before_ms <= parsed.milliseconds <= after_ms


def test_a_batch_of_ids_is_well_formed_distinct_increasing_and_of_this_millisecond() -> None:
    before = time.time_ns() // 1_000_000
    batch = new_ids("psg", 500)
    single = new_id("psg")
    after = time.time_ns() // 1_000_000
    assert len(batch) == 500 and len(set(batch)) == 500
    assert batch == sorted(batch)
    _assert_fresh_ulids([*batch, single], before, after)
    assert set(new_ids("psg", 500)).isdisjoint(batch)
    assert new_ids("psg", 0) == []


def test_a_batch_drawn_at_the_top_of_the_random_range_never_carries_into_the_timestamp(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(ids.os, "urandom", lambda n: b"\xff" * n)
    before = time.time_ns() // 1_000_000
    batch = new_ids("psg", 3)
    after = time.time_ns() // 1_000_000
    assert batch == sorted(batch) and len(set(batch)) == 3
    _assert_fresh_ulids(batch, before, after)


def test_an_unknown_prefix_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown id prefix"):
        new_ids("nope", 1)
