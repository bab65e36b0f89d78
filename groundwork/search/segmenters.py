"""Segmenters: a source version's stored text becomes passages with page, paragraph, section and span.

Every passage is an exact slice of the stored text (`text[char_start:char_end]`), so what search
returns is always characters the source holds, never a rewrite. A segmenter version is a fixed
algorithm: changing how text is cut means a new version, activated by re-segmenting the corpus.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

from groundwork.search.extraction import PAGE_BREAK

# Closing `#`s are stripped after the match: skipping them in the pattern (`(.*?)[ \t#]*$`) backtracks
# quadratically on a long run of blanks inside a heading line.
_ATX = re.compile(r"^ {0,3}(#{1,6})(?:[ \t]+(.*)|[ \t#]*)$")
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_SETEXT = re.compile(r"^ {0,3}(=+|-{2,})[ \t]*$")
_THEMATIC = re.compile(r"^ {0,3}([-*_])(?:[ \t]*\1){2,}[ \t]*$")
_SENTENCE_END = re.compile(r"[.!?][\"')\]]*\s+")
SECTION_SEPARATOR = " > "


@dataclass(frozen=True)
class Segment:
    """One passage cut from the stored text."""

    text: str
    page: int | None
    paragraph: int | None
    section: str | None
    char_start: int
    char_end: int


@dataclass(frozen=True)
class _Block:
    start: int
    end: int
    page: int | None
    paragraph: int
    section: str | None


def _lines(text: str, offset: int = 0) -> Iterator[tuple[int, str]]:
    position = 0
    for line in text.split("\n"):
        yield offset + position, line
        position += len(line) + 1


def _trimmed(text: str, start: int, end: int) -> tuple[int, int] | None:
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    return (start, end) if end > start else None


def _plain_blocks(text: str, start: int, end: int, page: int | None) -> Iterator[_Block]:
    """Paragraphs separated by blank lines, numbered from 1 within [start, end)."""
    number = 0
    block_start: int | None = None
    block_end = start
    for line_start, line in _lines(text[start:end], start):
        if line.strip():
            if block_start is None:
                block_start = line_start
            block_end = line_start + len(line)
        elif block_start is not None:
            span = _trimmed(text, block_start, block_end)
            if span:
                number += 1
                yield _Block(span[0], span[1], page, number, None)
            block_start = None
    if block_start is not None and (span := _trimmed(text, block_start, block_end)):
        number += 1
        yield _Block(span[0], span[1], page, number, None)


def _markdown_blocks(text: str) -> Iterator[_Block]:
    """Paragraphs, lists, tables and code fences of Markdown; headings become the section of what follows."""
    headings: list[tuple[int, str]] = []
    number = 0
    block: list[tuple[int, str]] = []
    fence: str | None = None
    lines = list(_lines(text))
    first = 0
    # YAML front matter is metadata, not content.
    if lines and lines[0][1].strip() == "---":
        for index in range(1, len(lines)):
            if lines[index][1].strip() in ("---", "..."):
                first = index + 1
                break

    def section() -> str | None:
        return SECTION_SEPARATOR.join(h for _, h in headings) or None

    def push_heading(level: int, title: str) -> None:
        while headings and headings[-1][0] >= level:
            headings.pop()
        if title:
            headings.append((level, title))

    def close() -> Iterator[_Block]:
        nonlocal number
        if block:
            start, end = block[0][0], block[-1][0] + len(block[-1][1])
            span = _trimmed(text, start, end)
            if span:
                number += 1
                yield _Block(span[0], span[1], None, number, section())
            block.clear()

    for line_start, line in lines[first:]:
        if fence is not None:
            block.append((line_start, line))
            stripped = line.strip()
            if stripped.startswith(fence[0] * len(fence)) and not stripped.strip(fence[0]):
                fence = None
                yield from close()
            continue
        if match := _FENCE.match(line):
            yield from close()
            fence = match.group(1)
            block.append((line_start, line))
            continue
        if match := _ATX.match(line):
            yield from close()
            push_heading(len(match.group(1)), (match.group(2) or "").rstrip(" \t#").strip())
            continue
        if block and _SETEXT.match(line) and not block[0][1].lstrip().startswith(("-", "*", "+", "|", ">")):
            title = " ".join(part.strip() for _, part in block)
            block.clear()
            push_heading(1 if line.strip().startswith("=") else 2, title)
            continue
        if not block and _THEMATIC.match(line):
            continue
        if line.strip():
            block.append((line_start, line))
        else:
            yield from close()
    yield from close()


def _blocks(kind: str, text: str) -> Iterator[_Block]:
    if kind in ("markdown", "html"):
        yield from _markdown_blocks(text)
    elif kind == "pdf":
        start = 0
        for page, chunk in enumerate(text.split(PAGE_BREAK), start=1):
            yield from _plain_blocks(text, start, start + len(chunk), page)
            start += len(chunk) + 1
    else:
        yield from _plain_blocks(text, 0, len(text), None)


def _pieces(text: str, start: int, end: int, max_chars: int) -> Iterator[tuple[int, int]]:
    """Split [start, end) into spans of at most `max_chars`, at sentence ends where possible."""
    while end - start > max_chars:
        limit = start + max_chars
        cut = None
        for match in _SENTENCE_END.finditer(text, start, limit + 1):
            cut = match.end()
        if cut is None or cut <= start:
            space = text.rfind(" ", start + 1, limit)
            cut = space if space > start else limit
        if span := _trimmed(text, start, cut):
            yield span
        start = cut
        while start < end and text[start].isspace():
            start += 1
    if span := _trimmed(text, start, end):
        yield span


@dataclass(frozen=True)
class ParagraphSegmenter:
    """One passage per paragraph (list, table, code block); paragraphs longer than `max_chars` split at sentences."""

    name: str
    version: int
    max_chars: int

    @property
    def id(self) -> str:
        """The segmenter version's id, `<name>@<version>`."""
        return f"{self.name}@{self.version}"

    def segment(self, kind: str, text: str) -> list[Segment]:
        """Cut the stored text of a source of `kind` into passages, in document order."""
        segments = []
        for block in _blocks(kind, text):
            for start, end in _pieces(text, block.start, block.end, self.max_chars):
                segments.append(Segment(text[start:end], block.page, block.paragraph, block.section, start, end))
        return segments


SEGMENTERS: dict[str, ParagraphSegmenter] = {
    s.id: s
    for s in (
        ParagraphSegmenter("paragraph", 1, max_chars=1500),
        # Finer passages for long documents: more precise evidence, at the cost of more of them.
        ParagraphSegmenter("paragraph", 2, max_chars=600),
    )
}


def get_segmenter(segmenter_id: str) -> ParagraphSegmenter:
    """The registered segmenter version with this id; ValueError for an unknown one."""
    try:
        return SEGMENTERS[segmenter_id]
    except KeyError:
        known = ", ".join(sorted(SEGMENTERS))
        raise ValueError(f"unknown segmenter version {segmenter_id!r} (known: {known})") from None
