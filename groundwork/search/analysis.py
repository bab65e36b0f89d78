"""The one text analysis of evidence search: English stemming, shared by the index, queries and highlights.

Tantivy's built-in `en_stem` tokenizer indexes passage text; the analyzer here is built from the same
parts (simple tokenizer, long-token removal, lowercasing, the English Snowball stemmer), so query
terms and highlight offsets agree with what the index holds.
"""

from __future__ import annotations

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


def highlight_ranges(text: str, clauses: list[AnalyzedClause]) -> list[tuple[int, int]]:
    """Character ranges of `text` matching the non-excluded clauses: each word, and each whole phrase."""
    tokens = analyzer().pre_tokenize(text).tokens
    stems = [t.text for t in tokens]
    ranges: set[tuple[int, int]] = set()
    for analyzed in clauses:
        if analyzed.clause.occur == "must_not":
            continue
        wanted = analyzed.terms
        width = len(wanted)
        for i in range(len(stems) - width + 1):
            if tuple(stems[i : i + width]) == wanted:
                ranges.add((tokens[i].char_offset_from, tokens[i + width - 1].char_offset_to))
    merged: list[tuple[int, int]] = []
    for start, end in sorted(ranges):
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(end, merged[-1][1]))
        else:
            merged.append((start, end))
    return merged
