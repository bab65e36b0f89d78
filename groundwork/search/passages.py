"""Passages for hits, read from one index snapshot: the text and the stored record of each passage.

The index serves exactly the published versions of the active segmenter version (see
`services.corpus_ingest`), so what a snapshot finds is what it answers with: the rows, their count and
their pages agree. Shared by the evidence search service and by draft generation in the worker, so
neither reaches into the other's layer.
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

import tantivy

from groundwork.domain.evidence_search.analysis import AnalyzedClause, analyze_clauses
from groundwork.domain.evidence_search.corpus import SOURCE_KINDS, QueryClause
from groundwork.persistence.repositories.evidence_search import index_log, segmentations, sources
from groundwork.search.analysis import highlighter
from groundwork.search.corpus_index import STRUCTURE_FIELDS, CorpusIndex, corpus_index, read_record
from groundwork.search.corpus_search import RankedHit, RankedPage, SearchFilters, collect_page
from groundwork.search.failures import IndexUnreadable, reading
from groundwork.search.generations import Snapshot
from groundwork.search.ranking import PRESENCE_WEIGHT, IndexStatistics


# Not frozen: a search builds one per passage it answers with, and a frozen dataclass's __init__ costs
# twice as much (it sets each of the 17 fields through object.__setattr__).
@dataclass(slots=True)
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
class ServingState:
    """What does not serve in a snapshot: segmenter versions other than the serving one, and sources whose
    class changed after the snapshot (as `(source_id, workspace_id, classification)`)."""

    segmenter_switches: list[tuple[str, bool, int]]
    reclassified: list[tuple[str, str, str]]

    def excluded_segmenters(self, applied_seq: int) -> tuple[str, ...]:
        """Every segmenter version but the one serving in a snapshot at `applied_seq`."""
        active = [(seq, sid) for sid, is_active, seq in self.segmenter_switches if is_active]
        serving = None
        if active and active[0][0] <= applied_seq:
            serving = active[0][1]
        else:
            # The switch is not in this snapshot yet: the version that served before it still does.
            earlier = sorted((seq, sid) for sid, _, seq in self.segmenter_switches if 0 <= seq <= applied_seq)
            serving = earlier[-1][1] if earlier else (active[0][1] if active else None)
        return tuple(sid for sid, _, _ in self.segmenter_switches if sid != serving)

    def excluded_sources(self, workspace_id: str, classes: tuple[str, ...]) -> tuple[str, ...]:
        """Sources of the workspace now in a class the caller may not see, whatever the snapshot still says."""
        return tuple(sid for sid, ws, cls in self.reclassified if ws == workspace_id and cls not in classes)


async def load_serving_state(applied_seq: int) -> ServingState:
    """The serving state for a snapshot at `applied_seq`, from PostgreSQL."""
    switches = await segmentations.segmenter_switches()
    changed = await sources.reclassified_after(applied_seq)
    return ServingState(switches, [(r.id, r.workspace_id, r.classification) for r in changed])


def passage_hit(
    hit: RankedHit, document: tantivy.Document, highlight: Callable[[str], list[tuple[int, int]]]
) -> PassageHit:
    """A hit with its stored passage, exactly as stored, and its highlight offsets."""
    text = str(document.get_first("text"))
    # Unpacked by position, not read by attribute: a search builds one hit per passage of its page.
    (pid, project, source, version, title, uri, kind, page, paragraph, section, start, end, quality, segmenter) = (
        read_record(bytes(document.get_first("record") or b""))
    )
    return PassageHit(
        pid,
        project,
        source,
        title,
        uri,
        kind,
        version,
        page,
        paragraph,
        section,
        start,
        end,
        text,
        hit.score,
        highlight(text),
        quality,
        segmenter,
    )


def snapshot_statistics(snapshot: Snapshot) -> IndexStatistics:
    """The corpus statistics of a snapshot (computed once per snapshot)."""
    return snapshot.remembered("statistics", lambda: IndexStatistics(snapshot.searcher, SOURCE_KINDS))  # type: ignore[no-any-return]


# Up to this many postings (summed document frequencies of the query's words), a search costs less than the
# hop to a worker thread and back (~55 µs of CPU, and the GIL handed over twice), and runs on the event loop.
INLINE_POSTINGS = 2_000

# Grounding a draft asks with up to 64 of a work item's words, not a question's few chosen ones: holding many
# of them says little about answering the item, and weighing it moved the drafts' evidence off the point
# (bench/drafts_eval.py: cited-passage precision 0.83 -> 0.74, key facts 13 -> 12 of 16). BM25 alone ranks.
GROUNDING_PRESENCE = 0.0


def runs_inline(snapshot: Snapshot, clauses: list[AnalyzedClause]) -> bool:
    """Whether a search of the clauses is small enough to run on the event loop.

    Tantivy releases the GIL while it searches, so a search over many postings runs in a worker thread."""
    stats = snapshot_statistics(snapshot)
    fields = ("text", *STRUCTURE_FIELDS)
    postings = sum(stats.doc_freq(field, term) for a in clauses for term in a.terms for field in fields)
    return postings <= INLINE_POSTINGS


def _no_highlights(_text: str) -> list[tuple[int, int]]:
    return []


def search_snapshot(
    snapshot: Snapshot,
    schema: tantivy.Schema,
    clauses: list[AnalyzedClause],
    filters: SearchFilters,
    *,
    limit: int,
    after: tuple[float, int] | None,
    offset: int = 0,
    highlights: bool = True,
    presence: float = PRESENCE_WEIGHT,
) -> tuple[RankedPage, list[PassageHit]]:
    """One page of passages from one snapshot (blocking: run it off the event loop for large searches).

    `highlights=False` leaves every hit's highlights empty, for callers that never show them; `presence` is
    the ranking's weight of holding a word at all (search.ranking)."""
    searcher = snapshot.searcher
    stats = snapshot_statistics(snapshot)
    page = collect_page(
        searcher, schema, clauses, filters, stats, limit=limit, after=after, offset=offset, presence=presence
    )
    highlight = highlighter(clauses) if highlights else _no_highlights
    return page, [passage_hit(hit, searcher.doc(hit.address), highlight) for hit in page.hits]


@dataclass(frozen=True)
class GroundingView:
    """What grounding reads one project through: the index, its snapshot and the filters of what serves there."""

    index: CorpusIndex
    snapshot: Snapshot
    filters: SearchFilters


async def grounding_view(
    workspace_id: str,
    project_id: str,
    serving_state: Callable[[int], Awaitable[ServingState]] = load_serving_state,
) -> GroundingView | None:
    """The snapshot that serves now and the filters of a project's serving `general` passages in it; None when
    no index holds anything yet.

    The caller has already established that its principal may read the project's context; only `general`
    sources are used, since what is built from them may be shown to anyone on the project."""
    index = corpus_index()
    with reading(index):
        snapshot = index.snapshot()  # the one taken last unless a commit landed, as for a user's search
    if snapshot is None:
        if await index_log.last_index_change() > 0:
            # Passages exist but no index serves them yet (a replica being built): an empty answer would lie.
            raise IndexUnreadable(f"the {index.folder} index is being rebuilt")
        return None
    state = await serving_state(snapshot.applied_seq)
    filters = SearchFilters(
        workspace_id,
        [project_id],
        classes=("general",),
        excluded_segmenters=state.excluded_segmenters(snapshot.applied_seq),
        excluded_sources=state.excluded_sources(workspace_id, ("general",)),
    )
    return GroundingView(index, snapshot, filters)


async def project_passages(
    workspace_id: str,
    project_id: str,
    text: str,
    limit: int = 10,
    *,
    serving_state: Callable[[int], Awaitable[ServingState]] = load_serving_state,
) -> list[PassageHit]:
    """Best passages of one project for free text (every word optional), for services grounding drafts
    (without highlights), read through `grounding_view`.

    `serving_state` reads what does not serve in a snapshot (a long-running process passes its cached one).
    """
    words = [QueryClause(word, False, "should", 0) for word in text.split()[:64]]
    clauses = analyze_clauses(words)
    if not clauses:
        return []
    view = await grounding_view(workspace_id, project_id, serving_state)
    if view is None:
        return []
    index, snapshot, filters = view.index, view.snapshot, view.filters
    # Grounding quotes passages and never shows highlights: finding them was most of this search's CPU.
    read = functools.partial(
        search_snapshot,
        snapshot,
        snapshot.schema or index.schema,
        clauses,
        filters,
        limit=limit,
        after=None,
        highlights=False,
        presence=GROUNDING_PRESENCE,
    )
    with reading(index):
        _, passages = read() if runs_inline(snapshot, clauses) else await asyncio.to_thread(read)
        if not passages:
            # Damaged files can read as "no match", and a run keeps the evidence its first step gathered: nothing
            # found is an answer only from files that open cleanly.
            await asyncio.to_thread(index.confirm_no_match, snapshot)
    return passages
