"""Which found passages a run widens its evidence around, and the order the gathered passages are listed in."""

from __future__ import annotations

from groundwork.domain.enhancement.neighbourhood import Found, Placed, anchors, in_reading_order, leading_pages


def test_a_page_one_stray_passage_reaches_does_not_lead_even_with_the_best_passage() -> None:
    found = [
        Found("stray", "chapter", 12.0),
        Found("a1", "guide", 10.0),
        Found("a2", "guide", 9.0),
        Found("a3", "guide", 8.0),
        Found("a4", "guide", 7.0),
    ]
    # The guide's best three passages score 27, the chapter's one 12: under half of the guide's.
    assert leading_pages(found) == {"guide"}
    assert anchors(found) == ["a1", "a2", "a3", "a4"]


def test_pages_scoring_near_the_best_lead_and_their_best_passages_anchor_in_search_order() -> None:
    found = [Found(f"g{n}", "guide", 10.0 - n) for n in range(5)] + [
        Found(f"r{n}", "runbook", 8.0 - n) for n in range(4)
    ]
    found.sort(key=lambda f: -f.score)
    assert leading_pages(found) == {"guide", "runbook"}
    assert anchors(found, count=4) == ["g0", "g1", "g2", "r0"]


def test_nothing_found_anchors_nothing() -> None:
    assert anchors([]) == [] and leading_pages([]) == set()


def test_an_anchored_section_comes_whole_in_document_order_where_its_best_passage_ranked() -> None:
    hits = [
        Placed("intro", "v1", "Greylisting", 100),
        Placed("other", "v2", "Quotas", 0),
        Placed("tail", "v1", "Greylisting", 400),
    ]
    near = [Placed("before", "v1", "Greylisting", 50), Placed("setting", "v1", "Greylisting", 300)]
    order = in_reading_order(hits, near, anchored=["intro"])
    assert order == ["before", "intro", "setting", "tail", "other"]


def test_hits_outside_an_anchored_section_keep_their_rank_and_nothing_comes_twice() -> None:
    hits = [Placed("a", "v1", "One", 0), Placed("b", "v1", "Two", 10), Placed("c", "v2", None, 0)]
    near = [Placed("a2", "v1", "One", 5), Placed("a2", "v1", "One", 5), Placed("b", "v1", "Two", 10)]
    order = in_reading_order(hits, near, anchored=["a"])
    assert order == ["a", "a2", "b", "c"]
    assert in_reading_order(hits, [], anchored=[]) == ["a", "b", "c"]
