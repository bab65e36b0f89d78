"""A question with words in most passages is answered from candidates (its rarer clauses required, those
words optional, each candidate scored again by the whole query): every page, cursor and total is the whole
query's, with structure lifts, proximity pairs, furniture and exclusions in play; a page the candidates
cannot prove comes from the whole query."""

from __future__ import annotations

import random
from pathlib import Path

import pytest
import tantivy

from groundwork.domain.evidence_search.analysis import analyze_question
from groundwork.domain.evidence_search.corpus import parse_query
from groundwork.search import corpus_search
from groundwork.search.corpus_index import CorpusIndex, IndexedPassage
from groundwork.search.corpus_search import (
    SearchFilters,
    build_query,
    collect_page,
    collect_ranked,
    ranked_page,
    whole_query_on,
)
from groundwork.search.passages import snapshot_statistics
from groundwork.search.ranking import IndexStatistics, term_or_phrase, weighted_clauses, zero_scored

_COMMON = ["ledger", "balance", "entry", "account"]
_RARE = ["zeta", "kappa", "sigma", "omega", "delta"]
_FILTERS = SearchFilters("ws_a", ["prj_a"], ["prj_a", "prj_b"])


def _corpus(tmp_path: Path) -> CorpusIndex:
    """5,000 passages: frequent words nearly everywhere, rarer ones in some, matched in titles, heading paths
    and opening headings, furniture lines among them, another project's passages, and tied duplicates."""
    rng = random.Random(11)
    passages = []
    for seq in range(1, 5001):
        words = rng.choices(_COMMON, k=rng.randint(4, 14))
        if rng.random() < 0.3:
            words.insert(rng.randrange(len(words) + 1), rng.choice(_RARE))
        if rng.random() < 0.05:
            words += rng.sample(_RARE, 2)  # two rarer words side by side: a proximity pair
        text = " ".join(words)
        if seq % 97 == 0:
            text = f"Owner: {rng.choice(_RARE)} team. Pager: {rng.choice(_COMMON)}"  # furniture
        if 4000 < seq <= 4060:
            text = "zeta ledger entry"  # sixty identical passages: tied scores
        title = f"{rng.choice(_RARE) if seq % 13 == 0 else 'Notes'} {seq // 200}"
        section = f"{title} > {rng.choice(_RARE + _COMMON)}"
        passages.append(
            IndexedPassage(
                seq,
                text,
                "ws_a",
                "prj_b" if seq % 11 == 0 else "prj_a",
                f"src_{seq // 200}",
                f"srcv_{seq // 200}",
                "paragraph@1",
                "markdown",
                passage_id=f"psg_{seq}",
                title=title,
                section=section,
                opens_section=seq % 7 == 0,
            )
        )
    index = CorpusIndex(tmp_path)
    rng.shuffle(passages)  # segments whose document order is not seq order
    generation = index.new_generation()
    for part in range(3):
        generation.add_passages(passages[part::3])
        generation.commit(part + 1)
    index.publish(generation)
    return index


def _searching(tmp_path: Path) -> tuple[tantivy.Searcher, tantivy.Schema, IndexStatistics]:
    """The corpus's searcher, schema and statistics, as a search reads them from its snapshot."""
    index = _corpus(tmp_path)
    snapshot = index.snapshot()
    assert snapshot is not None
    return snapshot.searcher, index.schema, snapshot_statistics(snapshot)


@pytest.mark.parametrize(
    "question",
    [
        "how do i reconcile the ledger when zeta is late",
        "what should we do with balance kappa and sigma",
        "why is the ledger entry not zeta",
        "where are the account omega delta for balance",
        "which zeta should i ledger before the -kappa",
        "who is the owner and pager of the zeta ledger",
    ],
)
def test_candidate_pages_are_the_pages_of_the_whole_query(
    tmp_path: Path, question: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    searcher, schema, stats = _searching(tmp_path)
    clauses = analyze_question(parse_query(question))
    whole = collect_ranked(searcher, build_query(schema, clauses, _FILTERS, stats), stats=stats)
    proved: list[bool] = []
    original = corpus_search.candidates

    def watched(*args: object, **kwargs: object) -> corpus_search.Candidates | None:
        found = original(*args, **kwargs)  # type: ignore[arg-type]
        proved.append(found is not None)
        return found

    monkeypatch.setattr(corpus_search, "candidates", watched)
    after, offset, from_candidates, seen = None, 0, 0, set()
    for _ in range(4):
        calls_before = len(proved)
        page = collect_page(searcher, schema, clauses, _FILTERS, stats, limit=20, after=after, offset=offset)
        expected = ranked_page(whole, limit=20, after=after)
        assert [(h.seq, h.score) for h in page.hits] == [(h.seq, h.score) for h in expected.hits]
        assert (page.total, page.truncated, page.has_more) == (1000, True, True)
        assert len(proved) == calls_before + 1  # every page asked the candidates first
        from_candidates += proved[-1]
        seen |= {h.seq for h in page.hits}
        after, offset = (page.hits[-1].score, page.hits[-1].seq), offset + 20
    assert from_candidates  # the candidates answered (not only the fallback)
    if "owner" in question:
        assert any(seq % 97 == 0 for seq in seen)  # furniture passages were on these pages, scaled down


def test_a_page_the_candidates_cannot_prove_comes_from_the_whole_query(tmp_path: Path) -> None:
    # "delta" is in a few hundred passages: a page deep in the ranking holds passages with only frequent words,
    # which the candidates leave out, so their page must not stand.
    searcher, schema, stats = _searching(tmp_path)
    clauses = analyze_question(parse_query("the ledger balance entry for delta"))
    whole = collect_ranked(searcher, build_query(schema, clauses, _FILTERS, stats), stats=stats)
    deep = whole[599]
    after = (deep.score, deep.seq)
    page = collect_page(searcher, schema, clauses, _FILTERS, stats, limit=20, after=after, offset=600)
    expected = ranked_page(whole, limit=20, after=after)
    assert [(h.seq, h.score) for h in page.hits] == [(h.seq, h.score) for h in expected.hits]


@pytest.mark.parametrize(
    "question",
    ["how do i reconcile the ledger when zeta is late", "which zeta should i ledger before the -kappa"],
)
def test_the_whole_query_on_chosen_documents_scores_them_to_the_bit(tmp_path: Path, question: str) -> None:
    searcher, schema, stats = _searching(tmp_path)
    clauses = analyze_question(parse_query(question))
    whole = collect_ranked(searcher, build_query(schema, clauses, _FILTERS, stats), stats=stats)
    chosen = whole[::7][:120]  # documents from the top to deep in the ranking, furniture among them
    weighted = weighted_clauses(schema, clauses, stats)
    excluded = [
        (tantivy.Occur.MustNot, term_or_phrase(schema, "text", a.terms))
        for a in clauses
        if a.clause.occur == "must_not"
    ]
    documents = zero_scored(
        tantivy.Query.boolean_query(
            [(tantivy.Occur.Should, tantivy.Query.term_query(schema, "seq", hit.seq)) for hit in chosen]
        )
    )
    query = build_query(schema, clauses, _FILTERS, stats, ranking=whole_query_on(documents, weighted, excluded))
    rescored = collect_ranked(searcher, query, len(chosen), stats)
    assert sorted((h.seq, h.score) for h in rescored) == sorted((h.seq, h.score) for h in chosen)
