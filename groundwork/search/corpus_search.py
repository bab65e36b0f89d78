"""Corpus search over the Tantivy index: the query from parsed clauses, filters, and keyset pages.

Hits are ordered by BM25 score (descending), ties by the passage's key `seq` (ascending). Tantivy
has no search-after, so a page re-runs the query, collects the top hits up to where the page ends
(never beyond `MAX_REACHABLE_HITS`) and keeps those strictly after the cursor's (score, seq).

A corpus query ranks as `search.ranking` says, and filters without scoring: the
caller's projects (one term where possible), and exclusions (classes the caller may not see,
segmenter versions that do not serve, sources whose class is changing) that cost nothing when empty.
Counting stops at the cap: `collect_ranked` takes the top `cap + 1` hits without counting every match.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

import tantivy

from groundwork.domain.evidence_search.analysis import AnalyzedClause
from groundwork.domain.evidence_search.corpus import MAX_REACHABLE_HITS
from groundwork.search.corpus_index import FURNITURE_FLAG
from groundwork.search.ranking import (
    PRESENCE_WEIGHT,
    IndexStatistics,
    WeightedClause,
    added_on,
    furniture_below_prose,
    furniture_scaled,
    ranking_query,
    term_or_phrase,
    weighted_clauses,
    zero_scored,
)

CLASSES = ("general", "financial", "staffing")


# Extra hits collected past the cursor's offset, so small shifts of the index between pages cost nothing.
_SLACK = 16


_LAZY_FILTER_VALUES = 64


@dataclass(frozen=True)
class SearchFilters:
    """Which passages may match: the caller's readable projects (and every project of their workspace, so
    the filter can name the smaller side), the classes it may see, and what does not serve."""

    workspace_id: str
    project_ids: list[str]
    workspace_project_ids: list[str] | None = None
    classes: tuple[str, ...] = ("general",)
    excluded_segmenters: tuple[str, ...] = ()
    excluded_sources: tuple[str, ...] = ()
    source_id: str | None = None
    kind: str | None = None


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


def _any_of(schema: tantivy.Schema, field: str, values: list[str]) -> tantivy.Query:
    if len(values) == 1:
        return tantivy.Query.term_query(schema, field, values[0])
    if len(values) <= _LAZY_FILTER_VALUES:
        return tantivy.Query.boolean_query(
            [(tantivy.Occur.Should, tantivy.Query.term_query(schema, field, v)) for v in values]
        )
    return tantivy.Query.term_set_query(schema, field, values)


def _admits_every_passage(stats: IndexStatistics | None, field: str, values: list[str]) -> bool:
    """Whether every passage document of the snapshot (deleted ones too) holds one of the values in `field`."""
    return stats is not None and sum(stats.doc_freq(field, v) for v in values) >= stats.passage_docs


def _excludes_something(stats: IndexStatistics | None, field: str, value: str) -> bool:
    """Whether some document of the snapshot (deleted ones too) holds `value` in `field`; True without statistics."""
    return stats is None or stats.doc_freq(field, value) > 0


def filter_clauses(
    schema: tantivy.Schema, filters: SearchFilters, stats: IndexStatistics | None = None
) -> list[tuple[tantivy.Occur, tantivy.Query]]:
    """Filters that add nothing to the score: one Must for where to look, MustNot for what must not serve.

    With the snapshot's statistics, a Must that every passage document satisfies (an index holding one
    workspace, or one project) is left out: it would exclude nothing and cost an intersection per match; so is
    a MustNot that no document holds (a class nobody uses), which would cost a term lookup in every segment."""
    must, must_not = tantivy.Occur.Must, tantivy.Occur.MustNot
    readable = sorted(set(filters.project_ids))
    everything = set(filters.workspace_project_ids or ())
    unreadable = sorted(everything - set(readable))
    parts: list[tuple[tantivy.Occur, tantivy.Query]] = []
    if len(readable) == 1:
        if not _admits_every_passage(stats, "project_id", readable):
            parts.append((must, zero_scored(tantivy.Query.term_query(schema, "project_id", readable[0]))))
    elif filters.workspace_project_ids is not None and len(unreadable) < len(readable):
        # One term finds the workspace; the few projects the caller may not read are taken out.
        if not _admits_every_passage(stats, "workspace_id", [filters.workspace_id]):
            parts.append((must, zero_scored(tantivy.Query.term_query(schema, "workspace_id", filters.workspace_id))))
        parts += [
            (must_not, tantivy.Query.term_query(schema, "project_id", p))
            for p in unreadable
            if _excludes_something(stats, "project_id", p)
        ]
    elif not _admits_every_passage(stats, "project_id", readable):
        parts.append((must, zero_scored(_any_of(schema, "project_id", readable))))
    exclusions = [("classification", c) for c in CLASSES if c not in filters.classes]
    exclusions += [("segmenter_id", s) for s in filters.excluded_segmenters]
    exclusions += [("source_id", s) for s in filters.excluded_sources]
    parts += [
        (must_not, tantivy.Query.term_query(schema, field, value))
        for field, value in exclusions
        if _excludes_something(stats, field, value)
    ]
    if filters.source_id is not None:
        parts.append((must, zero_scored(tantivy.Query.term_query(schema, "source_id", filters.source_id))))
    if filters.kind is not None:
        parts.append((must, zero_scored(tantivy.Query.term_query(schema, "kind", filters.kind))))
    return parts


def build_query(
    schema: tantivy.Schema,
    clauses: list[AnalyzedClause],
    filters: SearchFilters,
    stats: IndexStatistics | None = None,
    *,
    required: list[WeightedClause] | None = None,
    ranking: tantivy.Query | None = None,
    presence: float = PRESENCE_WEIGHT,
) -> tantivy.Query:
    """The query of the clauses (structure weighed with the snapshot's statistics), restricted by filters that
    add nothing to the score. `required`: only documents matching one of these clauses (scores unchanged).
    `ranking`: a ranking query to use instead of the clauses' own, weighed with `presence` (ranking.py)."""
    ranking = ranking if ranking is not None else ranking_query(schema, clauses, stats, presence=presence)
    ranking = furniture_below_prose(schema, ranking, stats)
    parts = [(tantivy.Occur.Must, ranking), *filter_clauses(schema, filters, stats)]
    if required is not None:
        # Scored zero and intersected, so a document's score is exactly its score in the whole query.
        either = tantivy.Query.boolean_query([(tantivy.Occur.Should, w.query) for w in required])
        parts.append((tantivy.Occur.Must, zero_scored(either)))
    return tantivy.Query.boolean_query(parts)


class RankedHit(NamedTuple):
    """A hit with its document address (to read the stored passage); a tuple, as a search makes one per match."""

    seq: int
    score: float
    address: tantivy.DocAddress


@dataclass(frozen=True)
class RankedPage:
    """A page of ranked hits, whether more are reachable, how many match (at most the cap), and whether more
    than the cap match."""

    hits: list[RankedHit]
    has_more: bool
    total: int
    truncated: bool


def collect_ranked(
    searcher: tantivy.Searcher,
    query: tantivy.Query,
    cap: int = MAX_REACHABLE_HITS,
    stats: IndexStatistics | None = None,
) -> list[RankedHit]:
    """The top `cap + 1` hits in (score desc, seq asc) order, without counting every match; any match left out
    scores at most the last one. With the snapshot's `stats`, a flagged furniture passage's score is scaled
    down here (`furniture_scaled`) rather than in the query."""
    flagged = stats is not None and stats.furniture_flagged
    wanted = cap + 1
    while True:
        found = searcher.search(query, wanted, count=False).hits  # a new list of new objects on every access
        addresses = [address for _, address in found]
        seqs = searcher.fast_field_values("seq", addresses) if addresses else []
        marks = searcher.fast_field_values(FURNITURE_FLAG, addresses) if flagged and addresses else [None] * len(found)
        hits = [
            RankedHit(int(seq), furniture_scaled(score) if mark else score, address)
            for (score, address), seq, mark in zip(found, seqs, marks, strict=True)
            if seq is not None
        ]
        if not flagged or len(found) < wanted:
            break
        # A match left out scores at most the lowest score collected, which a scaled furniture passage may now be
        # under: collect more until `cap + 1` hits score at least that much.
        edge = min(score for score, _ in found)
        if sum(1 for hit in hits if hit.score >= edge) > cap:
            break
        wanted *= 2
    hits.sort(key=lambda hit: (-hit[1], hit[0]))
    return hits[: cap + 1]


def filtered_documents(stats: IndexStatistics, filters: SearchFilters) -> int | None:
    """At most how many documents (deleted ones included) the filters let through, and at least how many minus
    what they exclude; None when a filter's size cannot be read from document frequencies."""
    if filters.source_id is not None or filters.kind is not None:
        return None
    readable = sorted(set(filters.project_ids))
    unreadable = sorted(set(filters.workspace_project_ids or ()) - set(readable))
    if len(readable) == 1:
        allowed = stats.doc_freq("project_id", readable[0])
    elif filters.workspace_project_ids is not None and len(unreadable) < len(readable):
        allowed = stats.doc_freq("workspace_id", filters.workspace_id)
        allowed -= sum(stats.doc_freq("project_id", p) for p in unreadable)
    else:
        allowed = sum(stats.doc_freq("project_id", p) for p in readable)
    allowed -= sum(stats.doc_freq("classification", c) for c in CLASSES if c not in filters.classes)
    allowed -= sum(stats.doc_freq("segmenter_id", s) for s in filters.excluded_segmenters)
    allowed -= sum(stats.doc_freq("source_id", s) for s in filters.excluded_sources)
    return allowed


def matches_more_than(
    stats: IndexStatistics, clauses: list[AnalyzedClause], filters: SearchFilters, count: int
) -> bool:
    """Whether document frequencies alone prove that more than `count` live documents match (so counting them
    is not needed): |word and filter| >= |word| + |filter| - all documents, less deleted and excluded ones."""
    if any(a.clause.occur == "must" for a in clauses):
        return False
    allowed = filtered_documents(stats, filters)
    if allowed is None:
        return False
    deleted = max(0, stats.total_docs - stats.searcher.num_docs)
    excluded = sum(
        stats.doc_freq("text", a.terms[0]) for a in clauses if a.clause.occur == "must_not" and len(a.terms) == 1
    )
    if any(a.clause.occur == "must_not" and len(a.terms) > 1 for a in clauses):
        return False
    best = max(
        (stats.doc_freq("text", a.terms[0]) for a in clauses if a.clause.occur == "should" and len(a.terms) == 1),
        default=0,
    )
    return best + allowed - stats.total_docs - deleted - excluded > count


def collect_page(
    searcher: tantivy.Searcher,
    schema: tantivy.Schema,
    clauses: list[AnalyzedClause],
    filters: SearchFilters,
    stats: IndexStatistics | None,
    *,
    limit: int,
    after: tuple[float, int] | None,
    offset: int = 0,
    cap: int = MAX_REACHABLE_HITS,
    presence: float = PRESENCE_WEIGHT,
) -> RankedPage:
    """A page of the query's hits: exact ranking, count exact up to the cap (`presence`: ranking.py).

    Counting stops at the cap: the top `cap + 1` hits are collected, unless document frequencies already prove
    that more than `cap` documents match; then only the hits up to the page's end are collected.

    When every clause is optional and some are frequent, it first asks only for documents holding one of the
    rare ones (MaxScore): a document holding nothing but frequent words scores at most the sum of their upper
    bounds, so if the page is full, its last hit scores above that bound, and the count is settled, that page
    is the page of the whole query. Otherwise the whole query runs. A query of three or more clauses with more
    than `cap` matches first tries `candidates`.
    """
    over_cap = stats is not None and matches_more_than(stats, clauses, filters, cap)
    wanted = min(cap + 1, offset + limit + 1 + _SLACK) if over_cap else cap + 1

    def page_of(ranked: list[RankedHit]) -> RankedPage:
        page = ranked_page(ranked, limit=limit, after=after, cap=cap)
        if over_cap:
            more = page.has_more or (len(page.hits) == limit and offset + limit < cap)
            return RankedPage(page.hits, more, cap, True)
        return page

    def settled(ranked: list[RankedHit], page: RankedPage) -> bool:
        # Tantivy keeps tied hits at the edge of what it collects by document address, not by seq: a page
        # that ends on the lowest score collected may be missing a tie.
        return len(ranked) < wanted or (bool(page.hits) and page.hits[-1].score > ranked[-1].score)

    # Each clause's query is built once (a long query, such as a work item's words, spent most of its CPU
    # building them), and the whole query's ranking part once for both attempts below.
    in_order = weighted_clauses(schema, clauses, stats, presence) if stats is not None else None
    whole = ranking_query(schema, clauses, stats, in_order, presence)
    if over_cap and stats is not None and in_order is not None and len(in_order) > 2:
        found = candidates(searcher, schema, clauses, filters, stats, in_order, wanted - 1, offset + limit)
        if found is not None:
            page = page_of(found.ranked)
            if len(page.hits) == limit and page.hits[-1].score > found.left_out:
                return page
    if in_order is not None and all(a.clause.occur != "must" for a in clauses):
        weighted = sorted(in_order, key=lambda w: w.upper_bound)
        frequent, bound = 0, 0.0
        while frequent < len(weighted) - 1 and bound + weighted[frequent].upper_bound < 0.5 * weighted[-1].upper_bound:
            bound += weighted[frequent].upper_bound
            frequent += 1
        if frequent:
            if frequent == 1 and len(weighted) == 2:
                # One rare word required, the frequent one optional: a sum of two scores does not depend on
                # their order, so the scores are exactly the whole query's, and Tantivy walks the rare word.
                must_not = tantivy.Occur.MustNot
                excluded = [
                    (must_not, term_or_phrase(schema, "text", a.terms)) for a in clauses if a.clause.occur == "must_not"
                ]
                pair = tantivy.Query.boolean_query(
                    [(tantivy.Occur.Must, weighted[1].query), (tantivy.Occur.Should, weighted[0].query), *excluded]
                )
                query = build_query(schema, clauses, filters, stats, ranking=pair)
            else:
                query = build_query(schema, clauses, filters, stats, required=weighted[frequent:], ranking=whole)
            ranked = collect_ranked(searcher, query, wanted - 1, stats)
            if over_cap or len(ranked) > cap:
                page = page_of(ranked)
                if len(page.hits) == limit and page.hits[-1].score > bound and settled(ranked, page):
                    return page
    query = build_query(schema, clauses, filters, stats, ranking=whole)
    ranked = collect_ranked(searcher, query, wanted - 1, stats)
    page = page_of(ranked)
    if wanted <= cap and not (len(page.hits) == limit and settled(ranked, page)):
        # A tie at the edge, or a cursor deeper than what was collected: collect to the cap.
        page = page_of(collect_ranked(searcher, query, cap, stats))
    return page


# Two sums of the same scores added in another order differ by at most (addends - 1) units in the last place of a
# 32-bit float each (~1.5e-5 for a 64-word query and its pairs): a bound read from one query and compared with the
# scores of another is widened by this share.
_ROUNDING = 1e-4


class Candidates(NamedTuple):
    """Documents scored by the whole query, and a bound above the score of every matching document left out."""

    ranked: list[RankedHit]
    left_out: float


# The rarest words whose best documents set the floor `candidates` compares bounds with: enough of them to hold
# this many times the documents a page needs.
_FLOOR_DOCUMENTS = 4


def whole_query_on(
    documents: tantivy.Query, clauses: list[WeightedClause], excluded: list[tuple[tantivy.Occur, tantivy.Query]]
) -> tantivy.Query:
    """The whole query's score of each of `documents` (a zero-scored query), to the bit, at a seek per clause.

    The whole query is a union of its clauses, and a union that is sought scores every posting of every clause
    in a window of 4,096 documents: for 20 candidates, that was most of a question's rescoring. Here each
    clause is added on top of the documents, one by one, and sought in its own postings. The sum is the
    union's, in the same order (0, then each matching clause in turn, in 32-bit floats), so the scores are
    the same bits (tests/unit/search/test_candidate_pages.py compares them)."""
    ranked = tantivy.Query.boolean_query([(tantivy.Occur.Must, documents), *excluded]) if excluded else documents
    return added_on(ranked, [clause.sought for clause in clauses])


def candidates(
    searcher: tantivy.Searcher,
    schema: tantivy.Schema,
    clauses: list[AnalyzedClause],
    filters: SearchFilters,
    stats: IndexStatistics,
    weighted: list[WeightedClause],
    count: int,
    needed: int,
) -> Candidates | None:
    """The best documents of a query, found without scoring its frequent words' postings; None when no word can
    be left optional.

    Tantivy scores every match of a query that is not a plain union of terms, and a union it seeks scores
    every posting of its words in a window of 4,096 documents: asking the whole query only for documents of
    its rarer clauses (as `collect_page` does otherwise) still scores nearly every posting of a word in most
    passages. Here:

    1. the best `needed` documents of the rarest words alone set a floor: at least `needed` documents score
       that much in the whole query, so the page's last hit does;
    2. the most frequent words whose documents (holding no other clause) score below that floor, with the
       proximity pairs between them, are left optional: the other clauses are required, and each optional
       word or pair is added on top of them, a seek in its own postings per document, scoring what the whole
       query gives it, summed in another order;
    3. the top `count + 1` of that query are ranked; the first `needed` of them (and any too close to the last
       of those) are scored again with the whole query's clauses on those documents alone
       (`whole_query_on`): their whole-query scores, to the bit.

    Any other matching document scores at most the first one left out, or, holding none of the required
    clauses, less than the floor: the page is the whole query's when its last hit scores above both.
    """
    if any(a.clause.occur == "must" for a in clauses):
        return None
    ranked_clauses = sum(1 for a in clauses if a.clause.occur != "must_not")
    scored, pairs = weighted[:ranked_clauses], weighted[ranked_clauses:]
    words = [w for w in scored if len(w.analyzed.terms) == 1]
    words.sort(key=lambda w: stats.doc_freq("text", w.analyzed.terms[0]))

    def bound(optional: list[WeightedClause]) -> float:  # of a document holding no required clause
        within = {w.analyzed.terms[0] for w in optional}
        within_pairs = [p for p in pairs if all(t in within for t in p.analyzed.terms)]
        return sum(w.upper_bound for w in [*optional, *within_pairs])

    rarest, documents = 0, 0
    while rarest < len(words) and documents < _FLOOR_DOCUMENTS * needed:
        documents += stats.doc_freq("text", words[rarest].analyzed.terms[0])
        rarest += 1
    optional = words[rarest:][::-1]  # the most frequent first
    if not optional:
        return None
    should, must_not = tantivy.Occur.Should, tantivy.Occur.MustNot
    excluded = [(must_not, term_or_phrase(schema, "text", a.terms)) for a in clauses if a.clause.occur == "must_not"]

    def ranked_with(optional: list[WeightedClause]) -> list[RankedHit]:
        required = [w for w in scored if all(w is not o for o in optional)]
        ranking = tantivy.Query.boolean_query([(should, w.query) for w in required] + excluded)
        # Each added on top of the required clauses, never a union. A proximity pair holds both its words:
        # outside the required clauses' documents, only a pair of optional words scores.
        ranking = added_on(ranking, [clause.sought for clause in [*optional, *pairs]])
        return collect_ranked(searcher, build_query(schema, clauses, filters, stats, ranking=ranking), count, stats)

    found = ranked_with(optional)
    if len(found) < needed:
        return None
    # At least `needed` documents score this much in the whole query: a document holding only optional words
    # that cannot reach it is never on the page.
    floor = found[needed - 1].score * (1.0 - _ROUNDING)
    if bound(optional) >= floor:
        fewer: list[WeightedClause] = []
        for word in optional:
            if bound([*fewer, word]) >= floor:
                break
            fewer.append(word)
        if not fewer:
            return None
        optional = fewer
        found = ranked_with(optional)
    # Only the first `needed` and those too close to the last of them are scored again: the rest score at most
    # the first one left out.
    kept = min(needed, len(found))
    while kept < len(found) and found[kept].score * (1.0 + _ROUNDING) >= found[kept - 1].score * (1.0 - _ROUNDING):
        kept += 1
    seqs = [tantivy.Query.term_query(schema, "seq", hit.seq) for hit in found[:kept]]
    only = zero_scored(tantivy.Query.boolean_query([(should, seq) for seq in seqs]))
    exact = whole_query_on(only, weighted, excluded)
    ranked = collect_ranked(searcher, build_query(schema, clauses, filters, stats, ranking=exact), kept, stats)
    if len(ranked) != kept or any(hit.score <= 0.0 for hit in ranked):  # one the whole query does not find
        return None
    if kept < len(found):
        lowest = found[kept].score * (1.0 + _ROUNDING)
    else:
        lowest = found[-1].score * (1.0 + _ROUNDING) if len(found) > count else 0.0
    return Candidates(ranked, max(lowest, bound(optional)))


def ranked_page(
    ranked: list[RankedHit], *, limit: int, after: tuple[float, int] | None, cap: int = MAX_REACHABLE_HITS
) -> RankedPage:
    """The `limit` hits after `after` (score, seq) among the first `cap`; the total stops at the cap."""
    reachable = ranked[:cap]
    if after is not None:
        cursor_key = (-after[0], after[1])
        reachable = [hit for hit in reachable if (-hit.score, hit.seq) > cursor_key]
    return RankedPage(
        reachable[:limit], has_more=len(reachable) > limit, total=min(len(ranked), cap), truncated=len(ranked) > cap
    )


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
