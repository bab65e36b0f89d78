"""A furniture passage's score is scaled down as hits are collected (schema 6, a fast flag per passage): what the
query of schema 5 gave it (which boosted each term's weight, so equal to 32-bit rounding), in the same order, and
never at the price of a hit left out that outranks it."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest
import tantivy

from groundwork.domain.evidence_search.analysis import analyze_question
from groundwork.domain.evidence_search.corpus import SOURCE_KINDS, parse_query
from groundwork.search.corpus_index import FURNITURE_FLAG_SINCE, CorpusGenerationWriter, IndexedPassage, build_schema
from groundwork.search.corpus_search import SearchFilters, build_query, collect_ranked
from groundwork.search.ranking import FURNITURE_FACTOR, IndexStatistics

_FILTERS = SearchFilters("ws_a", ["prj_a"], ["prj_a"])
_QUESTIONS = [
    "who is the owner of the zeta ledger",
    "what does the pager say about kappa",
    "ledger balance entry",
    "which team owns sigma",
]


def _passages() -> list[IndexedPassage]:
    """1,200 passages; every fifth is furniture (an owner and pager line) that also holds words of the prose."""
    rng = random.Random(5)
    words = ["ledger", "balance", "entry", "zeta", "kappa", "sigma"]
    passages = []
    for seq in range(1, 1201):
        if seq % 5 == 0:
            text = f"Owner: {rng.choice(words)} team. Pager: {rng.choice(words)}"  # the only owners, teams and pagers
        else:
            text = " ".join(rng.choices(words, k=rng.randint(3, 12)))
        source = f"src_{seq // 100}"
        passages.append(
            IndexedPassage(
                seq, text, "ws_a", "prj_a", source, f"{source}_v1", "paragraph@1", "markdown", passage_id=f"psg_{seq}"
            )
        )
    return passages


def _searcher(folder: Path, version: int) -> tuple[tantivy.Searcher, IndexStatistics]:
    """The passages written in the schema of `version`, in three segments, and their statistics."""
    folder.mkdir()
    writer = CorpusGenerationWriter(folder, build_schema(version), heap_bytes=50_000_000, schema_version=version)
    passages = _passages()
    random.Random(9).shuffle(passages)
    for part in range(3):
        writer.add_passages(passages[part::3])
        writer.commit(part + 1)
    writer.close()
    index = tantivy.Index.open(str(folder))
    index.reload()
    searcher = index.searcher()
    return searcher, IndexStatistics(searcher, SOURCE_KINDS)


class _CountedSearches:
    """A searcher that counts its searches (Tantivy's own cannot be patched)."""

    def __init__(self, searcher: tantivy.Searcher) -> None:
        self.searcher, self.searches = searcher, 0

    def search(self, *args: Any, **kwargs: Any) -> Any:
        self.searches += 1
        return self.searcher.search(*args, **kwargs)

    def fast_field_values(self, *args: Any) -> Any:
        return self.searcher.fast_field_values(*args)


@pytest.mark.parametrize("question", _QUESTIONS)
def test_a_furniture_score_scaled_as_it_is_collected_ranks_as_the_query_ranked_it(
    tmp_path: Path, question: str
) -> None:
    queried, queried_stats = _searcher(tmp_path / "v5", FURNITURE_FLAG_SINCE - 1)
    flagged, flagged_stats = _searcher(tmp_path / "v6", FURNITURE_FLAG_SINCE)
    assert not queried_stats.furniture_flagged and flagged_stats.furniture_flagged
    assert queried_stats.furniture_docs == flagged_stats.furniture_docs == 240
    clauses = analyze_question(parse_query(question))
    schema5, schema6 = build_schema(FURNITURE_FLAG_SINCE - 1), build_schema(FURNITURE_FLAG_SINCE)
    before = collect_ranked(queried, build_query(schema5, clauses, _FILTERS, queried_stats), stats=queried_stats)
    after = collect_ranked(flagged, build_query(schema6, clauses, _FILTERS, flagged_stats), stats=flagged_stats)

    # This corpus of nine words ties many passages; a tie may turn on the last bit, so compare passage by passage.
    scored_before, scored_after = {hit.seq: hit.score for hit in before}, {hit.seq: hit.score for hit in after}
    both = scored_before.keys() & scored_after.keys()
    assert len(both) >= 0.98 * len(before)
    assert [scored_after[seq] for seq in sorted(both)] == pytest.approx(
        [scored_before[seq] for seq in sorted(both)], rel=1e-6
    )
    built = build_query(schema6, clauses, _FILTERS, flagged_stats)
    unscaled = {hit.seq: hit.score for hit in collect_ranked(flagged, built, 5_000)}  # no statistics: as queried
    furniture = [hit for hit in after if hit.seq % 5 == 0]
    assert furniture, "the question matches furniture passages"
    for hit in furniture:
        assert hit.score == pytest.approx(unscaled[hit.seq] * FURNITURE_FACTOR, rel=1e-6)
    assert all(hit.score == unscaled[hit.seq] for hit in after if hit.seq % 5)


@pytest.mark.parametrize("cap", [0, 3, 10, 40])
def test_collecting_a_few_hits_never_leaves_out_one_that_outranks_a_scaled_furniture_passage(
    tmp_path: Path, cap: int
) -> None:
    searcher, stats = _searcher(tmp_path / "v6", FURNITURE_FLAG_SINCE)
    clauses = analyze_question(parse_query("the owner of the zeta balance entry"))
    query = build_query(build_schema(), clauses, _FILTERS, stats)
    everything = collect_ranked(searcher, query, stats=stats)
    counted = _CountedSearches(searcher)

    top = collect_ranked(counted, query, cap, stats)  # type: ignore[arg-type]

    assert [hit.score for hit in top] == [hit.score for hit in everything[: cap + 1]]
    # Unscaled, furniture (the only passages with an owner) fills the first collection; scaled, prose outranks it.
    assert counted.searches > 1
