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


def test_equal_scores_break_ties_by_id_so_the_same_rankings_give_the_same_order() -> None:
    assert fused([["b"], ["a"]]) == fused([["a"], ["b"]]) == [("a", 0.1), ("b", 0.1)]
    assert fused([]) == []
