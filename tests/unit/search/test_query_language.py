"""The evidence search query language: words, "phrases", +required, -excluded; faults name a position."""

from __future__ import annotations

import pytest

from groundwork.domain.evidence_search.corpus import InvalidQuery, parse_query


def test_words_phrases_and_operators() -> None:
    clauses = parse_query('refund +"captured amount" -chargeback  3-D')
    assert [(c.text, c.phrase, c.occur, c.position) for c in clauses] == [
        ("refund", False, "should", 0),
        ("captured amount", True, "must", 7),
        ("chargeback", False, "must_not", 26),
        ("3-D", False, "should", 39),
    ]


@pytest.mark.parametrize(
    ("query", "position", "message"),
    [
        ("", 0, "empty"),
        ("   ", 0, "empty"),
        ('refund "captured amount', 7, "unclosed phrase"),
        ("refund + amount", 7, "'+' must be followed"),
        ("refund -", 7, "'-' must be followed"),
        ("+-refund", 1, "cannot follow"),
        ('ref"und', 3, "unexpected quote"),
        ('""', 0, "empty phrase"),
        ('"a"b', 3, "phrase must be followed"),
        ("-refund -chargeback", 0, "not excluded"),
    ],
)
def test_malformed_queries_name_the_position(query: str, position: int, message: str) -> None:
    with pytest.raises(InvalidQuery) as caught:
        parse_query(query)
    assert caught.value.position == position
    assert caught.value.code == "invalid_query" and caught.value.status == 400
    assert message in caught.value.detail
    assert caught.value.extra["position"] == position
