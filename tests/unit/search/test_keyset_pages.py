"""Keyset pages over Tantivy: every hit once, in (score desc, seq asc) order, even when scores tie
across segments whose document order is not seq order."""

from __future__ import annotations

import random

import pytest
import tantivy

from groundwork.domain.evidence_search.analysis import analyze_clauses
from groundwork.domain.evidence_search.corpus import parse_query
from groundwork.search.corpus_index import build_schema
from groundwork.search.corpus_search import SearchFilters, build_query, collect_ranked, ranked_page


def _index(batches: list[list[tuple[int, str, str]]]) -> tantivy.Index:
    schema = build_schema()
    index = tantivy.Index(schema)
    writer = index.writer(15_000_000, 1)
    for batch in batches:  # one commit per batch: one segment each
        for seq, text, project in batch:
            doc = tantivy.Document()
            doc.add_integer("seq", seq)
            doc.add_text("text", text)
            for name, value in (
                ("workspace_id", "w1"),
                ("project_id", project),
                ("segmenter_id", "paragraph@1"),
                ("kind", "text"),
                ("classification", "general"),
            ):
                doc.add_text(name, value)
            writer.add_document(doc)
        writer.commit()
    index.reload()
    return index


def _walk(index: tantivy.Index, query: str, limit: int, cap: int = 1000) -> list[tuple[int, float]]:
    clauses = analyze_clauses(parse_query(query))
    built = build_query(index.schema, clauses, SearchFilters("w1", ["p1"], ["p1", "p2"]))
    seen: list[tuple[int, float]] = []
    after = None
    while True:
        # Every page re-runs the query, as a request with a cursor does.
        page = ranked_page(collect_ranked(index.searcher(), built, cap), limit=limit, after=after, cap=cap)
        seen += [(h.seq, h.score) for h in page.hits]
        if not page.has_more:
            total = min(len(seen), cap)
            assert (page.total, page.truncated) == (total, len(seen) >= cap and page.truncated)
            return seen
        after = (page.hits[-1].score, page.hits[-1].seq)


def test_tied_scores_across_segments_are_paged_by_seq_each_once() -> None:
    later = [(seq, f"Anvil {seq}", "p1") for seq in range(500, 560)]
    earlier = [(seq, f"Anvil {seq}", "p1") for seq in range(0, 60)]
    index = _index([later, earlier, [(9999, "Anvil elsewhere", "p2")]])
    seen = _walk(index, "anvil", limit=7)
    assert [seq for seq, _ in seen] == list(range(0, 60)) + list(range(500, 560))


def test_pages_follow_score_then_seq_and_respect_the_cap() -> None:
    docs = [(seq, "ledger " * (1 + seq % 4) + f"entry {seq}", "p1") for seq in range(200)]
    index = _index([docs[100:], docs[:100]])
    seen = _walk(index, "ledger", limit=9)
    assert len(seen) == 200 and len({s for s, _ in seen}) == 200
    assert seen == sorted(seen, key=lambda hit: (-hit[1], hit[0]))
    capped = _walk(index, "ledger", limit=9, cap=50)
    assert [s for s, _ in capped] == [s for s, _ in seen[:50]]


def test_pruned_pages_are_the_pages_of_the_whole_query(monkeypatch: pytest.MonkeyPatch) -> None:
    from groundwork.domain.evidence_search.corpus import SOURCE_KINDS
    from groundwork.search import corpus_search
    from groundwork.search.corpus_search import collect_page
    from groundwork.search.ranking import IndexStatistics

    rng = random.Random(5)
    docs = []
    for seq in range(5000):
        words = rng.choices(["ledger", "entry", "balance"], k=rng.randint(3, 12))
        if rng.random() < 0.6:
            words += rng.choices(["zeta", "kappa", "sigma"], k=rng.randint(1, 2))
        docs.append((seq, " ".join(words), "p1"))
    index = _index([docs[:2500], docs[2500:]])
    searcher = index.searcher()
    stats = IndexStatistics(searcher, SOURCE_KINDS)
    filters = SearchFilters("w1", ["p1"], ["p1", "p2"])
    runs: list[object] = []
    original = corpus_search.collect_ranked

    def counted(*args: object, **kwargs: object) -> list[corpus_search.RankedHit]:
        runs.append(args[1])
        return original(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(corpus_search, "collect_ranked", counted)
    for query in ("ledger zeta", "balance kappa sigma", "entry ledger zeta", "sigma -kappa ledger"):
        clauses = analyze_clauses(parse_query(query))
        whole = build_query(index.schema, clauses, filters, stats)
        after = None
        for _ in range(3):
            runs.clear()
            pruned = collect_page(searcher, index.schema, clauses, filters, stats, limit=20, after=after)
            assert runs  # the rare words are asked first; ties at the edge send it on to the whole query
            expected = ranked_page(original(searcher, whole), limit=20, after=after)
            assert [(h.seq, h.score) for h in pruned.hits] == [(h.seq, h.score) for h in expected.hits], query
            assert (pruned.total, pruned.truncated, pruned.has_more) == (1000, True, True)
            assert (expected.total, expected.truncated, expected.has_more) == (1000, True, True)
            after = (pruned.hits[-1].score, pruned.hits[-1].seq)
