"""Package search over the package index: BM25 of parsed clauses within the caller's projects and classes."""

from __future__ import annotations

import asyncio
import functools

from groundwork.domain.evidence_search.analysis import AnalyzedClause, analyze_clauses
from groundwork.domain.evidence_search.corpus import QueryClause
from groundwork.persistence.repositories.context_engine import package_reads
from groundwork.persistence.repositories.context_engine.package_reads import PackageRow
from groundwork.search.corpus_search import HitPage, restricted, search_page
from groundwork.search.failures import reading
from groundwork.search.package_index import package_index
from groundwork.search.passages import INLINE_POSTINGS
from groundwork.search.ranking import text_query


async def find_packages(
    project_ids: list[str],
    classes: tuple[str, ...],
    clauses: list[AnalyzedClause],
    *,
    limit: int,
    after: tuple[float, int] | None = None,
    offset: int = 0,
    contribution_type: str | None = None,
) -> HitPage:
    """One page of ready packages matching the clauses, in (score desc, seq asc) order, with the match count.

    Raises `IndexUnreadable` when the index files cannot be read (reported to the index, which rebuilds them)."""
    if not project_ids or not clauses:
        return HitPage([], False, 0)
    index = package_index()
    with reading(index):
        snapshot = index.snapshot()  # the one taken last unless a commit landed, as for a passage search
        if snapshot is None:
            return HitPage([], False, 0)
        restrictions = [("project_id", project_ids), ("classification", list(classes)), ("status", ["ready"])]
        if contribution_type is not None:
            restrictions.append(("contribution_type", [contribution_type]))
        query = restricted(index.schema, text_query(index.schema, clauses), restrictions)
        read = functools.partial(search_page, snapshot.searcher, query, limit=limit, after=after, offset=offset)
        # A word has at most one posting per document: a small index answers on the event loop, without the hop
        # to a worker thread and back; a large one in a thread, where Tantivy searches without the GIL.
        words = sum(len(a.terms) for a in clauses)
        page = read() if snapshot.searcher.num_docs * words <= INLINE_POSTINGS else await asyncio.to_thread(read)
        if page.total == 0:  # damaged files can read as "no match": say so only from files that open cleanly
            await asyncio.to_thread(index.confirm_no_match, snapshot)
    return page


async def project_packages(workspace_id: str, project_id: str, text: str, limit: int = 5) -> list[PackageRow]:
    """Best ready `general` packages of one project for free text (every word optional), for grounding drafts.

    The caller has already established that its principal may read the project's context.
    """
    clauses = analyze_clauses([QueryClause(word, False, "should", 0) for word in text.split()[:64]])
    page = await find_packages([project_id], ("general",), clauses, limit=limit)
    rows = await package_reads.entries_by_seq(workspace_id, [h.seq for h in page.hits], [project_id], ["general"])
    return [rows[h.seq] for h in page.hits if h.seq in rows]
