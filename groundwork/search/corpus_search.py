"""Corpus search over the Tantivy index: the query from parsed clauses, filters, and keyset pages.

Hits are ordered by BM25 score (descending), ties by the passage's key `seq` (ascending). Tantivy
has no search-after, so a page re-runs the query, collects the top hits up to where the page ends
(never beyond `MAX_REACHABLE_HITS`) and keeps those strictly after the cursor's (score, seq).
"""

from __future__ import annotations

from dataclasses import dataclass

import tantivy

from groundwork.domain.corpus import MAX_REACHABLE_HITS
from groundwork.search.analysis import AnalyzedClause

_OCCUR = {"should": tantivy.Occur.Should, "must": tantivy.Occur.Must, "must_not": tantivy.Occur.MustNot}
# Extra hits collected past the cursor's offset, so small shifts of the index between pages cost nothing.
_SLACK = 16
_LAZY_FILTER_VALUES = 64


@dataclass(frozen=True)
class SearchFilters:
    """Which passages may match: the caller's visible projects and classes, and the active segmenter versions."""

    project_ids: list[str]
    segmenter_ids: list[str]
    source_id: str | None = None
    kind: str | None = None
    classes: tuple[str, ...] = ("general",)


@dataclass(frozen=True)
class Hit:
    """One matching document: its key and score."""

    seq: int
    score: float


@dataclass(frozen=True)
class HitPage:
    """A page of hits, whether more are reachable, and how many documents match in all."""

    hits: list[Hit]
    has_more: bool
    total: int


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


def restricted(
    schema: tantivy.Schema, query: tantivy.Query, restrictions: list[tuple[str, list[str]]]
) -> tantivy.Query:
    """`query`, matching only documents whose raw field holds one of the given values, for every field."""
    parts = [(tantivy.Occur.Must, query)]
    for field, values in restrictions:
        # Term queries advance lazily alongside the text query; a term set first collects every
        # document of every value, which costs more until the set is large.
        if len(values) == 1:
            matches = tantivy.Query.term_query(schema, field, values[0])
        elif len(values) <= _LAZY_FILTER_VALUES:
            matches = tantivy.Query.boolean_query(
                [(tantivy.Occur.Should, tantivy.Query.term_query(schema, field, v)) for v in values]
            )
        else:
            matches = tantivy.Query.term_set_query(schema, field, values)
        # A filter inside a Must would add to the BM25 score unless its own score is constant zero.
        parts.append((tantivy.Occur.Must, tantivy.Query.const_score_query(matches, 0.0)))
    return tantivy.Query.boolean_query(parts)


def build_query(schema: tantivy.Schema, clauses: list[AnalyzedClause], filters: SearchFilters) -> tantivy.Query:
    """The BM25 text query of the clauses, restricted by filters that add nothing to the score."""
    restrictions = [
        ("project_id", filters.project_ids),
        ("segmenter_id", filters.segmenter_ids),
        ("classification", list(filters.classes)),
    ]
    if filters.source_id is not None:
        restrictions.append(("source_id", [filters.source_id]))
    if filters.kind is not None:
        restrictions.append(("kind", [filters.kind]))
    return restricted(schema, text_query(schema, clauses), restrictions)


def search_page(
    searcher: tantivy.Searcher,
    query: tantivy.Query,
    *,
    limit: int,
    after: tuple[float, int] | None,
    offset: int,
    cap: int = MAX_REACHABLE_HITS,
) -> HitPage:
    """The `limit` hits after `after` (score, seq) in (score desc, seq asc) order, within the top `cap`."""
    wanted = min(cap, offset + limit + 1 + _SLACK)
    while True:
        result = searcher.search(query, wanted, count=True)
        addresses = [address for _, address in result.hits]
        seqs = searcher.fast_field_values("seq", addresses) if addresses else []
        ranked = sorted(
            ((float(score), int(seq)) for (score, _), seq in zip(result.hits, seqs, strict=True) if seq is not None),
            key=lambda hit: (-hit[0], hit[1]),
        )
        lowest_collected = ranked[-1][0] if ranked else 0.0
        if after is not None:
            cursor_key = (-after[0], after[1])
            ranked = [hit for hit in ranked if (-hit[0], hit[1]) > cursor_key]
        complete = len(result.hits) < wanted
        # Matches left uncollected score at most `lowest_collected`; if the page ends on that score, a tie
        # left out could belong on the page (Tantivy breaks ties by segment, not by seq): look further.
        settled = len(ranked) > limit and ranked[limit][0] > lowest_collected
        if complete or settled or wanted >= cap:
            break
        wanted = cap
    page = [Hit(seq, score) for score, seq in ranked[:limit]]
    total = int(getattr(result, "count", 0) or 0)  # `count` is missing from the type stubs
    return HitPage(page, has_more=len(ranked) > limit, total=total)
