"""Extraction reads text, Markdown, HTML and PDF (pages kept) and rejects what it cannot read, clearly."""

from __future__ import annotations

import time

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
