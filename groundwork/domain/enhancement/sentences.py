"""Evidence text as sentences: Markdown unwrapped, headings kept as the section of the sentences under them.

A fenced code block is one unit, written as inline code, so a command stays whole and is recognised as one.
"""

from __future__ import annotations

import functools
import re

from groundwork.domain.enhancement.classify import IMPERATIVE_VERBS
from groundwork.domain.enhancement.phrasing import bare
from groundwork.domain.evidence_search.analysis import is_stopword

_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9\"'(`])")
_BULLET = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+")
_HEADING = re.compile(r"^\s*#{1,6}\s+")
_FENCE = re.compile(r"^\s*(?:```|~~~)")
# A root shell's prompt before a command in a code block (`# mdadm /dev/md1 --remove /dev/sde`): a lower-case
# program name and its arguments, no sentence words (a comment says "definitions of existing MD arrays").
_ROOT_PROMPT = re.compile(r"^#\s+(?=[a-z][\w.+-]*(?:\s|$))")


def _command(line: str) -> str | None:
    """A code block's line as a step would run it (a root prompt dropped); None for a comment."""
    if not line.startswith("#"):
        return line
    if not _ROOT_PROMPT.match(line):
        return None
    command = _ROOT_PROMPT.sub("", line)
    words = re.findall(r"(?<![-\w/.=])[A-Za-z]+(?![-\w/.=])", command)
    return None if any(is_stopword(w) for w in words) or command.rstrip().endswith(".") else command


# What a document writes in a code block for the lines it leaves out.
_ELISIONS = frozenset({"[...]", "...", "…", "[…]"})
_FINITE = re.compile(r"\b(?:is|are|was|were|be|been|has|have|had|must|should|can|will|may|do|does|did)\b", re.I)


def _heading_like(sentence: str, leads_more: bool) -> bool:
    """A short title-like line inside running text: "Approach." opening a paragraph, or an unpunctuated line."""
    words = bare(sentence).split()
    return (
        (len(words) <= 2 if leads_more else sentence.rstrip()[-1:] not in ".!?:")
        and 0 < len(words) <= 4
        and words[0][:1].isupper()
        and words[0].lower() not in IMPERATIVE_VERBS
        and not _FINITE.search(sentence)
        and not any(ch.isdigit() for ch in sentence)
        and ":" not in sentence
    )


def sectioned_sentences(text: str, section: str | None = None) -> list[tuple[str, str | None]]:
    """Markdown text as clean sentences, each with the heading it sits under (headings themselves are not sentences)."""
    return list(_sectioned_sentences(text, section))


# The actions of a run read the same evidence: split it once per process (a pure function of its text).
@functools.lru_cache(maxsize=4096)
def _sectioned_sentences(text: str, section: str | None) -> tuple[tuple[str, str | None], ...]:
    units: list[tuple[str, str | None]] = []
    current = section
    open_unit = False
    lines = text.splitlines()
    # The lines of the fenced code block being read; a passage can also open inside a long block, which its
    # lone fence closes at its end: what comes before that fence is code, never prose.
    code: list[str] | None = [] if _opens_inside_a_block(lines) else None
    for raw_line in lines:
        stripped = raw_line.strip()
        if _FENCE.match(raw_line):
            if code is not None and code:
                units.append(("`" + " ; ".join(code) + "`", current))
            code = None if code is not None else []
            open_unit = False
            continue
        if code is not None:
            command = _command(stripped) if stripped and stripped not in _ELISIONS else None
            if command:  # a comment or an elision ("[...]") is not part of what a step runs
                code.append(command.replace("`", "'"))
            continue
        if _HEADING.match(raw_line):
            heading = _HEADING.sub("", raw_line).strip().strip("#").strip()
            current = f"{section} > {heading}" if section else heading
            open_unit = False
            continue
        line = _BULLET.sub("", raw_line).strip()
        if not line or line.startswith("|"):
            open_unit = False  # a blank line or a table row ends the paragraph
        elif open_unit and not _BULLET.match(raw_line) and stripped:
            units[-1] = (units[-1][0] + " " + line, units[-1][1])  # a wrapped line continues its paragraph
        else:
            units.append((line, current))
            open_unit = True
    if code:  # a passage can end inside a long block: what it holds is still one command unit
        units.append(("`" + " ; ".join(code) + "`", current))
    result: list[tuple[str, str | None]] = []
    carried: tuple[str | None, str | None] = (None, None)  # (under which Markdown section, the inline heading)
    for unit, unit_section in units:
        inline = carried[1] if carried[0] == unit_section and carried[1] else unit_section
        if is_code_unit(unit):  # a code block: one command unit
            result.append((unit, inline))
            continue
        parts = _SENTENCE_END.split(unit)
        if len(parts) == 1 and _heading_like(parts[0].strip(), False):  # a heading line alone (e.g. from a PDF)
            heading = bare(parts[0])
            carried = (unit_section, f"{section} > {heading}" if section else heading)
            continue
        for index, part in enumerate(parts):
            part = part.strip().strip("*_").strip()
            if part and _heading_like(part, index == 0 and len(parts) > 1):  # e.g. a PDF's "Approach. Data is ..."
                heading = bare(part)
                inline = f"{section} > {heading}" if section else heading
                continue
            if len(part) >= 12:
                result.append((part if part[-1] in ".!?:" else part + ".", inline))
    return tuple(result)


def _opens_inside_a_block(lines: list[str]) -> bool:
    """Whether a passage begins inside a code block that its first fence closes.

    An odd number of fences leaves one end of the passage inside a block: its start when the last fence is
    its last line, or when what precedes the first fence reads as code and what follows the last as prose
    (a sentence of three words or more ending as one); otherwise its end, as a passage cut off inside a
    block is."""
    filled = [line.strip() for line in lines if line.strip()]
    marks = [i for i, line in enumerate(filled) if _FENCE.match(line)]
    if len(marks) % 2 == 0 or marks[0] == 0:
        return False
    if marks[-1] == len(filled) - 1:
        return True
    return _prose_lines(filled[: marks[0]]) < _prose_lines(filled[marks[-1] + 1 :])


def _prose_lines(lines: list[str]) -> int:
    return sum(1 for line in lines if line.endswith((".", "!", "?")) and len(line.split()) >= 3)


def is_code_unit(text: str) -> bool:
    """Whether a sentence is a whole code block, written as one inline code span."""
    return text.startswith("`") and text.endswith("`") and text.count("`") == 2


def sentences(text: str) -> list[str]:
    """Split Markdown text into clean sentences: wrapped lines rejoined, bullets and headings unwrapped."""
    return [sentence for sentence, _ in sectioned_sentences(text)]
