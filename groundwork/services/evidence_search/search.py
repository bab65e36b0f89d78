"""Evidence search: exact stored passages of the caller's visible projects, ranked by BM25.

REST (`POST /api/v1/context/search`), GraphQL (`contextPassages`) and MCP (`search_context`) all
call `search_corpus`. It never synthesizes: every passage's `text` is characters stored from the
source, and only the serving source-content version of each source, cut by the serving segmenter
version, surfaces.

The path around the index is kept short: what the caller may read and what serves are cached in this
process and dropped the moment PostgreSQL says they changed (`services.serving_caches`), so a search
is one index snapshot read in one worker thread, with no database round trip when the caches are warm.
"""

from __future__ import annotations

import asyncio
import functools
import hashlib
import json
from dataclasses import dataclass, field
from typing import Any

from groundwork.domain.context_engine.model import allowed_classes
from groundwork.domain.errors import FieldError, InvalidRequest, NotFound
from groundwork.domain.evidence_search.analysis import AnalyzedClause, analyze_question
from groundwork.domain.evidence_search.corpus import (
    MAX_QUERY_CHARS,
    SOURCE_KINDS,
    SUBJECT_TYPES,
    InvalidQuery,
    QueryClause,
    parse_query,
)
from groundwork.domain.evidence_search.word_forms import with_other_forms
from groundwork.domain.ids import SUBJECT_PREFIXES, cannot_be_an_id, id_like
from groundwork.domain.pagination import page_request, ranked_cursor, ranked_position
from groundwork.domain.tenancy.principals import Principal
from groundwork.persistence.repositories.evidence_search import index_log
from groundwork.persistence.repositories.evidence_search import search_scope as scopes
from groundwork.platform.caches.invalidated_cache import InvalidatedCache
from groundwork.platform.caches.serving import forget_on
from groundwork.platform.search_replica.reads import SearchIndexUnavailable, readable
from groundwork.search.corpus_index import corpus_index
from groundwork.search.corpus_search import SearchFilters
from groundwork.search.passages import (
    PassageHit,
    ServingState,
    load_serving_state,
    runs_inline,
    search_snapshot,
)

CONTEXT_READ = "context:read"
# What each principal may read through each subject, and what serves at each index position: cached
# while the change feed is live, dropped on any change to memberships, roles, projects, segmenters or classes.
_scopes: InvalidatedCache[tuple[str, str, bool, str, str], scopes.SearchScope] = InvalidatedCache(ttl_seconds=60.0)
_serving: InvalidatedCache[int, ServingState] = InvalidatedCache(ttl_seconds=60.0, max_entries=64)


def forget_cached_visibility() -> None:
    """Drop cached visibility (the change feed calls this when memberships, roles or projects change)."""
    _scopes.invalidate()


def forget_cached_serving_state() -> None:
    """Drop the cached serving state (the change feed calls this when segmenters or classes change)."""
    _serving.invalidate()


forget_on(("visibility",), lambda _topic: forget_cached_visibility())
forget_on(("corpus",), lambda _topic: forget_cached_serving_state())


async def serving_state(applied_seq: int) -> ServingState:
    """What does not serve in a snapshot at `applied_seq`, cached while the change feed is live."""
    return await _serving.load(applied_seq, lambda: load_serving_state(applied_seq))


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
class CorpusSearchResult:
    """A page of passages, the keyset page info, whether more than the cap match, and the match count
    (exact up to the cap of reachable hits; the cap itself when `truncated`), and the cursor after each passage."""

    passages: list[PassageHit]
    page: dict[str, Any]
    truncated: bool
    total_count: int
    positions: list[tuple[float, int]] = field(default_factory=list)  # each passage's (score, seq)
    fingerprint: str = ""
    offset: int = 0

    @property
    def cursors(self) -> list[str]:
        """The cursor after each passage, made when asked (GraphQL's edges show them, a REST page does not)."""
        return [
            ranked_cursor(self.fingerprint, score, seq, self.offset + i + 1)
            for i, (score, seq) in enumerate(self.positions)
        ]


def _validate(search: CorpusSearch) -> None:
    errors = []
    if search.subject_type not in SUBJECT_TYPES:
        errors.append(FieldError("subject_ref.type", f"must be one of {', '.join(SUBJECT_TYPES)}"))
    if cannot_be_an_id(search.subject_id):
        errors.append(FieldError("subject_ref.id", f"must be {id_like(SUBJECT_PREFIXES.get(search.subject_type))}"))
    if len(search.query) > MAX_QUERY_CHARS:
        errors.append(FieldError("query", f"must be at most {MAX_QUERY_CHARS} characters"))
    if search.kind is not None and search.kind not in SOURCE_KINDS:
        errors.append(FieldError("kind", f"must be one of {', '.join(SOURCE_KINDS)}"))
    if cannot_be_an_id(search.source_id):
        errors.append(FieldError("source_id", f"must be {id_like('src')}"))
    if errors:
        raise InvalidRequest("The search request is not valid.", errors)


def _analyzed(clauses: list[QueryClause]) -> list[AnalyzedClause]:
    analyzed = analyze_question(clauses)
    if not any(a.clause.occur != "must_not" for a in analyzed):
        first = next((c for c in clauses if c.occur != "must_not"), clauses[0])
        raise InvalidQuery("no searchable word: use letters or digits", first.position)
    return with_other_forms(analyzed)


def _fingerprint(search: CorpusSearch) -> str:
    raw = json.dumps([search.subject_type, search.subject_id, search.query, search.source_id, search.kind])
    return hashlib.sha256(raw.encode()).hexdigest()[:16]


async def search_scope(principal: Principal, subject_type: str, subject_id: str) -> scopes.SearchScope:
    """The subject's projects where the caller holds `context:read`; 404 when it sees none of them."""
    key = (principal.workspace_id, principal.id, principal.is_admin, subject_type, subject_id)
    scope = await _scopes.load(
        key,
        lambda: scopes.search_scope(
            principal.workspace_id, principal.id, principal.is_admin, subject_type, subject_id, CONTEXT_READ
        ),
    )
    # An admin sees an empty engagement; anyone else cannot tell it from one they may not see.
    visible = scope.readable_project_ids or (principal.is_admin and not scope.child_project_ids)
    if not scope.subject_exists or not visible:
        raise NotFound(f"No such {subject_type}.")
    return scope


async def search_corpus(principal: Principal, search: CorpusSearch) -> CorpusSearchResult:
    """Ranked exact passages for a project, engagement or portfolio subject, keyset-paginated."""
    _validate(search)
    page_req = page_request(search.limit, search.cursor)
    clauses = _analyzed(parse_query(search.query))
    fingerprint = _fingerprint(search)
    after, offset = ranked_position(page_req, fingerprint)
    scope = await search_scope(principal, search.subject_type, search.subject_id)
    empty = CorpusSearchResult([], {"next_cursor": None, "has_more": False}, False, 0)
    if not scope.readable_project_ids:
        return empty
    index = corpus_index()
    with readable(index):
        snapshot = index.snapshot()
    if snapshot is None:
        if await index_log.last_index_change() > 0:
            # Passages exist but no index serves them (deleted, or being rebuilt): an empty page would lie.
            raise SearchIndexUnavailable("The search index is being rebuilt; retry shortly.")
        return empty
    state = await serving_state(snapshot.applied_seq)
    classes = allowed_classes(principal.scopes)
    filters = SearchFilters(
        principal.workspace_id,
        scope.readable_project_ids,
        scope.workspace_project_ids,
        classes=classes,
        excluded_segmenters=state.excluded_segmenters(snapshot.applied_seq),
        excluded_sources=state.excluded_sources(principal.workspace_id, classes),
        source_id=search.source_id,
        kind=search.kind,
    )
    read = functools.partial(
        search_snapshot,
        snapshot,
        snapshot.schema or index.schema,
        clauses,
        filters,
        limit=page_req.limit,
        after=after,
        offset=offset,
    )
    with readable(index):
        page, passages = read() if runs_inline(snapshot, clauses) else await asyncio.to_thread(read)
        if page.total == 0:  # damaged files can read as "no match": say so only from files that open cleanly
            await asyncio.to_thread(index.confirm_no_match, snapshot)
    next_cursor = None
    if page.has_more and page.hits:
        last = page.hits[-1]
        next_cursor = ranked_cursor(fingerprint, last.score, last.seq, offset + len(page.hits))
    return CorpusSearchResult(
        passages=passages,
        page={"next_cursor": next_cursor, "has_more": page.has_more},
        truncated=page.truncated,
        total_count=page.total,
        positions=[(h.score, h.seq) for h in page.hits],
        fingerprint=fingerprint,
        offset=offset,
    )
