"""Reciprocal rank fusion of a work item's searches."""

from __future__ import annotations

from groundwork.domain.enhancement.fusion import fused


def test_a_passage_high_in_both_rankings_beats_one_first_in_only_one() -> None:
    whole_item = ["incidental", "topic", "other"]
    title_alone = ["topic", "title_only"]
    order = [passage for passage, _ in fused([whole_item, title_alone])]
    assert order[0] == "topic"
    assert set(order) == {"incidental", "topic", "other", "title_only"}


def test_a_passage_first_in_one_ranking_beats_one_deep_in_the_other() -> None:
    order = [passage for passage, _ in fused([["first", *(f"p{n}" for n in range(30)), "deep"], ["title"]])]
    assert order.index("first") < order.index("deep") and order.index("title") < order.index("deep")


def test_equal_scores_break_ties_by_rank_and_ranking_never_by_id_so_a_reingested_corpus_fuses_alike() -> None:
    # Ids are minted at ingestion: the same corpus ingested again must fuse in the same order.
    assert fused([["z"], ["a"]]) == [("z", 0.1), ("a", 0.1)]
    assert fused([["a"], ["z"]]) == [("a", 0.1), ("z", 0.1)]
    # Equal scores at equal ranks: the earlier ranking (the whole item's search) first, whatever the ids.
    assert [p for p, _ in fused([["p", "b"], ["q", "a"]])] == ["p", "q", "b", "a"]
    assert fused([]) == []
