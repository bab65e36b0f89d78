"""Evidence search corpus rules: source kinds, provenance quality, subjects, and the query language.

The query language is deliberately small: words, "exact phrases", `+required` and `-excluded`
clauses. Plain clauses are optional and only rank (BM25); at least one clause must not be excluded.
A malformed query is an `invalid_query` error naming the character position (0-based) of the fault.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import PurePath
from typing import Literal

from groundwork.domain.errors import GroundworkError

SOURCE_KINDS = ("text", "markdown", "html", "pdf")
PROVENANCE_QUALITIES = ("exact_text", "extracted", "ocr")
SUBJECT_TYPES = ("project", "engagement", "portfolio")

# Passages reachable through pagination for one query; beyond it the answer says `truncated`.
MAX_REACHABLE_HITS = 1000
# Rounds of segment → activate before an ingest gives up when segmenter versions keep changing underneath.
MAX_INGEST_ROUNDS = 5
MAX_QUERY_CHARS = 1000
MAX_QUERY_CLAUSES = 32

_SUFFIX_KINDS = {
    ".txt": "text",
    ".text": "text",
    ".md": "markdown",
    ".markdown": "markdown",
    ".html": "html",
    ".htm": "html",
    ".pdf": "pdf",
}


def kind_for_path(path: PurePath | str) -> str | None:
    """The source kind a file name implies, or None when Groundwork does not read that type."""
    return _SUFFIX_KINDS.get(PurePath(path).suffix.lower())


def default_provenance_quality(kind: str) -> str:
    """Text and Markdown passages are the source's own characters; HTML and PDF text is extracted."""
    return "exact_text" if kind in ("text", "markdown") else "extracted"


def provenance_quality_problem(kind: str, quality: str) -> str | None:
    """Why a contributor's declared quality is not allowed for `kind`, or None when it is."""
    if quality not in PROVENANCE_QUALITIES:
        return f"must be one of {', '.join(PROVENANCE_QUALITIES)}"
    if quality == "exact_text" and kind not in ("text", "markdown"):
        return f"text extracted from {kind} is never exact_text"
    return None


class InvalidQuery(GroundworkError):
    """A search query that does not parse; `position` is the 0-based character offset of the fault."""

    status = 400
    code = "invalid_query"
    title = "Invalid query"

    def __init__(self, message: str, position: int) -> None:
        super().__init__(
            f"{message} (at position {position}).",
            extra={"position": position, "errors": [{"path": "query", "message": message}]},
        )
        self.position = position


Occurrence = Literal["should", "must", "must_not"]


@dataclass(frozen=True)
class QueryClause:
    """One clause of a parsed query: a word or a phrase, with how it must occur and where it starts."""

    text: str
    phrase: bool
    occur: Occurrence
    position: int


def parse_query(query: str) -> list[QueryClause]:
    """Parse the evidence search query language; raise `InvalidQuery` with the fault's position."""
    clauses: list[QueryClause] = []
    i, n = 0, len(query)
    while i < n:
        if query[i].isspace():
            i += 1
            continue
        start = i
        occur: Occurrence = "should"
        if query[i] in "+-":
            occur = "must" if query[i] == "+" else "must_not"
            i += 1
            if i >= n or query[i].isspace():
                raise InvalidQuery(f"'{query[start]}' must be followed by a word or a phrase", start)
            if query[i] in "+-":
                raise InvalidQuery(f"'{query[i]}' cannot follow '{query[start]}'", i)
        if query[i] == '"':
            close = query.find('"', i + 1)
            if close < 0:
                raise InvalidQuery("unclosed phrase: the closing quote is missing", i)
            body = query[i + 1 : close]
            if not body.strip():
                raise InvalidQuery("empty phrase", i)
            clauses.append(QueryClause(body, True, occur, start))
            i = close + 1
            if i < n and not query[i].isspace():
                raise InvalidQuery("a phrase must be followed by a space or the end of the query", i)
            continue
        word_start = i
        while i < n and not query[i].isspace():
            if query[i] == '"':
                raise InvalidQuery("unexpected quote inside a word", i)
            i += 1
        clauses.append(QueryClause(query[word_start:i], False, occur, start))
    if not clauses:
        raise InvalidQuery("the query is empty", 0)
    if len(clauses) > MAX_QUERY_CLAUSES:
        raise InvalidQuery(f"at most {MAX_QUERY_CLAUSES} words or phrases", clauses[MAX_QUERY_CLAUSES].position)
    if all(c.occur == "must_not" for c in clauses):
        raise InvalidQuery("the query needs at least one word or phrase that is not excluded", 0)
    return clauses
