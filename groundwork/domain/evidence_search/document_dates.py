"""A document's own date: the dates it states about itself, which statement wins, and dates in running text.

A source records the date its document states (a `Date:` line, HTML `<meta>` dates or a marked `<time>`,
PDF metadata, a dated title, a dated file name), else its ingestion time, and says which. Freshness is
measured from it, so a 12 May meeting note reads `stale` in November however recently it was ingested.

Dates in running text ("booked for 31 August", "ends on 30 September 2026") are read here too, for the
corpus provider's dated commitments: a date without a year takes the year that puts it nearest its document.
"""

from __future__ import annotations

import email.utils
import re
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime

# Where a document date came from, most explicit first: the first source that states a usable date wins.
STATED_SOURCES = ("date_line", "html_meta", "html_time", "pdf_metadata", "title", "file_name")
INGESTION = "ingestion"
DATE_SOURCES = (*STATED_SOURCES, INGESTION)
EARLIEST_YEAR = 1970
# How far into the head of a text a `Date:` line counts (further down it is a quoted mail or a log).
DATE_LINE_WINDOW = 40

_MONTHS = {
    "january": 1, "february": 2, "march": 3, "april": 4, "may": 5, "june": 6, "july": 7, "august": 8,
    "september": 9, "october": 10, "november": 11, "december": 12,
    "jan": 1, "feb": 2, "mar": 3, "apr": 4, "jun": 6, "jul": 7, "aug": 8, "sep": 9, "sept": 9, "oct": 10,
    "nov": 11, "dec": 12,
}  # fmt: skip
# Month names are matched capitalised (or in capitals), so the modal "may" is never read as a month.
_MONTH = "|".join(sorted({n.capitalize() for n in _MONTHS} | {n.upper() for n in _MONTHS}, key=lambda n: (-len(n), n)))
_DAY = r"(?P<{}>[0-3]?\d)(?:st|nd|rd|th)?"
_YEAR = r"(?:,?\s+(?P<{}>(?:19|20)\d\d))?"
_CALENDAR = re.compile(
    r"\b(?:"
    rf"(?P<iso_y>(?:19|20)\d\d)-(?P<iso_m>[01]\d)-(?P<iso_d>[0-3]\d)(?!\d)"
    rf"|{_DAY.format('dm_d')}\s+(?P<dm_m>{_MONTH})\.?{_YEAR.format('dm_y')}"
    rf"|(?P<md_m>{_MONTH})\.?\s+{_DAY.format('md_d')}(?![\d:]){_YEAR.format('md_y')}"
    r")\b"
)
_FILE_DATE = re.compile(r"(?<!\d)((?:19|20)\d\d)[-_]([01]\d)[-_]([0-3]\d)(?!\d)")
_DATE_LINE = re.compile(
    r"^[\s*_>#|-]*(?:date|dated|last updated|updated|last modified|revised)[\s*_]*[:\u2013-][\s*_]*(?P<value>.+)$",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class CalendarDate:
    """A date written in text: day, month, the year if written, and where it stands (character offsets)."""

    day: int
    month: int
    year: int | None
    start: int
    end: int


@dataclass(frozen=True)
class DocumentDate:
    """The date a document states about itself (UTC), and where it states it (one of `DATE_SOURCES`)."""

    value: datetime
    source: str


def _valid(year: int, month: int, day: int) -> datetime | None:
    try:
        return datetime(year, month, day, tzinfo=UTC)
    except ValueError:
        return None


def calendar_dates(text: str) -> list[CalendarDate]:
    """Every well-formed calendar date in `text`, in order: `2026-05-12`, `12 May 2026`, `May 12`, `31 Aug`."""
    found = []
    for match in _CALENDAR.finditer(text):
        groups = match.groupdict()
        year: int | None
        if groups["iso_y"]:
            day, month, year = int(groups["iso_d"]), int(groups["iso_m"]), int(groups["iso_y"])
        elif groups["dm_m"]:
            day, month = int(groups["dm_d"]), _MONTHS[groups["dm_m"].lower()]
            year = int(groups["dm_y"]) if groups["dm_y"] else None
        else:
            day, month = int(groups["md_d"]), _MONTHS[groups["md_m"].lower()]
            year = int(groups["md_y"]) if groups["md_y"] else None
        if _valid(year or 2000, month, day) is not None:  # 2000 is a leap year: 29 February stays
            found.append(CalendarDate(day, month, year, match.start(), match.end()))
    return found


def resolve(date: CalendarDate, reference: datetime) -> datetime | None:
    """The instant (midnight UTC) of a date in a document of date `reference`: without a year, the year that puts
    it within half a year of the document (a December note's "15 January" is next January)."""
    if date.year is not None:
        return _valid(date.year, date.month, date.day)
    candidates = [
        _valid(year, date.month, date.day) for year in (reference.year - 1, reference.year, reference.year + 1)
    ]
    usable = [c for c in candidates if c is not None]
    return min(usable, key=lambda c: (abs((c - reference).total_seconds()), c), default=None)


def _first_dated(text: str) -> datetime | None:
    """The first date with a year in `text`."""
    return next((_valid(d.year, d.month, d.day) for d in calendar_dates(text) if d.year is not None), None)


def parse_stated(value: str) -> datetime | None:
    """A date as metadata writes it (ISO 8601, RFC 2822, or `12 May 2026`), in UTC; None when it is none of these."""
    text = value.strip()
    if not text:
        return None
    try:
        parsed = datetime.fromisoformat(text.replace("Z", "+00:00") if text.endswith("Z") else text)
    except ValueError:
        parsed = None
    if parsed is None:
        try:
            parsed = email.utils.parsedate_to_datetime(text)
        except (TypeError, ValueError, IndexError):
            parsed = None
    if parsed is None:
        return _first_dated(text)
    return parsed.replace(tzinfo=UTC) if parsed.tzinfo is None else parsed.astimezone(UTC)


def date_line(text: str) -> datetime | None:
    """The date of a `Date:` line (also `Last updated:`, `Revised:`) near the top of a text."""
    for line in text.split("\n")[:DATE_LINE_WINDOW]:
        match = _DATE_LINE.match(line.strip())
        if match:
            stated = parse_stated(match.group("value").strip(" *_")) or _first_dated(match.group("value"))
            if stated is not None:
                return stated
    return None


def file_name_date(uri: str) -> datetime | None:
    """A `YYYY-MM-DD` (or `YYYY_MM_DD`) date in the source's file name, else in the folders above it (nearest first)."""
    for segment in reversed(uri.replace("\\", "/").split("/")):
        for match in _FILE_DATE.finditer(segment):
            date = _valid(int(match.group(1)), int(match.group(2)), int(match.group(3)))
            if date is not None:
                return date
    return None


def title_date(title: str | None) -> datetime | None:
    """The first date with a year in a title ("Payments steering committee — 12 May 2026")."""
    return _first_dated(title) if title else None


def choose_document_date(stated: Iterable[tuple[str, datetime | None]], received_at: datetime) -> DocumentDate | None:
    """The document's date: the first usable statement in `STATED_SOURCES` order, None when none is usable.

    A statement before 1970 or after the document was received is not usable (a typo, or the date of something
    planned): evidence is never dated later than it was known."""
    by_source = {source: value for source, value in stated if value is not None}
    for source in STATED_SOURCES:
        value = by_source.get(source)
        if value is not None and value.year >= EARLIEST_YEAR and value <= received_at:
            return DocumentDate(value, source)
    return None


def document_date(
    *, text: str, title: str | None, uri: str, metadata: Iterable[tuple[str, datetime]], received_at: datetime
) -> DocumentDate | None:
    """The date a received document states about itself (see `STATED_SOURCES`), None when it states none."""
    return choose_document_date(
        [
            ("date_line", date_line(text)),
            *metadata,
            ("title", title_date(title)),
            ("file_name", file_name_date(uri)),
        ],
        received_at,
    )
