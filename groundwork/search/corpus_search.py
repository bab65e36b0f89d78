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

from dataclasses import dataclass

import tantivy

from groundwork.domain.corpus import MAX_REACHABLE_HITS
from groundwork.search.analysis import AnalyzedClause

# How much a match counts in each field: a heading that opens the passage's section, the document title
# and the heading path say what the passage is about; the text is where the words are.
FIELD_BOOSTS: tuple[tuple[str, float], ...] = (("text", 1.0), ("title", 1.5), ("section", 1.0), ("heading", 3.0))
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


def clause_query(schema: tantivy.Schema, analyzed: AnalyzedClause) -> tantivy.Query:
    """A word or phrase over the text and the document structure, each field with its weight."""
    parts = []
    for field, boost in FIELD_BOOSTS:
        query = _term_or_phrase(schema, field, analyzed.terms)
        parts.append((tantivy.Occur.Should, query if boost == 1.0 else tantivy.Query.boost_query(query, boost)))
    return tantivy.Query.boolean_query(parts)


def ranking_query(schema: tantivy.Schema, clauses: list[AnalyzedClause], *, structure: bool = True) -> tantivy.Query:
    """The BM25 query of the clauses: plain ones rank, `+` ones must match (anywhere), `-` ones must not be in
    the text. `structure=False` ranks the text alone (how search ranked before structure counted)."""
    if not structure:
        return text_query(schema, clauses)
    parts = []
    for analyzed in clauses:
        occur = analyzed.clause.occur
        if occur == "must_not":
            parts.append((tantivy.Occur.MustNot, _term_or_phrase(schema, "text", analyzed.terms)))
        else:
            parts.append((_OCCUR[occur], clause_query(schema, analyzed)))
    return tantivy.Query.boolean_query(parts)


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


def filter_clauses(schema: tantivy.Schema, filters: SearchFilters) -> list[tuple[tantivy.Occur, tantivy.Query]]:
    """Filters that add nothing to the score: one Must for where to look, MustNot for what must not serve."""
    must, must_not = tantivy.Occur.Must, tantivy.Occur.MustNot
    readable = sorted(set(filters.project_ids))
    everything = set(filters.workspace_project_ids or ())
    unreadable = sorted(everything - set(readable))
    parts: list[tuple[tantivy.Occur, tantivy.Query]] = []
    if len(readable) == 1:
        parts.append((must, _const(tantivy.Query.term_query(schema, "project_id", readable[0]))))
    elif filters.workspace_project_ids is not None and len(unreadable) < len(readable):
        # One term finds the workspace; the few projects the caller may not read are taken out.
        parts.append((must, _const(tantivy.Query.term_query(schema, "workspace_id", filters.workspace_id))))
        parts += [(must_not, tantivy.Query.term_query(schema, "project_id", p)) for p in unreadable]
    else:
        parts.append((must, _const(_any_of(schema, "project_id", readable))))
    parts += [
        (must_not, tantivy.Query.term_query(schema, "classification", c)) for c in CLASSES if c not in filters.classes
    ]
    parts += [(must_not, tantivy.Query.term_query(schema, "segmenter_id", s)) for s in filters.excluded_segmenters]
    parts += [(must_not, tantivy.Query.term_query(schema, "source_id", s)) for s in filters.excluded_sources]
    if filters.source_id is not None:
        parts.append((must, _const(tantivy.Query.term_query(schema, "source_id", filters.source_id))))
    if filters.kind is not None:
        parts.append((must, _const(tantivy.Query.term_query(schema, "kind", filters.kind))))
    return parts


def build_query(
    schema: tantivy.Schema, clauses: list[AnalyzedClause], filters: SearchFilters, *, structure: bool = True
) -> tantivy.Query:
    """The BM25 query of the clauses, restricted by filters that add nothing to the score."""
    ranking = ranking_query(schema, clauses, structure=structure)
    return tantivy.Query.boolean_query([(tantivy.Occur.Must, ranking), *filter_clauses(schema, filters)])


@dataclass(frozen=True)
class RankedHit:
    """A hit with its document address (to read the stored passage)."""

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
    result = searcher.search(query, cap + 1, count=False)
    addresses = [address for _, address in result.hits]
    seqs = searcher.fast_field_values("seq", addresses) if addresses else []
    hits = [
        RankedHit(int(seq), float(score), address)
        for (score, address), seq in zip(result.hits, seqs, strict=True)
        if seq is not None
    ]
    hits.sort(key=lambda hit: (-hit.score, hit.seq))
    return hits


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
