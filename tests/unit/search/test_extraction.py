"""Extraction reads text, Markdown, HTML and PDF (pages kept) and rejects what it cannot read, clearly."""

from __future__ import annotations

import time
from datetime import UTC, date, datetime

import pytest

from groundwork.demo.pdf import build_pdf
from groundwork.search.extraction import PAGE_BREAK, ExtractionError, extract


def test_pdf_text_keeps_pages_and_paragraphs() -> None:
    pdf = build_pdf(
        [["Tokens replace stored card numbers.", "The QSA reviewed the data flow."], ["Backups expire in 35 days."]],
        title="Scope review £",
    )
    extracted = extract("pdf", pdf)
    assert extracted.title == "Scope review £"
    pages = extracted.text.split(PAGE_BREAK)
    assert pages == [
        "Tokens replace stored card numbers.\n\nThe QSA reviewed the data flow.",
        "Backups expire in 35 days.",
    ]


def test_markdown_title_is_the_first_h1_and_newlines_are_normalised() -> None:
    extracted = extract("markdown", b"\xef\xbb\xbfIntro\r\n\r\n# The Title\r\nBody")
    assert extracted.title == "The Title"
    assert extracted.text == "Intro\n\n# The Title\nBody"


@pytest.mark.parametrize(
    ("line", "title"),
    [("# Closed #", "Closed"), ("  #\tTabbed ##  ", "Tabbed"), ("# C#", "C"), ("## Second", None), ("#NoSpace", None)],
)
def test_markdown_title_drops_closing_hashes(line: str, title: str | None) -> None:
    assert extract("markdown", line.encode()).title == title


def test_a_long_heading_line_is_read_in_linear_time() -> None:
    line = "# a" + " " * 200_000 + "b #"
    started = time.perf_counter()
    extracted = extract("markdown", line.encode())
    assert time.perf_counter() - started < 2
    assert extracted.title == "a" + " " * 200_000 + "b"


@pytest.mark.parametrize(
    ("kind", "data", "reason"),
    [
        ("text", b"\xff\xfe\x00bad", "not UTF-8"),
        ("pdf", b"%PDF-1.4 this is not really a pdf", "PDF"),
        ("pdf", b"just text", "PDF"),
        ("markdown", b"a\x00b", "binary"),
    ],
)
def test_unreadable_content_says_why(kind: str, data: bytes, reason: str) -> None:
    with pytest.raises(ExtractionError, match=reason):
        extract(kind, data)


def test_a_pdf_without_text_needs_ocr() -> None:
    with pytest.raises(ExtractionError, match="OCR"):
        extract("pdf", build_pdf([[]], title="scan"))


def test_html_states_its_date_in_meta_elements_and_marked_time_elements_only() -> None:
    page = b"""<html><head><title>Runbook</title>
    <meta name="dcterms.created" content="2026-03-01">
    <meta property="article:modified_time" content="2026-04-02T10:00:00+01:00">
    <meta name="description" content="2026-12-31 is not a date of the page">
    </head><body><h1>Runbook</h1>
    <p>The re-audit is on <time datetime="2026-11-01">1 November</time>.</p>
    <footer>Updated <time class="updated">5 April 2026</time></footer>
    </body></html>"""
    extracted = extract("html", page)
    assert extracted.stated_dates == (
        ("html_meta", datetime(2026, 4, 2, 9, tzinfo=UTC)),  # the newest the page states of itself
        ("html_time", datetime(2026, 4, 5, tzinfo=UTC)),  # the marked one; the event's <time> is not the page's
    )
    assert "1 November" in extracted.text and "Updated 5 April 2026" in extracted.text
    assert extract("html", b"<p>On <time datetime='2026-11-01'>1 Nov</time></p>").stated_dates == ()


def test_a_pdf_states_its_date_in_its_metadata() -> None:
    dated = build_pdf([["Plan."]], title="Plan", created=date(2026, 6, 1))
    assert extract("pdf", dated).stated_dates == (("pdf_metadata", datetime(2026, 6, 1, tzinfo=UTC)),)
    assert extract("pdf", build_pdf([["Plan."]], title="Plan")).stated_dates == ()
