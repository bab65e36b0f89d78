"""Passages for hits: the index finds, PostgreSQL (the truth) hydrates and re-checks.

Shared by the evidence search service and by draft generation in the worker, so neither reaches
into the other's layer.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any

from groundwork.domain.corpus import QueryClause
from groundwork.persistence.repositories import corpus as repo
from groundwork.search.analysis import AnalyzedClause, analyze_clauses, highlight_ranges
from groundwork.search.corpus_index import corpus_index
from groundwork.search.corpus_search import Hit, HitPage, SearchFilters, build_query, search_page


@dataclass(frozen=True)
class PassageHit:
    """One passage of the answer, exactly as stored, with its score and highlight offsets."""

    id: str
    project_id: str
    source_id: str
    source_title: str
    source_uri: str
    source_kind: str
    version_id: str
    page: int | None
    paragraph: int | None
    section: str | None
    char_start: int
    char_end: int
    text: str
    score: float
    highlights: list[tuple[int, int]]
    provenance_quality: str
    segmenter_version: str


async def find_hits(
    workspace_id: str,
    project_ids: list[str],
    segmenter_ids: list[str],
    clauses: list[AnalyzedClause],
    *,
    limit: int,
    after: tuple[float, int] | None,
    offset: int,
    source_id: str | None = None,
    kind: str | None = None,
    classes: tuple[str, ...] = ("general",),
) -> tuple[HitPage, dict[int, dict[str, Any]]]:
    """One page of hits for the clauses in the given projects, classes and segmenters, with their stored rows."""
    empty: tuple[HitPage, dict[int, dict[str, Any]]] = (HitPage([], False, 0), {})
    if not project_ids or not segmenter_ids:
        return empty
    index = corpus_index()
    searcher = await asyncio.to_thread(index.searcher)
    if searcher is None:
        return empty
    query = build_query(index.schema, clauses, SearchFilters(project_ids, segmenter_ids, source_id, kind, classes))
    page = await asyncio.to_thread(search_page, searcher, query, limit=limit, after=after, offset=offset)
    # PostgreSQL is the truth: a passage the index still holds but that no longer serves is dropped here.
    rows = await repo.passages_for_hits(workspace_id, [h.seq for h in page.hits], project_ids, list(classes))
    return page, rows


def passage_hit(hit: Hit, row: dict[str, Any], clauses: list[AnalyzedClause]) -> PassageHit:
    """A hit with its stored passage, exactly as stored, and the highlight offsets of the clauses."""
    return PassageHit(
        id=row["id"],
        project_id=row["project_id"],
        source_id=row["source_id"],
        source_title=row["title"],
        source_uri=row["uri"],
        source_kind=row["kind"],
        version_id=row["version_id"],
        page=row["page"],
        paragraph=row["paragraph"],
        section=row["section"],
        char_start=row["char_start"],
        char_end=row["char_end"],
        text=row["text"],
        score=hit.score,
        highlights=highlight_ranges(row["text"], clauses),
        provenance_quality=row["provenance_quality"],
        segmenter_version=row["segmenter_id"],
    )


async def project_passages(workspace_id: str, project_id: str, text: str, limit: int = 10) -> list[PassageHit]:
    """Best passages of one project for free text (every word optional), for services grounding drafts.

    The caller has already established that its principal may read the project's context; only
    `general` sources are used, since what is built from them may be shown to anyone on the project.
    """
    words = [QueryClause(word, False, "should", 0) for word in text.split()[:64]]
    clauses = analyze_clauses(words)
    if not clauses:
        return []
    segmenter_ids = await repo.active_segmenter_ids()
    page, rows = await find_hits(workspace_id, [project_id], segmenter_ids, clauses, limit=limit, after=None, offset=0)
    return [passage_hit(hit, rows[hit.seq], clauses) for hit in page.hits if hit.seq in rows]
