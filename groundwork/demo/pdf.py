"""A minimal PDF writer for the demo corpus and tests: pages of wrapped Helvetica paragraphs.

It writes plain PDF 1.4 (WinAnsi text, one content stream per page, an xref table) so that the demo
PDFs can be regenerated from their text without a PDF toolkit: `python -m groundwork.demo.pdf`.
"""

from __future__ import annotations

import textwrap
from datetime import date
from pathlib import Path

_PAGE_WIDTH, _PAGE_HEIGHT = 595, 842  # A4 in points
_MARGIN = 64
_FONT_SIZE = 11
_LEADING = 15
_PARAGRAPH_GAP = 12
_WRAP = 88


def _escape(text: str) -> str:
    raw = text.encode("cp1252", errors="replace")
    out = []
    for byte in raw:
        char = chr(byte)
        if char in "()\\":
            out.append("\\" + char)
        elif byte < 32 or byte > 126:
            out.append(f"\\{byte:03o}")
        else:
            out.append(char)
    return "".join(out)


def _page_stream(paragraphs: list[str], heading: str | None) -> bytes:
    lines = ["BT", f"/F1 {_FONT_SIZE} Tf", f"{_LEADING} TL", f"{_MARGIN} {_PAGE_HEIGHT - _MARGIN} Td"]
    if heading:
        lines += ["/F2 14 Tf", f"({_escape(heading)}) Tj", "0 -24 Td", f"/F1 {_FONT_SIZE} Tf"]
    for paragraph in paragraphs:
        for line in textwrap.wrap(paragraph, _WRAP):
            lines += [f"({_escape(line)}) Tj", "T*"]
        lines.append(f"0 -{_PARAGRAPH_GAP} Td")
    lines.append("ET")
    return "\n".join(lines).encode("latin-1")


def build_pdf(
    pages: list[list[str]], *, title: str, headings: list[str | None] | None = None, created: date | None = None
) -> bytes:
    """A PDF with one page per entry of `pages`, each a list of paragraphs; `title` (and `created`, as the
    creation and modification dates) go in /Info."""
    headings = headings or [None] * len(pages)
    objects: list[bytes] = []

    def add(body: bytes) -> int:
        objects.append(body)
        return len(objects)

    catalog = add(b"")  # filled in once the page tree exists
    pages_obj = add(b"")
    regular = add(b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>")
    bold = add(b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica-Bold /Encoding /WinAnsiEncoding >>")
    kids = []
    for paragraphs, heading in zip(pages, headings, strict=True):
        stream = _page_stream(paragraphs, heading)
        content = add(b"<< /Length %d >>\nstream\n" % len(stream) + stream + b"\nendstream")
        kids.append(
            add(
                b"<< /Type /Page /Parent %d 0 R /MediaBox [0 0 %d %d] /Contents %d 0 R"
                b" /Resources << /Font << /F1 %d 0 R /F2 %d 0 R >> >> >>"
                % (pages_obj, _PAGE_WIDTH, _PAGE_HEIGHT, content, regular, bold)
            )
        )
    objects[catalog - 1] = b"<< /Type /Catalog /Pages %d 0 R >>" % pages_obj
    objects[pages_obj - 1] = b"<< /Type /Pages /Kids [%s] /Count %d >>" % (
        b" ".join(b"%d 0 R" % k for k in kids),
        len(kids),
    )
    # Info strings are PDFDocEncoding unless UTF-16BE with a byte order mark: the latter covers any title.
    title_hex = ("feff" + title.encode("utf-16-be").hex()).encode("ascii")
    dates = b""
    if created is not None:
        stamp = f"D:{created:%Y%m%d}000000Z".encode("ascii")
        dates = b" /CreationDate (%s) /ModDate (%s)" % (stamp, stamp)
    info = add(b"<< /Title <%s> /Producer (Groundwork demo)%s >>" % (title_hex, dates))

    out = bytearray(b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % number + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % offset for offset in offsets)
    out += b"trailer\n<< /Size %d /Root %d 0 R /Info %d 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (
        len(objects) + 1,
        catalog,
        info,
        xref,
    )
    return bytes(out)


def build_pdf_from_text(source: str) -> bytes:
    """A PDF from a text layout: `title:` first line, optionally a `date: YYYY-MM-DD` line (the PDF's creation
    date), pages split by `---page---`, `# ` page headings."""
    first, _, rest = source.partition("\n")
    if not first.startswith("title:"):
        raise ValueError("the first line must be `title: ...`")
    created = None
    second, _, after = rest.partition("\n")
    if second.startswith("date:"):
        created, rest = date.fromisoformat(second.removeprefix("date:").strip()), after
    pages: list[list[str]] = []
    headings: list[str | None] = []
    for chunk in rest.split("---page---"):
        heading = None
        paragraphs = []
        for block in chunk.strip().split("\n\n"):
            block = " ".join(block.split())
            if block.startswith("# "):
                heading = block[2:]
            elif block:
                paragraphs.append(block)
        pages.append(paragraphs)
        headings.append(heading)
    return build_pdf(pages, title=first.removeprefix("title:").strip(), headings=headings, created=created)


def main() -> None:
    """Regenerate every demo PDF in `corpus/` from its layout in `pdf_sources/` (same relative path + .txt)."""
    here = Path(__file__).parent
    for layout in sorted((here / "pdf_sources").rglob("*.pdf.txt")):
        relative = layout.relative_to(here / "pdf_sources")
        target = here / "corpus" / relative.with_name(relative.name.removesuffix(".txt"))
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(build_pdf_from_text(layout.read_text(encoding="utf-8")))
        print(target.relative_to(here))


if __name__ == "__main__":
    main()
