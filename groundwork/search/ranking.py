"""How evidence search ranks a passage: BM25 over its text, how many of the question's words it holds, its
document's structure in proportion, the proximity of the question's words, and document furniture below prose.

The query analysis (which words count) is `domain.evidence_search.analysis`; this module turns the clauses that
count into Tantivy queries with their score bounds, and `search.corpus_search` filters and pages them. The
weights were measured on a real manual (bench/relevance_bench.py, docs/decisions.md "Ranking").
"""

from __future__ import annotations

import itertools
import math
import struct
from collections.abc import Iterable
from dataclasses import dataclass

import tantivy

from groundwork.domain.evidence_search.analysis import AnalyzedClause
from groundwork.domain.evidence_search.corpus import QueryClause
from groundwork.search.corpus_index import FURNITURE, FURNITURE_FIELD, FURNITURE_FLAG

# What a content word matching the document's structure is worth, as a multiple of its idf in the passage text
# (its rarity in the corpus, so a frequent word lifts little and a stopword never counts): the heading that
# opens the passage's own section says most about it, the heading path about the section around it, the
# document title about the whole document. A word counts once, in the strongest field it is in. The text
# itself is ranked by BM25 (at most (k1 + 1) = 2.2 times the word's idf). Structure scores are constant per
# match: these fields are short and absent from many passages, where BM25's length normalisation against
# their tiny average length would crush every match.
STRUCTURE_WEIGHTS: tuple[tuple[str, float], ...] = (("heading", 2.5), ("title", 0.5), ("section", 1.0))

# What a content word the passage holds (in its text or its own heading path) adds, as a multiple of its idf,
# however often it is there and however long the passage: BM25 alone lets one rare word said many times in a
# short passage outweigh a passage holding most of the question's words once, and this is what makes covering
# more of the question count. The additive form of a coordination factor, so the score stays a sum of clause
# scores (exact keyset pages, bounds per clause). Swept from 0 to 4 on the handbook (bench/README.md); the
# heading path counts as held, or a heading's words would lift only the passages that repeat them in their text.
PRESENCE_WEIGHT = 2.0
PRESENCE_FIELDS = ("text", "section")


# Two neighbouring words of a question found within this many positions of each other in a passage (about a
# sentence) add their pair's BM25 again, at this weight: passages that hold them together rank above passages
# that hold them far apart.
PROXIMITY_SLOP = 20
PROXIMITY_WEIGHT = 1.0
# A pair is not checked when one of its words is in more than this share of the passages and in more than
# `PROXIMITY_COSTLY_DOCS` of them: such a word says little about which passage answers (its idf is near zero,
# so the pair's lift is its other word's, which BM25 already counts), and its pair is the costliest clause of
# the query (the phrase check reads the word's position list in every passage that holds both). Measured on
# the handbook (6,336 passages) this changes no ranking; at 1,000,000 passages it takes a common and a mid
# term from 6.6 to 1.8 ms and a question from 12.2 to 10.0 ms in process (bench/README.md, issue 34).
PROXIMITY_MAX_SHARE = 0.2
PROXIMITY_COSTLY_DOCS = 10_000


# A furniture passage's score is multiplied by this: below prose that matches as well, still findable.
FURNITURE_FACTOR = 0.3
# The factor as Tantivy multiplies with it, in 32-bit floats (a query's boost is one).
_FURNITURE_FACTOR_32 = struct.unpack("f", struct.pack("f", FURNITURE_FACTOR))[0]


_OCCUR = {"should": tantivy.Occur.Should, "must": tantivy.Occur.Must, "must_not": tantivy.Occur.MustNot}


def text_query(schema: tantivy.Schema, clauses: list[AnalyzedClause], field: str = "text") -> tantivy.Query:
    """The BM25 query of the clauses over one text field."""
    text_parts = []
    for analyzed in clauses:
        if len(analyzed.terms) == 1:
            part = tantivy.Query.term_query(schema, field, analyzed.terms[0])
        else:
            part = tantivy.Query.phrase_query(schema, field, list(analyzed.terms))
        text_parts.append((_OCCUR[analyzed.clause.occur], part))
    return tantivy.Query.boolean_query(text_parts)


def term_or_phrase(schema: tantivy.Schema, field: str, terms: tuple[str, ...]) -> tantivy.Query:
    """A word's term query, or a phrase's phrase query, over one field."""
    if len(terms) == 1:
        return tantivy.Query.term_query(schema, field, terms[0])
    return tantivy.Query.phrase_query(schema, field, list(terms))


def idf(doc_freq: int, num_docs: int) -> float:
    """BM25's inverse document frequency (Tantivy's formula)."""
    return math.log(1.0 + (max(0, num_docs - doc_freq) + 0.5) / (doc_freq + 0.5))


# BM25's k1: a text match scores at most (k1 + 1) times its idf.
_K1 = 1.2


class IndexStatistics:
    """Document frequencies of one snapshot, and its document count as BM25 counts it (deleted ones too)."""

    def __init__(self, searcher: tantivy.Searcher, kinds: tuple[str, ...]) -> None:
        self.searcher = searcher
        self._doc_freqs: dict[tuple[str, str], int] = {}
        # Every passage has one kind and the marker document has the marker; doc_freq counts deleted ones too,
        # as Tantivy's own idf does (it divides by each segment's max_doc).
        self.passage_docs = sum(searcher.doc_freq("kind", kind) for kind in kinds)
        # Where furniture is flagged (schema 6), its scores are scaled as hits are collected; a generation of
        # schema 5 is served while its replacement builds, with the mark in the query (`furniture_below_prose`).
        try:
            self.furniture_docs = int(searcher.doc_freq(FURNITURE_FLAG, True))
            flags = True
        except ValueError:
            flags = False
            try:
                self.furniture_docs = int(searcher.doc_freq(FURNITURE_FIELD, FURNITURE))
            except ValueError:  # schema 4, without the mark: nothing is furniture there
                self.furniture_docs = 0
        self.furniture_flagged = flags and self.furniture_docs > 0
        total = self.passage_docs + searcher.doc_freq("marker", "applied")
        self.total_docs = max(1, total, searcher.num_docs)

    def doc_freq(self, field: str, term: str) -> int:
        """How many documents (deleted ones included) hold `term` in `field` (remembered for the snapshot)."""
        key = (field, term)
        found = self._doc_freqs.get(key)
        if found is None:
            if len(self._doc_freqs) > 100_000:
                self._doc_freqs = {}
            found = self._doc_freqs[key] = int(self.searcher.doc_freq(field, term))
        return found

    def idf(self, field: str, terms: tuple[str, ...]) -> float:
        """The idf of a word, or the summed idf of a phrase's words, in `field`."""
        return sum(idf(self.doc_freq(field, term), self.total_docs) for term in terms)


@dataclass(frozen=True)
class WeightedClause:
    """A clause's query, the highest score it can add to any document, and `sought`: the same score as a query
    cheap to seek, for an optional clause beside a required one only (it may match every document, scoring 0
    where the clause does not match)."""

    analyzed: AnalyzedClause
    query: tantivy.Query
    upper_bound: float
    sought: tantivy.Query


def clause_query(
    schema: tantivy.Schema, analyzed: AnalyzedClause, stats: IndexStatistics, presence: float = PRESENCE_WEIGHT
) -> WeightedClause:
    """A word or phrase: BM25 over the text, a constant score for being in the passage at all, and a constant
    score for the strongest structure field it matches, both weighted by its rarity in the text (a field's
    length does not count, and a word repeated in the title, the heading path and the opening heading counts
    once). `presence`: the weight of being there (`PRESENCE_WEIGHT` unless the caller ranks otherwise)."""
    text = term_or_phrase(schema, "text", analyzed.terms)
    idf_text = stats.idf("text", analyzed.terms)
    parts, links = [text], [text]
    bound = (1.0 + _K1) * idf_text
    held = [
        term_or_phrase(schema, field, analyzed.terms) for field in PRESENCE_FIELDS if _in_field(stats, field, analyzed)
    ]
    # Not for a word in most passages of a large corpus, as for proximity: it tells little, and its presence is
    # a second pass over its whole posting list that also lifts its bound above what the pruning can leave out.
    if held and presence and not any(_near_stopword(stats, term) for term in analyzed.terms):
        either = held[0] if len(held) == 1 else tantivy.Query.boolean_query([(tantivy.Occur.Should, q) for q in held])
        parts.append(tantivy.Query.const_score_query(either, presence * idf_text))
        links += _one_of(held, [presence * idf_text] * len(held))
        bound += presence * idf_text
    fields = [
        (term_or_phrase(schema, field, analyzed.terms), weight * idf_text)
        for field, weight in STRUCTURE_WEIGHTS
        if _in_field(stats, field, analyzed)
    ]
    if fields:
        structure = [tantivy.Query.const_score_query(query, score) for query, score in fields]
        parts.append(structure[0] if len(structure) == 1 else tantivy.Query.disjunction_max_query(structure))
        strongest_first = sorted(fields, key=lambda field: -field[1])
        links += _one_of([query for query, _ in strongest_first], [score for _, score in strongest_first])
        bound += max(weight for _, weight in STRUCTURE_WEIGHTS) * idf_text
    if len(parts) == 1:
        return WeightedClause(analyzed, text, bound * 1.001, text)
    query = tantivy.Query.boolean_query([(tantivy.Occur.Should, part) for part in parts])
    # Chained on every document, a link at a time: Tantivy scores a sought union by scoring every posting of
    # every part in a window of 4,096 documents, and a frequent word's clause, sought for a few candidates
    # spread over the index, was most of a question's time. A margin for Tantivy's 32-bit arithmetic.
    return WeightedClause(analyzed, query, bound * 1.001, added_on(zero_scored(tantivy.Query.all_query()), links))


def _one_of(queries: list[tantivy.Query], scores: list[float]) -> list[tantivy.Query]:
    """The first of `queries` that a document matches, at its score, as one query each that excludes the ones
    before it: at most one of them matches a document, as a union's constant (or a disjunction's maximum, when
    the strongest comes first) counts once."""
    must, must_not = tantivy.Occur.Must, tantivy.Occur.MustNot
    found = []
    for at, (query, score) in enumerate(zip(queries, scores, strict=True)):
        for earlier in queries[:at]:  # nested, so each exclusion is one sought scorer, never a union
            query = tantivy.Query.boolean_query([(must, query), (must_not, earlier)])
        found.append(tantivy.Query.const_score_query(query, score))
    return found


def added_on(base: tantivy.Query, optional: Iterable[tantivy.Query]) -> tantivy.Query:
    """`base`'s documents, each scored by `base` and then each of `optional` it matches, added one by one in
    order (as a union sums them: from 0, in 32-bit floats); each optional query is sought in its own postings
    for each document, never scored as a union."""
    for query in optional:
        base = tantivy.Query.boolean_query([(tantivy.Occur.Must, base), (tantivy.Occur.Should, query)])
    return base


def _in_field(stats: IndexStatistics, field: str, analyzed: AnalyzedClause) -> bool:
    """Whether some passage holds every word of the clause in `field` (else a query there adds nothing)."""
    return all(stats.doc_freq(field, term) for term in analyzed.terms)


def _near_stopword(stats: IndexStatistics, term: str) -> bool:
    """Whether a word is in so many passages that a pair with it, or its presence, costs much and tells little."""
    docs = stats.doc_freq("text", term)
    return docs > PROXIMITY_COSTLY_DOCS and docs > PROXIMITY_MAX_SHARE * stats.total_docs


def proximity_clauses(
    schema: tantivy.Schema, clauses: list[AnalyzedClause], stats: IndexStatistics
) -> list[WeightedClause]:
    """Each two neighbouring words of the question, near each other in a passage: a sloppy phrase that lifts
    passages matching them close together over passages that hold them far apart (not for a pair with a word
    in most passages of a large corpus)."""
    words = [a for a in clauses if a.clause.occur != "must_not" and len(a.terms) == 1 and not a.alternative]
    found = []
    for first, second in itertools.pairwise(words):
        if first.terms == second.terms:
            continue
        pair = (first.terms[0], second.terms[0])
        if _near_stopword(stats, pair[0]) or _near_stopword(stats, pair[1]):
            continue
        query = tantivy.Query.boost_query(
            tantivy.Query.phrase_query(schema, "text", list(pair), slop=PROXIMITY_SLOP), PROXIMITY_WEIGHT
        )
        clause = QueryClause(f"{first.clause.text} {second.clause.text}", True, "should", first.clause.position)
        bound = PROXIMITY_WEIGHT * (1.0 + _K1) * stats.idf("text", pair)
        found.append(WeightedClause(AnalyzedClause(clause, pair), query, bound * 1.001, query))
    return found


def weighted_clauses(
    schema: tantivy.Schema, clauses: list[AnalyzedClause], stats: IndexStatistics, presence: float = PRESENCE_WEIGHT
) -> list[WeightedClause]:
    """Every clause that ranks or must match, weighed, and the proximity of neighbouring words; excluded ones
    are left to `ranking_query`."""
    weighted = [clause_query(schema, a, stats, presence) for a in clauses if a.clause.occur != "must_not"]
    return weighted + proximity_clauses(schema, clauses, stats)


def ranking_query(
    schema: tantivy.Schema,
    clauses: list[AnalyzedClause],
    stats: IndexStatistics | None = None,
    weighted: list[WeightedClause] | None = None,
    presence: float = PRESENCE_WEIGHT,
) -> tantivy.Query:
    """The query of the clauses: plain ones rank, `+` ones must match (anywhere), `-` ones must not be in the
    text. Without statistics (which weigh structure) only the text ranks, as before structure counted.
    `weighted`: the clauses' `weighted_clauses`, when the caller has them already."""
    if stats is None:
        return text_query(schema, clauses)
    must_not = tantivy.Occur.MustNot
    excluded = [(must_not, term_or_phrase(schema, "text", a.terms)) for a in clauses if a.clause.occur == "must_not"]
    if weighted is None:
        weighted = weighted_clauses(schema, clauses, stats, presence)
    ranked = [(_OCCUR[w.analyzed.clause.occur], w.query) for w in weighted]
    return tantivy.Query.boolean_query(ranked + excluded)


def zero_scored(query: tantivy.Query) -> tantivy.Query:
    """`query` as a filter: it adds nothing to the score."""
    # A filter inside a Must would add to the BM25 score unless its own score is constant zero.
    return tantivy.Query.const_score_query(query, 0.0)


def furniture_scaled(score: float) -> float:
    """A furniture passage's score: `score` times `FURNITURE_FACTOR` in 32-bit floats, to the bit what a boost
    of its query gives (the product of two 32-bit floats is exact in 64 bits, then rounded once)."""
    return float(struct.unpack("f", struct.pack("f", score * _FURNITURE_FACTOR_32))[0])


def furniture_below_prose(
    schema: tantivy.Schema, ranking: tantivy.Query, stats: IndexStatistics | None
) -> tantivy.Query:
    """`ranking`, with a furniture passage's score scaled down in the query, where the snapshot does not flag
    furniture to be scaled as hits are collected (`furniture_scaled`): it ranks below prose that matches as
    well. The query holds `ranking` twice, so every search scores it twice over."""
    if stats is None or not stats.furniture_docs or stats.furniture_flagged:
        return ranking
    furniture = tantivy.Query.term_query(schema, FURNITURE_FIELD, FURNITURE)
    prose = tantivy.Query.boolean_query([(tantivy.Occur.Must, ranking), (tantivy.Occur.MustNot, furniture)])
    scaled = tantivy.Query.boost_query(ranking, FURNITURE_FACTOR)
    framing = tantivy.Query.boolean_query([(tantivy.Occur.Must, scaled), (tantivy.Occur.Must, zero_scored(furniture))])
    return tantivy.Query.boolean_query([(tantivy.Occur.Should, prose), (tantivy.Occur.Should, framing)])
