"""How many of a project's passages hold each of a few words: the corpus rarity a run's drafting weighs by.

Counted in the same snapshot, with the same filters, as the run's evidence search (`search.passages`): the
project's `general` passages that serve, so a word's rarity is measured where its evidence came from.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

import tantivy

from groundwork.domain.enhancement.enhancer import CorpusRarity
from groundwork.search.corpus_index import corpus_index
from groundwork.search.corpus_search import SearchFilters, filter_clauses
from groundwork.search.failures import reading
from groundwork.search.generations import Snapshot
from groundwork.search.passages import ServingState, load_serving_state, snapshot_statistics

# A work item's words are counted in one go; more than this many are cut (the item's query is already capped).
MAX_WORDS = 64


async def project_term_rarity(
    workspace_id: str,
    project_id: str,
    words: list[str],
    *,
    serving_state: Callable[[int], Awaitable[ServingState]] = load_serving_state,
) -> CorpusRarity | None:
    """The number of the project's serving passages and how many hold each word (an index term, i.e. a stem);
    None when no index serves yet."""
    index = corpus_index()
    with reading(index):
        snapshot = index.snapshot()
    if snapshot is None:
        return None
    state = await serving_state(snapshot.applied_seq)
    filters = SearchFilters(
        workspace_id,
        [project_id],
        classes=("general",),
        excluded_segmenters=state.excluded_segmenters(snapshot.applied_seq),
        excluded_sources=state.excluded_sources(workspace_id, ("general",)),
    )
    chosen = sorted(set(words))[:MAX_WORDS]
    with reading(index):
        return await asyncio.to_thread(_count, snapshot, snapshot.schema or index.schema, filters, chosen)


def _count(snapshot: Snapshot, schema: tantivy.Schema, filters: SearchFilters, words: list[str]) -> CorpusRarity:
    """Count in the snapshot: the filtered passages, then those holding each word."""
    where = filter_clauses(schema, filters, snapshot_statistics(snapshot))

    def matching(query: tantivy.Query) -> int:
        combined = tantivy.Query.boolean_query([(tantivy.Occur.Must, query), *where])
        result = snapshot.searcher.search(combined, 1, count=True)
        return int(getattr(result, "count", 0) or 0)  # `count` is missing from the type stubs

    passages = matching(tantivy.Query.all_query())
    frequencies = tuple((word, matching(tantivy.Query.term_query(schema, "text", word))) for word in words)
    return CorpusRarity(passages, frequencies)
