"""Highlights are character offsets into the passage text of the words (stemmed) and phrases searched."""

from __future__ import annotations

from groundwork.domain.evidence_search.analysis import analyze_clauses
from groundwork.domain.evidence_search.corpus import parse_query
from groundwork.search.analysis import highlight_ranges


def _marked(text: str, query: str) -> list[str]:
    return [text[s:e] for s, e in highlight_ranges(text, analyze_clauses(parse_query(query)))]


def test_stemmed_words_are_highlighted_with_character_offsets() -> None:
    text = "Tomás refunded £30; refunds of partial baskets are common."
    assert _marked(text, "refund basket") == ["refunded", "refunds", "baskets"]


def test_phrases_are_highlighted_whole_and_excluded_words_not_at_all() -> None:
    text = "The captured amount is refunded; an amount captured later is not."
    assert _marked(text, '"captured amount" -refund') == ["captured amount"]


def test_words_split_by_the_tokenizer_match_as_a_phrase() -> None:
    text = "EU cards need 3-D Secure; 3 D is not the same as 3-D."
    assert _marked(text, "3-D") == ["3-D", "3 D", "3-D"]
