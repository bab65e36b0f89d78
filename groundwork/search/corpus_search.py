"""Corpus search over the Tantivy index: the query from parsed clauses, filters, and keyset pages.

Hits are ordered by BM25 score (descending), ties by the passage's key `seq` (ascending). Tantivy
has no search-after, so a page re-runs the query, collects the top hits up to where the page ends
(never beyond `MAX_REACHABLE_HITS`) and keeps those strictly after the cursor's (score, seq).

A corpus query ranks each word over the passage text and the document's structure (title, heading
path, and the heading of the passage that opens a section), and filters without scoring: the
caller's projects (one term where possible), and exclusions (classes the caller may not see,
segmenter versions that do not serve, sources whose class is changing) that cost nothing when empty.
Counting stops at the cap: `collect_ranked` takes the top `cap + 1` hits without counting every match.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from typing import NamedTuple

import tantivy

from groundwork.domain.evidence_search.analysis import AnalyzedClause
from groundwork.domain.evidence_search.corpus import MAX_REACHABLE_HITS, QueryClause
from groundwork.search.corpus_index import FURNITURE, FURNITURE_FIELD

# What a content word matching the document's structure is worth, as a multiple of its idf in the passage text
# (its rarity in the corpus, so a frequent word lifts little and a stopword never counts): the heading that
# opens the passage's own section says most about it, the heading path about the section around it, the
# document title about the whole document. A word counts once, in the strongest field it is in. The text
# itself is ranked by BM25 (at most (k1 + 1) = 2.2 times the word's idf). Structure scores are constant per
# match: these fields are short and absent from many passages, where BM25's length normalisation against
# their tiny average length would crush every match.
STRUCTURE_WEIGHTS: tuple[tuple[str, float], ...] = (("heading", 2.5), ("title", 0.5), ("section", 1.0))
# Two neighbouring words of a question found within this many positions of each other in a passage (about a
# sentence) add their pair's BM25 again, at this weight: passages that hold them together rank above passages
# that hold them far apart.
PROXIMITY_SLOP = 20
PROXIMITY_WEIGHT = 1.0
# A furniture passage's score is multiplied by this: below prose that matches as well, still findable.
FURNITURE_FACTOR = 0.3
CLASSES = ("general", "financial", "staffing")

_OCCUR = {"should": tantivy.Occur.Should, "must": tantivy.Occur.Must, "must_not": tantivy.Occur.MustNot}
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


def _term_or_phrase(schema: tantivy.Schema, field: str, terms: tuple[str, ...]) -> tantivy.Query:
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
        try:
            self.furniture_docs = int(searcher.doc_freq(FURNITURE_FIELD, FURNITURE))
        except ValueError:  # a generation of an earlier schema, without the mark: nothing is furniture there
            self.furniture_docs = 0
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
    """A clause's query and the highest score it can add to any document."""

    analyzed: AnalyzedClause
    query: tantivy.Query
    upper_bound: float


def clause_query(schema: tantivy.Schema, analyzed: AnalyzedClause, stats: IndexStatistics) -> WeightedClause:
    """A word or phrase: BM25 over the text, plus a constant score for the strongest structure field it matches,
    weighted by its rarity in the text (a field's length does not count, and a word repeated in the title,
    the heading path and the opening heading counts once)."""
    text = _term_or_phrase(schema, "text", analyzed.terms)
    idf_text = stats.idf("text", analyzed.terms)
    structure = [
        tantivy.Query.const_score_query(_term_or_phrase(schema, field, analyzed.terms), weight * idf_text)
        for field, weight in STRUCTURE_WEIGHTS
        if all(stats.doc_freq(field, term) for term in analyzed.terms)  # no passage has it there: nothing to add
    ]
    bound = (1.0 + _K1) * idf_text
    if not structure:
        return WeightedClause(analyzed, text, bound * 1.001)
    lift = structure[0] if len(structure) == 1 else tantivy.Query.disjunction_max_query(structure)
    bound += max(weight for _, weight in STRUCTURE_WEIGHTS) * idf_text
    query = tantivy.Query.boolean_query([(tantivy.Occur.Should, text), (tantivy.Occur.Should, lift)])
    return WeightedClause(analyzed, query, bound * 1.001)  # a margin for Tantivy's 32-bit arithmetic


def proximity_clauses(
    schema: tantivy.Schema, clauses: list[AnalyzedClause], stats: IndexStatistics
) -> list[WeightedClause]:
    """Each two neighbouring words of the question, near each other in a passage: a sloppy phrase that lifts
    passages matching them close together over passages that hold them far apart."""
    words = [a for a in clauses if a.clause.occur != "must_not" and len(a.terms) == 1]
    found = []
    for first, second in itertools.pairwise(words):
        if first.terms == second.terms:
            continue
        pair = (first.terms[0], second.terms[0])
        query = tantivy.Query.boost_query(
            tantivy.Query.phrase_query(schema, "text", list(pair), slop=PROXIMITY_SLOP), PROXIMITY_WEIGHT
        )
        clause = QueryClause(f"{first.clause.text} {second.clause.text}", True, "should", first.clause.position)
        bound = PROXIMITY_WEIGHT * (1.0 + _K1) * stats.idf("text", pair)
        found.append(WeightedClause(AnalyzedClause(clause, pair), query, bound * 1.001))
    return found


def weighted_clauses(
    schema: tantivy.Schema, clauses: list[AnalyzedClause], stats: IndexStatistics
) -> list[WeightedClause]:
    """Every clause that ranks or must match, weighed, and the proximity of neighbouring words; excluded ones
    are left to `ranking_query`."""
    weighted = [clause_query(schema, a, stats) for a in clauses if a.clause.occur != "must_not"]
    return weighted + proximity_clauses(schema, clauses, stats)


def ranking_query(
    schema: tantivy.Schema,
    clauses: list[AnalyzedClause],
    stats: IndexStatistics | None = None,
    weighted: list[WeightedClause] | None = None,
) -> tantivy.Query:
    """The query of the clauses: plain ones rank, `+` ones must match (anywhere), `-` ones must not be in the
    text. Without statistics (which weigh structure) only the text ranks, as before structure counted.
    `weighted`: the clauses' `weighted_clauses`, when the caller has them already."""
    if stats is None:
        return text_query(schema, clauses)
    must_not = tantivy.Occur.MustNot
    excluded = [(must_not, _term_or_phrase(schema, "text", a.terms)) for a in clauses if a.clause.occur == "must_not"]
    if weighted is None:
        weighted = weighted_clauses(schema, clauses, stats)
    ranked = [(_OCCUR[w.analyzed.clause.occur], w.query) for w in weighted]
    return tantivy.Query.boolean_query(ranked + excluded)


def _const(query: tantivy.Query) -> tantivy.Query:
    # A filter inside a Must would add to the BM25 score unless its own score is constant zero.
    return tantivy.Query.const_score_query(query, 0.0)


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
            parts.append((must, _const(tantivy.Query.term_query(schema, "project_id", readable[0]))))
    elif filters.workspace_project_ids is not None and len(unreadable) < len(readable):
        # One term finds the workspace; the few projects the caller may not read are taken out.
        if not _admits_every_passage(stats, "workspace_id", [filters.workspace_id]):
            parts.append((must, _const(tantivy.Query.term_query(schema, "workspace_id", filters.workspace_id))))
        parts += [
            (must_not, tantivy.Query.term_query(schema, "project_id", p))
            for p in unreadable
            if _excludes_something(stats, "project_id", p)
        ]
    elif not _admits_every_passage(stats, "project_id", readable):
        parts.append((must, _const(_any_of(schema, "project_id", readable))))
    exclusions = [("classification", c) for c in CLASSES if c not in filters.classes]
    exclusions += [("segmenter_id", s) for s in filters.excluded_segmenters]
    exclusions += [("source_id", s) for s in filters.excluded_sources]
    parts += [
        (must_not, tantivy.Query.term_query(schema, field, value))
        for field, value in exclusions
        if _excludes_something(stats, field, value)
    ]
    if filters.source_id is not None:
        parts.append((must, _const(tantivy.Query.term_query(schema, "source_id", filters.source_id))))
    if filters.kind is not None:
        parts.append((must, _const(tantivy.Query.term_query(schema, "kind", filters.kind))))
    return parts


def furniture_below_prose(
    schema: tantivy.Schema, ranking: tantivy.Query, stats: IndexStatistics | None
) -> tantivy.Query:
    """`ranking`, with a furniture passage's score scaled down: it ranks below prose that matches as well."""
    if stats is None or not stats.furniture_docs:
        return ranking
    furniture = tantivy.Query.term_query(schema, FURNITURE_FIELD, FURNITURE)
    prose = tantivy.Query.boolean_query([(tantivy.Occur.Must, ranking), (tantivy.Occur.MustNot, furniture)])
    scaled = tantivy.Query.boost_query(ranking, FURNITURE_FACTOR)
    framing = tantivy.Query.boolean_query([(tantivy.Occur.Must, scaled), (tantivy.Occur.Must, _const(furniture))])
    return tantivy.Query.boolean_query([(tantivy.Occur.Should, prose), (tantivy.Occur.Should, framing)])


def build_query(
    schema: tantivy.Schema,
    clauses: list[AnalyzedClause],
    filters: SearchFilters,
    stats: IndexStatistics | None = None,
    *,
    required: list[WeightedClause] | None = None,
    ranking: tantivy.Query | None = None,
) -> tantivy.Query:
    """The query of the clauses (structure weighed with the snapshot's statistics), restricted by filters that
    add nothing to the score. `required`: only documents matching one of these clauses (scores unchanged).
    `ranking`: a ranking query to use instead of the clauses' own."""
    ranking = ranking if ranking is not None else ranking_query(schema, clauses, stats)
    ranking = furniture_below_prose(schema, ranking, stats)
    parts = [(tantivy.Occur.Must, ranking), *filter_clauses(schema, filters, stats)]
    if required is not None:
        # Scored zero and intersected, so a document's score is exactly its score in the whole query.
        either = tantivy.Query.boolean_query([(tantivy.Occur.Should, w.query) for w in required])
        parts.append((tantivy.Occur.Must, _const(either)))
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


def collect_ranked(searcher: tantivy.Searcher, query: tantivy.Query, cap: int = MAX_REACHABLE_HITS) -> list[RankedHit]:
    """The top `cap + 1` hits in (score desc, seq asc) order, without counting every match."""
    found = searcher.search(query, cap + 1, count=False).hits  # a new list of new objects on every access
    addresses = [address for _, address in found]
    seqs = searcher.fast_field_values("seq", addresses) if addresses else []
    hits = [
        RankedHit(int(seq), score, address)
        for (score, address), seq in zip(found, seqs, strict=True)
        if seq is not None
    ]
    hits.sort(key=lambda hit: (-hit[1], hit[0]))
    return hits


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
) -> RankedPage:
    """A page of the query's hits: exact ranking, count exact up to the cap.

    Counting stops at the cap: the top `cap + 1` hits are collected, unless document frequencies already prove
    that more than `cap` documents match; then only the hits up to the page's end are collected.

    When every clause is optional and some are frequent, it first asks only for documents holding one of the
    rare ones (MaxScore): a document holding nothing but frequent words scores at most the sum of their upper
    bounds, so if the page is full, its last hit scores above that bound, and the count is settled, that page
    is the page of the whole query. Otherwise the whole query runs.
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
    in_order = weighted_clauses(schema, clauses, stats) if stats is not None else None
    whole = ranking_query(schema, clauses, stats, in_order)
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
                    (must_not, _term_or_phrase(schema, "text", a.terms))
                    for a in clauses
                    if a.clause.occur == "must_not"
                ]
                pair = tantivy.Query.boolean_query(
                    [(tantivy.Occur.Must, weighted[1].query), (tantivy.Occur.Should, weighted[0].query), *excluded]
                )
                query = build_query(schema, clauses, filters, stats, ranking=pair)
            else:
                query = build_query(schema, clauses, filters, stats, required=weighted[frequent:], ranking=whole)
            ranked = collect_ranked(searcher, query, wanted - 1)
            if over_cap or len(ranked) > cap:
                page = page_of(ranked)
                if len(page.hits) == limit and page.hits[-1].score > bound and settled(ranked, page):
                    return page
    query = build_query(schema, clauses, filters, stats, ranking=whole)
    ranked = collect_ranked(searcher, query, wanted - 1)
    page = page_of(ranked)
    if wanted <= cap and not (len(page.hits) == limit and settled(ranked, page)):
        # A tie at the edge, or a cursor deeper than what was collected: collect to the cap.
        page = page_of(collect_ranked(searcher, query, cap))
    return page


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
