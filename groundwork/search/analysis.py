"""The one text analysis of evidence search: English stemming, shared by the index, queries and highlights.

Tantivy's built-in `en_stem` tokenizer indexes passage text; the analyzer here is built from the same
parts (simple tokenizer, long-token removal, lowercasing, the English Snowball stemmer), so query
terms and highlight offsets agree with what the index holds.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

import tantivy

from groundwork.domain.corpus import QueryClause

INDEX_TOKENIZER = "en_stem"


@lru_cache(maxsize=1)
def analyzer() -> tantivy.TextAnalyzer:
    """The analyzer equal to Tantivy's `en_stem`."""
    return (
        tantivy.TextAnalyzerBuilder(tantivy.Tokenizer.simple())
        .filter(tantivy.Filter.remove_long(40))
        .filter(tantivy.Filter.lowercase())
        .filter(tantivy.Filter.stemmer("english"))
        .build()
    )


def terms(text: str) -> list[str]:
    """The index terms of `text`, in order."""
    return list(analyzer().analyze(text))


@dataclass(frozen=True)
class AnalyzedClause:
    """A query clause with its index terms (several terms for a phrase or a word like `3-D`)."""

    clause: QueryClause
    terms: tuple[str, ...]


def analyze_clauses(clauses: list[QueryClause]) -> list[AnalyzedClause]:
    """Index terms of every clause; a clause without any term (punctuation only) is dropped."""
    analyzed = [AnalyzedClause(c, tuple(terms(c.text))) for c in clauses]
    return [a for a in analyzed if a.terms]


# The simple tokenizer's tokens: runs of letters and digits.
_TOKEN = re.compile(r"[^\W_]+")


@lru_cache(maxsize=65_536)
def _stem(word: str) -> str | None:
    found = terms(word)
    return found[0] if len(found) == 1 else None


def highlight_ranges(text: str, clauses: list[AnalyzedClause]) -> list[tuple[int, int]]:
    """Character ranges of `text` matching the non-excluded clauses: each word, and each whole phrase."""
    wanted = [a.terms for a in clauses if a.clause.occur != "must_not"]
    if all(len(w) == 1 for w in wanted):
        # Words only: a stem starts with its word's first letter, so only tokens starting with one of
        # those letters are stemmed (and each distinct token once per process).
        stems = {w[0] for w in wanted}
        initials = {s[0] for s in stems}
        return [
            (m.start(), m.end())
            for m in _TOKEN.finditer(text)
            if m.group()[0].lower() in initials and _stem(m.group()) in stems
        ]
    return _phrase_highlight_ranges(text, wanted)


def _phrase_highlight_ranges(text: str, wanted: list[tuple[str, ...]]) -> list[tuple[int, int]]:
    tokens = analyzer().pre_tokenize(text).tokens
    stems = [t.text for t in tokens]
    ranges: set[tuple[int, int]] = set()
    for phrase in wanted:
        width = len(phrase)
        for i in range(len(stems) - width + 1):
            if tuple(stems[i : i + width]) == phrase:
                ranges.add((tokens[i].char_offset_from, tokens[i + width - 1].char_offset_to))
    merged: list[tuple[int, int]] = []
    for start, end in sorted(ranges):
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(end, merged[-1][1]))
        else:
            merged.append((start, end))
    return merged
