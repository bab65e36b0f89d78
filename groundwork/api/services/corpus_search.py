"""Evidence search: exact stored passages of the caller's visible projects, ranked by BM25.

REST (`POST /api/v1/context/search`), GraphQL (`contextCorpusSearch`) and MCP (`search_context`) all
call `search_corpus`. It never synthesizes: every passage's `text` is characters stored from the
source, and only active source-content versions of the active segmenter version surface.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import math
from dataclasses import dataclass
from typing import Any, TypeGuard

from groundwork.domain.corpus import (
    MAX_QUERY_CHARS,
    MAX_REACHABLE_HITS,
    SOURCE_KINDS,
    SUBJECT_TYPES,
    InvalidQuery,
    QueryClause,
    parse_query,
)
from groundwork.domain.errors import FieldError, InvalidRequest, NotFound
from groundwork.domain.pagination import encode_cursor, page_request
from groundwork.domain.principals import Principal
from groundwork.persistence.repositories import corpus as repo
from groundwork.search.analysis import AnalyzedClause, analyze_clauses, highlight_ranges
from groundwork.search.corpus_index import corpus_index
from groundwork.search.corpus_search import Hit, HitPage, SearchFilters, build_query, search_page

CONTEXT_READ = "context:read"


@dataclass(frozen=True)
class CorpusSearch:
    """A search as a caller asks it (validated by `search_corpus`)."""

    subject_type: str
    subject_id: str
    query: str
    limit: int | None = None
    cursor: str | None = None
    source_id: str | None = None
    kind: str | None = None


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


@dataclass(frozen=True)
class CorpusSearchResult:
    """A page of passages, the keyset page info, whether hits were cut at the cap, and the match count."""

    passages: list[PassageHit]
    page: dict[str, Any]
    truncated: bool
    total_count: int


def _validate(search: CorpusSearch) -> None:
    errors = []
    if search.subject_type not in SUBJECT_TYPES:
        errors.append(FieldError("subject_ref.type", f"must be one of {', '.join(SUBJECT_TYPES)}"))
    if not search.subject_id.strip() or "\x00" in search.subject_id:
        errors.append(FieldError("subject_ref.id", "must be a non-empty id"))
    if len(search.query) > MAX_QUERY_CHARS:
        errors.append(FieldError("query", f"must be at most {MAX_QUERY_CHARS} characters"))
    if search.kind is not None and search.kind not in SOURCE_KINDS:
        errors.append(FieldError("kind", f"must be one of {', '.join(SOURCE_KINDS)}"))
    if search.source_id is not None and (not search.source_id.strip() or "\x00" in search.source_id):
        errors.append(FieldError("source_id", "must be a non-empty id"))
    if errors:
        raise InvalidRequest("The search request is not valid.", errors)


def _analyzed(clauses: list[QueryClause]) -> list[AnalyzedClause]:
    analyzed = analyze_clauses(clauses)
    if not any(a.clause.occur != "must_not" for a in analyzed):
        first = next((c for c in clauses if c.occur != "must_not"), clauses[0])
        raise InvalidQuery("no searchable word: use letters or digits", first.position)
    return analyzed


def _fingerprint(search: CorpusSearch) -> str:
    raw = json.dumps([search.subject_type, search.subject_id, search.query, search.source_id, search.kind])
    return hashlib.sha256(raw.encode()).hexdigest()[:16]


async def search_scope(principal: Principal, subject_type: str, subject_id: str) -> repo.SearchScope:
    """The subject's projects where the caller holds `context:read`; 404 when it sees none of them."""
    scope = await repo.search_scope(
        principal.workspace_id, principal.id, principal.is_admin, subject_type, subject_id, CONTEXT_READ
    )
    # An admin sees an empty engagement; anyone else cannot tell it from one they may not see.
    visible = scope.readable_project_ids or (principal.is_admin and not scope.child_project_ids)
    if not scope.subject_exists or not visible:
        raise NotFound(f"No such {subject_type}.")
    return scope


async def _hits(
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
) -> tuple[HitPage, dict[int, dict[str, Any]]]:
    empty: tuple[HitPage, dict[int, dict[str, Any]]] = (HitPage([], False, 0), {})
    if not project_ids or not segmenter_ids:
        return empty
    index = corpus_index()
    searcher = await asyncio.to_thread(index.searcher)
    if searcher is None:
        return empty
    query = build_query(index.schema, clauses, SearchFilters(project_ids, segmenter_ids, source_id, kind))
    page = await asyncio.to_thread(search_page, searcher, query, limit=limit, after=after, offset=offset)
    # PostgreSQL is the truth: a passage the index still holds but that no longer serves is dropped here.
    rows = await repo.passages_for_hits(workspace_id, [h.seq for h in page.hits], project_ids)
    return page, rows


def _passage(hit: Hit, row: dict[str, Any], clauses: list[AnalyzedClause]) -> PassageHit:
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


# A cursor is client input: JSON bools pass as ints, `1e400` decodes to infinity and a huge int overflows a float.
def _is_int(value: object) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool)


def _cursor_score(value: object) -> float | None:
    if not (_is_int(value) or isinstance(value, float)):
        return None
    try:
        score = float(value)
    except OverflowError:
        return None
    return score if math.isfinite(score) else None


async def search_corpus(principal: Principal, search: CorpusSearch) -> CorpusSearchResult:
    """Ranked exact passages for a project, engagement or portfolio subject, keyset-paginated."""
    _validate(search)
    page_req = page_request(search.limit, search.cursor)
    clauses = _analyzed(parse_query(search.query))
    fingerprint = _fingerprint(search)
    after: tuple[float, int] | None = None
    offset = 0
    if page_req.after is not None:
        position = page_req.after
        score, seq, skipped = _cursor_score(position.get("s")), position.get("q"), position.get("o")
        if position.get("f") != fingerprint or score is None or not _is_int(seq) or not _is_int(skipped):
            raise InvalidRequest("Invalid cursor.", [FieldError("cursor", "belongs to another search or is damaged")])
        after = (score, seq)
        offset = max(0, skipped)
    scope = await search_scope(principal, search.subject_type, search.subject_id)
    page, rows = await _hits(
        principal.workspace_id,
        scope.readable_project_ids,
        scope.active_segmenter_ids,
        clauses,
        limit=page_req.limit,
        after=after,
        offset=offset,
        source_id=search.source_id,
        kind=search.kind,
    )
    passages = [_passage(hit, rows[hit.seq], clauses) for hit in page.hits if hit.seq in rows]
    next_cursor = None
    if page.has_more and page.hits:
        last = page.hits[-1]
        next_cursor = encode_cursor({"f": fingerprint, "s": last.score, "q": last.seq, "o": offset + len(page.hits)})
    return CorpusSearchResult(
        passages=passages,
        page={"next_cursor": next_cursor, "has_more": page.has_more},
        truncated=page.total > MAX_REACHABLE_HITS,
        total_count=page.total,
    )


async def project_passages(workspace_id: str, project_id: str, text: str, limit: int = 10) -> list[PassageHit]:
    """Best passages of one project for free text (every word optional), for services grounding drafts.

    The caller has already established that its principal may read the project's context.
    """
    words = [QueryClause(word, False, "should", 0) for word in text.split()[:64]]
    clauses = analyze_clauses(words)
    if not clauses:
        return []
    segmenter_ids = await repo.active_segmenter_ids()
    page, rows = await _hits(workspace_id, [project_id], segmenter_ids, clauses, limit=limit, after=None, offset=0)
    return [_passage(hit, rows[hit.seq], clauses) for hit in page.hits if hit.seq in rows]
