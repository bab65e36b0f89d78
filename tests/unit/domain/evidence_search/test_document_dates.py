"""A document's own date: read from what it states about itself, the most explicit statement first, never later
than it was received; dates in running text, with the year of its document when none is written."""

from __future__ import annotations

from datetime import UTC, datetime

from groundwork.domain.evidence_search.document_dates import (
    DocumentDate,
    calendar_dates,
    date_line,
    document_date,
    file_name_date,
    parse_stated,
    resolve,
    title_date,
)

RECEIVED = datetime(2026, 11, 28, 9, 30, tzinfo=UTC)


def _day(year: int, month: int, day: int) -> datetime:
    return datetime(year, month, day, tzinfo=UTC)


def test_dates_in_running_text_in_every_common_spelling_and_never_the_modal_may() -> None:
    text = "Booked for **31 August**; ends on 30 September 2026, May 12, 2026 or 2026-05-12. We may 3 units; Aug. 5th."
    found = [(d.day, d.month, d.year) for d in calendar_dates(text)]
    assert found == [(31, 8, None), (30, 9, 2026), (12, 5, 2026), (12, 5, 2026), (5, 8, None)]
    assert calendar_dates("3.1:1 contrast, 14 months, 410 units, sprint 2026-S24, 31 Febtember") == []
    assert calendar_dates("30 February 2026") == []


def test_a_date_without_a_year_takes_the_year_nearest_its_document() -> None:
    [august] = calendar_dates("booked for 31 August")
    assert resolve(august, _day(2026, 5, 12)) == _day(2026, 8, 31)
    [january] = calendar_dates("by 15 January")
    assert resolve(january, _day(2026, 12, 10)) == _day(2027, 1, 15)
    [written] = calendar_dates("on 2 June 2025")
    assert resolve(written, _day(2026, 12, 10)) == _day(2025, 6, 2)


def test_each_place_a_document_states_its_date() -> None:
    assert date_line("# Notes\n\n**Date:** 3 March 2026\n\nBody") == _day(2026, 3, 3)
    assert date_line("Last updated - 2026-04-01T10:00:00Z") == datetime(2026, 4, 1, 10, tzinfo=UTC)
    assert date_line("# Notes\n" + "line\n" * 50 + "Date: 3 March 2026") is None  # a quoted mail far below
    assert file_name_date("meeting-notes/2026-05-12-steering-committee.md") == _day(2026, 5, 12)
    assert file_name_date("2026_05_28/notes.txt") == _day(2026, 5, 28)
    assert file_name_date("specs/route-optimisation.md") is None
    assert title_date("Payments steering committee — 12 May 2026") == _day(2026, 5, 12)
    assert title_date("Standup 12 May") is None  # no year: not a document's date
    assert parse_stated("Tue, 12 May 2026 09:00:00 GMT") == datetime(2026, 5, 12, 9, tzinfo=UTC)
    assert parse_stated("2026-05-12T09:00:00+01:00") == datetime(2026, 5, 12, 8, tzinfo=UTC)
    assert parse_stated("soon") is None


def test_the_most_explicit_statement_wins_and_a_date_after_receipt_is_not_the_documents() -> None:
    def dated(**kwargs: object) -> DocumentDate | None:
        base: dict[str, object] = {"text": "Body", "title": None, "uri": "notes.md", "metadata": []}
        return document_date(**(base | kwargs), received_at=RECEIVED)  # type: ignore[arg-type]

    everything = dated(
        text="Date: 1 March 2026",
        title="Steering — 12 May 2026",
        uri="2026-05-11-steering.md",
        metadata=[("html_meta", _day(2026, 4, 1))],
    )
    assert everything == DocumentDate(_day(2026, 3, 1), "date_line")
    assert dated(title="Steering — 12 May 2026", uri="2026-05-11-x.md") == DocumentDate(_day(2026, 5, 12), "title")
    assert dated(uri="notes/2026-05-11-x.md") == DocumentDate(_day(2026, 5, 11), "file_name")
    assert dated(metadata=[("pdf_metadata", _day(2026, 6, 5))]) == DocumentDate(_day(2026, 6, 5), "pdf_metadata")
    assert dated(uri="2027-01-01-plan.md") is None  # later than it was received
    assert dated(uri="2027-01-01-plan.md", title="Plan — 2 March 2026") == DocumentDate(_day(2026, 3, 2), "title")
    assert dated(text="Date: 4 July 1776") is None
    assert dated() is None
