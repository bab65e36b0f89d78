"""Text extraction: the bytes of a text, Markdown, HTML or PDF source become the text that is stored.

The stored text has a canonical shape the segmenters read back: text and Markdown are the source
itself (UTF-8, newlines normalised); HTML becomes Markdown-like blocks (`# ` headings, paragraphs
separated by blank lines); PDF pages are joined by form feeds, paragraphs by blank lines.
"""

from __future__ import annotations

import io
import logging
import re
from dataclasses import dataclass, field
from datetime import datetime
from html.parser import HTMLParser

from groundwork.domain.evidence_search.document_dates import parse_stated

PAGE_BREAK = "\f"
_WHITESPACE = re.compile(r"\s+")
# Closing `#`s are stripped after the match: skipping them in the pattern (`(.+?)[ \t#]*$`) backtracks
# quadratically on a long run of blanks inside a heading line.
_ATX = re.compile(r"^ {0,3}(#{1,6})[ \t]+(.*)$")

# pypdf logs recoverable oddities of real-world PDFs at WARNING; they are not ours to report.
logging.getLogger("pypdf").setLevel(logging.ERROR)


class ExtractionError(ValueError):
    """The content cannot be read as the kind it claims to be; the message says why."""


@dataclass(frozen=True)
class Extracted:
    """The stored text of a source version, the title it suggests (None: use the file name), and the dates its
    metadata states about the document (`html_meta`, `html_time`, `pdf_metadata`; the newest of each kind)."""

    text: str
    title: str | None
    stated_dates: tuple[tuple[str, datetime], ...] = field(default=())


def decode_text(data: bytes) -> str:
    """UTF-8 text (a BOM is dropped) with `\\r\\n` and `\\r` newlines normalised to `\\n`."""
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise ExtractionError(f"not UTF-8 text (invalid byte at offset {exc.start})") from None
    if "\x00" in text:
        raise ExtractionError("binary content (NUL bytes) in a text source")
    return text.replace("\r\n", "\n").replace("\r", "\n").replace(PAGE_BREAK, "\n")


def _markdown_title(text: str) -> str | None:
    in_fence = False
    for line in text.split("\n"):
        if line.lstrip().startswith(("```", "~~~")):
            in_fence = not in_fence
        match = None if in_fence else _ATX.match(line)
        if match and len(match.group(1)) == 1 and (title := match.group(2).rstrip(" \t#").strip()):
            return title
    return None


_BLOCK_TAGS = {
    "p", "div", "li", "pre", "blockquote", "tr", "dt", "dd", "figcaption", "caption", "section",
    "article", "header", "footer", "main", "aside", "ul", "ol", "dl", "table", "form", "address",
    "h1", "h2", "h3", "h4", "h5", "h6", "br", "hr", "body",
}  # fmt: skip
_SKIPPED_TAGS = {"script", "style", "noscript", "template", "svg", "head", "iframe", "object", "nav"}
_CELL_TAGS = {"td", "th"}
# `<meta>` names (also `property`, `itemprop`, `http-equiv`) whose content is the page's own date.
_DATE_META = frozenset(
    {
        "date", "dc.date", "dc.date.created", "dc.date.issued", "dc.date.modified", "dcterms.date",
        "dcterms.created", "dcterms.issued", "dcterms.modified", "article:published_time",
        "article:modified_time", "og:updated_time", "last-modified", "revised", "pubdate", "publish_date",
        "publication_date", "datepublished", "datemodified", "datecreated", "citation_publication_date",
    }
)  # fmt: skip
# A `<time>` is the page's own date only when marked so: elsewhere in a page it dates an event it speaks of.
_DATE_ITEMPROPS = frozenset({"datepublished", "datemodified", "datecreated"})
_DATE_CLASSES = re.compile(r"\b(?:published|updated|modified|last-?updated|pubdate)\b", re.IGNORECASE)
_FENCE_RUN = re.compile(r"^ {0,3}`{3,}", re.M)


# A `<pre>` block: kept as a fenced code block, so a line in it that starts with `#` (a shell prompt, a comment)
# is never read as a heading.
_CODE = -1


def _fenced(code: str) -> str:
    """`code` between fences longer than any run of backticks that starts one of its lines."""
    longest = max((len(m.group(0)) for m in _FENCE_RUN.finditer(code)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}\n{code}\n{fence}"


class _HTMLBlocks(HTMLParser):
    """Collects the visible text of an HTML document as blocks, with headings marked by level."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.blocks: list[tuple[int, str]] = []  # (heading level or 0, text)
        self.title: str | None = None
        self._parts: list[str] = []
        self._skip = 0
        self._in_title = False
        self._heading = 0
        self._pre = 0
        self.meta_dates: list[datetime] = []
        self.time_dates: list[datetime] = []
        self._time: list[str] | None = None  # the text of a marked `<time>` without a `datetime`

    def _flush(self) -> None:
        raw = "".join(self._parts)
        self._parts = []
        if self._pre:
            text = raw.strip("\n")
            if text.strip():
                self.blocks.append((_CODE, text))
            return
        text = _WHITESPACE.sub(" ", raw).strip()
        if text:
            self.blocks.append((self._heading, text))

    def _dates(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = {name.lower(): (value or "") for name, value in attrs}
        if tag == "meta":
            names = {values.get(a, "").strip().lower() for a in ("name", "property", "itemprop", "http-equiv")}
            stated = parse_stated(values.get("content", "")) if names & _DATE_META else None
            if stated is not None:
                self.meta_dates.append(stated)
        elif tag == "time" and (
            "pubdate" in values
            or values.get("itemprop", "").strip().lower() in _DATE_ITEMPROPS
            or _DATE_CLASSES.search(values.get("class", ""))
        ):
            stated = parse_stated(values.get("datetime", ""))
            if stated is not None:
                self.time_dates.append(stated)
            else:
                self._time = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in ("meta", "time"):
            self._dates(tag, attrs)
        if tag == "title":
            self._in_title = True
        if tag in _SKIPPED_TAGS:
            self._skip += 1
        elif tag in _BLOCK_TAGS:
            self._flush()
            if tag in ("h1", "h2", "h3", "h4", "h5", "h6"):
                self._heading = int(tag[1])
            if tag == "pre":
                self._pre += 1
        elif tag in _CELL_TAGS and self._parts:
            self._parts.append(" | ")

    def handle_endtag(self, tag: str) -> None:
        if tag == "time" and self._time is not None:
            stated = parse_stated(" ".join("".join(self._time).split()))
            if stated is not None:
                self.time_dates.append(stated)
            self._time = None
        if tag == "title":
            self._in_title = False
        if tag in _SKIPPED_TAGS:
            self._skip = max(0, self._skip - 1)
        elif tag in _BLOCK_TAGS:
            self._flush()
            if tag in ("h1", "h2", "h3", "h4", "h5", "h6"):
                self._heading = 0
            if tag == "pre":
                self._pre = max(0, self._pre - 1)

    def handle_data(self, data: str) -> None:
        if self._time is not None:
            self._time.append(data)
        if self._in_title:
            self.title = ((self.title or "") + data).strip() or None
        elif not self._skip:
            self._parts.append(data)

    def close(self) -> None:
        super().close()
        self._flush()


def extract_html(data: bytes) -> Extracted:
    """Visible text of an HTML page as Markdown-like blocks; the title from `<title>` or the first h1."""
    text = decode_text(data)
    parser = _HTMLBlocks()
    try:
        parser.feed(text)
        parser.close()
    except Exception as exc:  # html.parser is lenient; anything it still rejects is unreadable input
        raise ExtractionError(f"unreadable HTML ({exc})") from None
    lines = []
    for level, block in parser.blocks:
        if level == _CODE:
            lines.append(_fenced(block))
        else:
            lines.append(f"{'#' * level} {block}" if level else block)
    title = parser.title or next((b for level, b in parser.blocks if level == 1), None)
    stated = [
        (name, max(found))
        for name, found in (("html_meta", parser.meta_dates), ("html_time", parser.time_dates))
        if found
    ]
    return Extracted("\n\n".join(lines), title, tuple(stated))


def _pdf_page_paragraphs(page_text: str) -> list[str]:
    paragraphs, current = [], []
    for line in page_text.replace(PAGE_BREAK, "\n").split("\n"):
        if line.strip():
            current.append(line.strip())
        elif current:
            paragraphs.append(" ".join(current))
            current = []
    if current:
        paragraphs.append(" ".join(current))
    return [_WHITESPACE.sub(" ", p) for p in paragraphs]


def extract_pdf(data: bytes) -> Extracted:
    """The text of every page (pypdf, layout mode keeps paragraph gaps), pages joined by form feeds."""
    from pypdf import PdfReader
    from pypdf.errors import PdfReadError

    try:
        reader = PdfReader(io.BytesIO(data))
        if reader.is_encrypted:
            raise ExtractionError("the PDF is encrypted")
        pages = []
        for page in reader.pages:
            try:
                page_text = page.extract_text(extraction_mode="layout")
            except Exception:  # layout mode is stricter about odd fonts; plain mode still reads them
                page_text = page.extract_text()
            pages.append("\n\n".join(_pdf_page_paragraphs(page_text or "")))
        title = reader.metadata.title if reader.metadata else None
        stated = _pdf_dates(reader)
    except ExtractionError:
        raise
    except (PdfReadError, ValueError, KeyError, TypeError, OSError) as exc:
        raise ExtractionError(f"not a readable PDF ({exc})") from None
    if not any(p.replace("\x00", "").strip() for p in pages):
        raise ExtractionError("the PDF has no extractable text (scanned pages need OCR first)")
    title_text = str(title).replace("\x00", "").strip() if title else ""
    text = PAGE_BREAK.join(pages).replace("\x00", "")
    return Extracted(text, title_text or None, stated)


def _pdf_dates(reader: object) -> tuple[tuple[str, datetime], ...]:
    """The newest of the PDF's creation and modification dates, if its metadata holds a readable one."""
    metadata = getattr(reader, "metadata", None)
    found = []
    for name in ("creation_date", "modification_date"):
        try:
            value = getattr(metadata, name, None) if metadata is not None else None
        except (ValueError, TypeError, KeyError):  # a malformed date string in the Info dictionary
            value = None
        if isinstance(value, datetime):
            found.append(parse_stated(value.isoformat()))
    usable = [f for f in found if f is not None]
    return (("pdf_metadata", max(usable)),) if usable else ()


def extract(kind: str, data: bytes) -> Extracted:
    """The stored text and suggested title of `data` read as `kind`; raises `ExtractionError`."""
    if kind == "text":
        return Extracted(decode_text(data), None)
    if kind == "markdown":
        text = decode_text(data)
        return Extracted(text, _markdown_title(text))
    if kind == "html":
        return extract_html(data)
    if kind == "pdf":
        return extract_pdf(data)
    raise ExtractionError(f"unknown source kind {kind!r}")
