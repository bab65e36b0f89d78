"""Every timestamp is spelled one way on the wire, whatever time zone the value carries."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

from groundwork.domain.times import format_timestamp, timestamp


def test_a_utc_value_is_spelled_with_microseconds_and_z() -> None:
    assert format_timestamp(datetime(2026, 11, 22, 1, 27, 24, 123456, tzinfo=UTC)) == "2026-11-22T01:27:24.123456Z"
    # Zero microseconds still show: the spelling never changes length.
    assert format_timestamp(datetime(2026, 11, 22, 1, 27, 24, tzinfo=UTC)) == "2026-11-22T01:27:24.000000Z"


def test_a_value_in_another_zone_is_converted_to_utc_first() -> None:
    berlin = timezone(timedelta(hours=1))
    assert format_timestamp(datetime(2026, 11, 22, 2, 27, 24, 5, tzinfo=berlin)) == "2026-11-22T01:27:24.000005Z"
    other_utc = timezone(timedelta(0), "UTC")  # a UTC zone that is not the `UTC` singleton
    assert format_timestamp(datetime(2026, 1, 1, tzinfo=other_utc)) == "2026-01-01T00:00:00.000000Z"


def test_an_absent_time_stays_absent() -> None:
    assert timestamp(None) is None
