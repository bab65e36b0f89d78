"""Pure rules of snooze (when it ends, what may be snoozed), of the live feed's resume point and of bulk input."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from groundwork.domain.errors import InvalidRequest, ValidationFailed
from groundwork.domain.notifications.feed import MAX_BULK_ITEMS, parse_last_event_id, validate_bulk
from groundwork.domain.notifications.snooze import parse_duration, snooze_end, snooze_refusal

NOW = datetime(2026, 11, 28, 9, 0, tzinfo=UTC)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("PT30M", timedelta(minutes=30)),
        ("PT1H30M", timedelta(hours=1, minutes=30)),
        ("P1D", timedelta(days=1)),
        ("P2W", timedelta(weeks=2)),
        ("P1DT2H3M4.5S", timedelta(days=1, hours=2, minutes=3, seconds=4.5)),
        ("pt5s", timedelta(seconds=5)),
    ],
)
def test_iso_8601_durations_in_weeks_days_and_time_are_read(text: str, expected: timedelta) -> None:
    assert parse_duration(text) == expected


@pytest.mark.parametrize("text", ["P1Y", "P1M", "PT", "P", "P1DT", "30m", "PT-5M", "1 hour", "P1M2D", ""])
def test_calendar_lengths_and_malformed_durations_are_refused(text: str) -> None:
    with pytest.raises(ValueError, match="ISO 8601 duration"):
        parse_duration(text)


def test_a_snooze_ends_at_until_or_after_for_counted_from_now() -> None:
    assert snooze_end("2026-11-28T10:00:00Z", None, NOW) == datetime(2026, 11, 28, 10, 0, tzinfo=UTC)
    assert snooze_end("2026-11-28T11:00:00+01:00", None, NOW) == datetime(2026, 11, 28, 10, 0, tzinfo=UTC)
    assert snooze_end(None, "PT2H", NOW) == NOW + timedelta(hours=2)


@pytest.mark.parametrize(
    ("until", "for_", "path", "words"),
    [
        (None, None, "until", "give `until`"),
        ("2026-11-28T10:00:00Z", "PT1H", "until", "not both"),
        ("2026-11-28T08:00:00Z", None, "until", "at least 1 second"),
        ("2026-11-28T10:00:00", None, "until", "UTC offset"),
        (None, "PT0S", "for", "at least 1 second"),
        (None, "P91D", "for", "within 90 days"),
        (None, "P99999999999W", "for", "at most 90 days"),
        (None, 30, "for", "ISO 8601 duration"),
        (12, None, "until", "ISO 8601 UTC timestamp"),
    ],
)
def test_a_snooze_outside_one_second_to_90_days_or_without_one_end_is_refused(
    until: object, for_: object, path: str, words: str
) -> None:
    with pytest.raises(ValidationFailed) as refused:
        snooze_end(until, for_, NOW)
    [error] = refused.value.errors
    assert error.path == path and words in error.message


def test_anything_but_a_dismissed_notification_may_be_snoozed_and_only_a_snoozed_one_unsnoozed() -> None:
    for status in ("unread", "read", "acknowledged"):
        assert snooze_refusal("snooze", status, False) is None
        assert snooze_refusal("snooze", status, True) is None  # again: the new end replaces the old
    assert snooze_refusal("snooze", "dismissed", False) == "A dismissed notification cannot be snoozed."
    assert snooze_refusal("unsnooze", "read", True) is None
    assert snooze_refusal("unsnooze", "read", False) == "The notification is not snoozed."


def test_last_event_id_is_a_whole_number_or_absent() -> None:
    assert parse_last_event_id(None) is None
    assert parse_last_event_id("  ") is None
    assert parse_last_event_id("0") == 0
    assert parse_last_event_id(" 42 ") == 42
    for bad in ("-1", "4.2", "abc", "1" * 20, str(2**63)):
        with pytest.raises(InvalidRequest) as refused:
            parse_last_event_id(bad)
        assert refused.value.code == "invalid_request" and refused.value.errors[0].path == "Last-Event-ID"


def test_bulk_input_names_each_bad_item_and_refuses_repeats() -> None:
    command, items, reason = validate_bulk(
        "read", [{"id": "notification_a", "expected_version": 1}, {"id": "notification_b", "expected_version": 3}], None
    )
    assert (command, [(i.id, i.expected_version) for i in items], reason) == (
        "read",
        [("notification_a", 1), ("notification_b", 3)],
        None,
    )
    with pytest.raises(ValidationFailed) as refused:
        validate_bulk(
            "archive",
            [
                {"id": "notification_a", "expected_version": 1},
                {"id": "notification_a", "expected_version": 1},
                {"id": "notification_c", "expected_version": True},
                {"expected_version": 1},
            ],
            "x" * 501,
        )
    assert [e.path for e in refused.value.errors] == [
        "command",
        "items[1].id",
        "items[2].expected_version",
        "items[3].id",
        "reason",
    ]
    too_long: list[dict[str, object]] = [
        {"id": f"notification_{n}", "expected_version": 1} for n in range(MAX_BULK_ITEMS + 1)
    ]
    for too_many_items in ([], too_long, None):
        with pytest.raises(ValidationFailed) as too_many:
            validate_bulk("read", too_many_items, None)
        assert too_many.value.errors[0].path == "items"
