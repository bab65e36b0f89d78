"""Highlights: the character ranges of a passage that the clauses which counted match.

The analysis itself (stemming, stopwords, questions) is `domain.evidence_search.analysis`, shared with the
draft generator and briefings; this module finds its terms in stored text.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import lru_cache

from groundwork.domain.evidence_search.analysis import AnalyzedClause, analyzer, terms


@lru_cache(maxsize=65_536)
def _stem(word: str) -> str | None:
    found = terms(word)
    return found[0] if len(found) == 1 else None


# Porter2's exceptional forms whose stem does not start like the word ("dying" → "die").
_SHORT_PREFIX_STEMS = frozenset({"die", "lie", "tie"})
_TOKEN_REST = re.compile(r"[^\W_]*")


def _prefix(stem: str) -> str:
    """Characters every word with this stem starts with (lower-cased): Snowball only rewrites word endings."""
    if stem in _SHORT_PREFIX_STEMS:
        return stem[0]
    return stem[: min(3, max(1, len(stem) - 1))]


def highlight_ranges(text: str, clauses: list[AnalyzedClause]) -> list[tuple[int, int]]:
    """Character ranges of `text` matching the non-excluded clauses: each word, and each whole phrase."""
    return highlighter(clauses)(text)


def highlighter(clauses: list[AnalyzedClause]) -> Callable[[str], list[tuple[int, int]]]:
    """`highlight_ranges` for these clauses, prepared once for many passages."""
    wanted = [a.terms for a in clauses if a.clause.occur != "must_not"]
    if not all(len(w) == 1 for w in wanted):
        return lambda text: _phrase_highlight_ranges(text, wanted)
    stems = frozenset(w[0] for w in wanted)
    prefixes = tuple({_prefix(s) for s in stems})
    token_rest, stem = _TOKEN_REST.match, _stem

    def words(text: str) -> list[tuple[int, int]]:
        # Words only: find where a word with a stem's prefix starts a token, and stem just those tokens.
        lowered = text.lower()
        if len(lowered) != len(text):  # a character whose lower case is longer: offsets would shift
            return _phrase_highlight_ranges(text, wanted)
        found: list[tuple[int, int]] = []
        for prefix in prefixes:
            start = lowered.find(prefix)
            while start >= 0:
                if start == 0 or not lowered[start - 1].isalnum():
                    match = token_rest(lowered, start)
                    end = match.end() if match else start
                    if stem(text[start:end]) in stems:
                        found.append((start, end))
                start = lowered.find(prefix, start + 1)
        # One prefix finds each word once, in order; several may find a word twice, in any order.
        return found if len(prefixes) == 1 else sorted(set(found))

    return words


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
