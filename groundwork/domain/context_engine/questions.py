"""What a briefing question asks: its content terms, the kind of claim its frame asks for, and what matches them.

The content terms are the one analysis's (`domain/evidence_search/analysis.py`: stems of the content words,
stopwords and question words dropped), less the words that only frame the question or name its subject:

- a *status* frame ("on track", "behind schedule", "finished", "complete") asks about progress, so milestones,
  blockers and risks bear on it; a *date* frame ("When …", "By when …", "what date", and in such a question
  "scheduled", "planned", "due") asks for a date, so milestones do. The frame's words are not content: a
  package is not about "track" because the question asked whether something is on track.
- the subject's own name ("Dispatch Planning", "the Copperline … engagement") and the words `project`,
  `engagement`, `portfolio` name what the briefing is already scoped to, and match nothing in particular.
- a date ("31 Aug", "30 September") is one term, matched by any text naming that day of that month.
- a word naming a contribution type ("risks", "blocking", "depend", "decide") asks for that type: it is
  matched by every package of the type, and by no other ("better than blocking the move" is no blocker).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from groundwork.domain.evidence_search.analysis import content_terms, content_words, terms
from groundwork.domain.evidence_search.document_dates import calendar_dates

STATUS_TYPES = ("milestone", "blocker", "risk")
DATE_TYPES = ("milestone",)
SUBJECT_WORDS = "project engagement portfolio"
_STATUS = re.compile(
    r"\b(?:on|off)\s+(?:track|schedule|time)\b|\b(?:behind|ahead\s+of)\s+schedule\b|\brunning\s+late\b"
    r"|\b(?:finish|finished|finishes|complete|completed|completes)\b",
    re.IGNORECASE,
)
_DATE = re.compile(r"^\W*(?:by\s+)?when\b|\b(?:what|which)\s+(?:date|day)\b|\bhow\s+long\s+until\b", re.IGNORECASE)
_DATE_WORDS = re.compile(r"\b(?:scheduled|planned|due|date)\b", re.IGNORECASE)
# The words a question uses to ask for a contribution type; every package of that type answers to them.
TYPE_WORDS = {
    "risk": "risk risks risky threat threats threaten threatens",
    "blocker": "blocker blockers block blocks blocked blocking stop stopping prevent prevents preventing",
    "decision": "decision decisions decide decided agree agreed",
    "dependency": "dependency dependencies depend depends rely relies",
    "milestone": "milestone milestones deadline deadlines due",
    "finding": "finding findings",
}


@lru_cache(maxsize=16)
def type_stems(contribution_type: str) -> frozenset[str]:
    """The index terms of the words that ask for a contribution type (with the type's own name)."""
    return frozenset(terms(f"{contribution_type} {TYPE_WORDS.get(contribution_type, '')}"))


def type_key(contribution_type: str) -> str:
    """The match key of a contribution type (never an index term: index terms hold no `:`)."""
    return f"type:{contribution_type}"


def asked_type(stem: str) -> str | None:
    """The contribution type a question word asks for, if it is one of the words that ask for a type."""
    return next((t for t in TYPE_WORDS if stem in type_stems(t)), None)


def date_key(month: int, day: int) -> str:
    """The match key of a day of a month (never an index term: index terms hold no `@`)."""
    return f"@{month:02d}-{day:02d}"


def text_stems(text: str) -> frozenset[str]:
    """What a text answers to: its index terms, and the key of each date it names."""
    return frozenset(terms(text)) | {date_key(d.month, d.day) for d in calendar_dates(text)}


def package_stems(term: str, summary: str, contribution_type: str) -> frozenset[str]:
    """What a package's own words answer to: its term and summary, and a question asking for its type."""
    return text_stems(f"{term}\n{summary}") | {type_key(contribution_type)}


@dataclass(frozen=True)
class QuestionTerm:
    """A content term of a question: as written (for `missing`), what matches it, the index terms that weigh it
    (for a word asking for a type: none, the type's packages weigh it), whether `missing` may name it (a number
    alone is never named), and the contribution type it asks for."""

    word: str
    keys: frozenset[str]
    index_terms: tuple[str, ...]
    listed: bool
    asks_for: str | None = None


@dataclass(frozen=True)
class Question:
    """A question's content terms in order, the contribution types its frame asks for (none: no frame), and
    every type it asks for (its frame's and those its words name)."""

    terms: tuple[QuestionTerm, ...]
    frame_types: tuple[str, ...]
    asked_types: tuple[str, ...]


def _spans(pattern: re.Pattern[str], text: str) -> list[tuple[int, int]]:
    return [m.span() for m in pattern.finditer(text)]


def analyze_briefing_question(question: str, subject_name: str = "") -> Question:
    """The content terms of a question about a subject named `subject_name`, and its frame's types."""
    consumed: list[tuple[int, int]] = []
    frame_types: tuple[str, ...] = ()
    if status := _spans(_STATUS, question):
        consumed += status
        frame_types = STATUS_TYPES
    if _DATE.search(question):
        consumed += _spans(_DATE, question) + _spans(_DATE_WORDS, question)
        frame_types = tuple(dict.fromkeys((*DATE_TYPES, *frame_types)))
    found: list[tuple[int, QuestionTerm]] = []
    for date in calendar_dates(question):
        written = question[date.start : date.end]
        index_terms = tuple(content_terms(written))
        found.append(
            (date.start, QuestionTerm(written, frozenset({date_key(date.month, date.day)}), index_terms, True))
        )
        consumed.append((date.start, date.end))
    scope = set(content_terms(f"{subject_name} {SUBJECT_WORDS}"))
    named: list[str] = []
    for word, stem, offset in content_words(question):
        if stem in scope or any(start <= offset < end for start, end in consumed):
            continue
        kind = asked_type(stem)
        if kind is not None:
            named.append(kind)
            found.append((offset, QuestionTerm(word, frozenset({type_key(kind)}), (), True, kind)))
        else:
            found.append((offset, QuestionTerm(word, frozenset({stem}), (stem,), not word.isdigit())))
    ordered = tuple(term for _, term in sorted(found, key=lambda f: f[0]))
    return Question(ordered, frame_types, tuple(dict.fromkeys((*frame_types, *named))))
