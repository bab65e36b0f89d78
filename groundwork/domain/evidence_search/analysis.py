"""The one analysis of text and questions: English stemming, stopwords and question words, content terms.

Evidence search, the run's evidence gathering and the briefing's ranking analyse text the same way. The
index tokenizes passages with Tantivy's `en_stem` (simple tokenizer, long-token removal, lowercasing, the
English Snowball stemmer) and keeps every word, so a phrase with a stopword still matches; the analyzer
here is built from the same parts, so query terms and highlight offsets agree with what the index holds.
A question is analysed like a search box query: its stopwords and question words rank nothing (they stay
inside "phrases" and `+required` terms), repeated words count once, and a question made only of such
words falls back to its words, so it still answers.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

import tantivy

from groundwork.domain.evidence_search.corpus import QueryClause

INDEX_TOKENIZER = "en_stem"

# English function words, auxiliaries and the words questions are asked with. They are in most passages,
# so they say nothing about which passage answers; matched, they only pull in passages that share a
# question's grammar. Contractions are listed by their parts as the tokenizer splits them (don't -> don, t).
STOPWORDS: frozenset[str] = frozenset(
    """
    a about above after again against all also am an and any are as at be because been before being below
    between both but by can cannot could d did do does doing done don down during each either else ever every
    few for from further get gets got had has have having he her here hers herself him himself his how i if
    in into is it its itself just let ll m may me might more most much must my myself need no nor not now of
    off often on once one only or other ought our ours ourselves out over own per please re s same shall she
    should so some such t than that the their theirs them themselves then there these they this those
    through to too under until up upon us ve very via was we were what whatever when whenever where whereas
    wherever whether which while who whoever whom whose why will with within without won would yet you your
    yours yourself yourselves isn aren wasn weren hasn haven hadn doesn didn shouldn wouldn couldn mustn
    needn mightn shan ain
    """.split()
)
_WORD = re.compile(r"[^\W_]+")


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
    """The index terms of `text`, in order (every word, stopwords included, as the index holds them)."""
    return list(analyzer().analyze(text))


def is_stopword(word: str) -> bool:
    """Whether a word (as written) is a stopword or a question word: every part of it is one."""
    parts = _WORD.findall(word.lower())
    return bool(parts) and all(part in STOPWORDS for part in parts)


@lru_cache(maxsize=65_536)
def _content_stem(word: str) -> str | None:
    if word in STOPWORDS:
        return None
    found = terms(word)
    return found[0] if len(found) == 1 else None


def content_terms(text: str) -> list[str]:
    """The stems of `text`'s content words (no stopword, no question word), in order, repeats kept."""
    found = []
    for word in _WORD.findall(text.lower()):
        stem = _content_stem(word)
        if stem is not None:
            found.append(stem)
    return found


def content_words(text: str) -> list[tuple[str, str, int]]:
    """Each content word of `text` once, in order: the word as written (lowercased), its stem, and its offset."""
    found: dict[str, tuple[str, str, int]] = {}
    for match in _WORD.finditer(text):
        word = match.group(0).lower()
        stem = _content_stem(word)
        if stem is not None and stem not in found:
            found[stem] = (word, stem, match.start())
    return list(found.values())


@dataclass(frozen=True)
class AnalyzedClause:
    """A query clause with its index terms (several terms for a phrase or a word like `3-D`); `alternative`
    when it was not asked but stands for another form of an asked word (`word_forms`)."""

    clause: QueryClause
    terms: tuple[str, ...]
    alternative: bool = False


def analyze_clauses(clauses: list[QueryClause]) -> list[AnalyzedClause]:
    """Index terms of every clause, as written; a clause without any term (punctuation only) is dropped."""
    analyzed = [AnalyzedClause(c, tuple(terms(c.text))) for c in clauses]
    return [a for a in analyzed if a.terms]


def analyze_question(clauses: list[QueryClause]) -> list[AnalyzedClause]:
    """The clauses that count when a question is asked like a search box query.

    A plain word that is a stopword or a question word is dropped; phrases, `+required` and `-excluded`
    clauses stay as written. A plain word already asked for counts once. When nothing would rank, the
    plain words come back, so an all-stopword query still answers.
    """
    analyzed = analyze_clauses(clauses)
    kept: list[AnalyzedClause] = []
    seen: set[tuple[str, tuple[str, ...]]] = set()
    for item in analyzed:
        plain = not item.clause.phrase and item.clause.occur == "should"
        if plain and is_stopword(item.clause.text):
            continue
        key = (item.clause.occur, item.terms)
        if plain and key in seen:
            continue
        seen.add(key)
        kept.append(item)
    if any(item.clause.occur != "must_not" for item in kept):
        return kept
    return analyzed
