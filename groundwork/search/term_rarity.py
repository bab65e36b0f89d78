"""How many of a project's passages hold each of a few words: the corpus rarity a run's drafting weighs by.

Counted through the same view as the run's evidence search (`search.passages.grounding_view`): the project's
serving `general` passages in the snapshot that serves now, so a word's rarity is measured where its evidence
came from.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

import tantivy

from groundwork.domain.enhancement.enhancer import CorpusRarity
from groundwork.search.corpus_search import filter_clauses
from groundwork.search.failures import reading
from groundwork.search.passages import (
    GroundingView,
    ServingState,
    grounding_view,
    load_serving_state,
    snapshot_statistics,
)

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
    None when no index holds anything yet."""
    view = await grounding_view(workspace_id, project_id, serving_state)
    if view is None:
        return None
    with reading(view.index):
        return await asyncio.to_thread(_count, view, sorted(set(words))[:MAX_WORDS])


def _count(view: GroundingView, words: list[str]) -> CorpusRarity:
    """Count in the view's snapshot: the filtered passages, then those holding each word."""
    schema = view.snapshot.schema or view.index.schema
    where = filter_clauses(schema, view.filters, snapshot_statistics(view.snapshot))

    def matching(query: tantivy.Query) -> int:
        combined = tantivy.Query.boolean_query([(tantivy.Occur.Must, query), *where])
        result = view.snapshot.searcher.search(combined, 1, count=True)
        return int(getattr(result, "count", 0) or 0)  # `count` is missing from the type stubs

    passages = matching(tantivy.Query.all_query())
    frequencies = tuple((word, matching(tantivy.Query.term_query(schema, "text", word))) for word in words)
    return CorpusRarity(passages, frequencies)
