"""A question is analysed like a search box query: content words rank, stopwords and question words do not."""

from __future__ import annotations

from groundwork.domain.evidence_search.analysis import analyze_question, content_terms, is_stopword
from groundwork.domain.evidence_search.corpus import parse_query


def _ranked(query: str) -> list[tuple[str, tuple[str, ...]]]:
    return [(a.clause.occur, a.terms) for a in analyze_question(parse_query(query))]


def test_stopwords_and_question_words_are_dropped_from_a_question() -> None:
    assert _ranked("what happens when the SFTP settlement file is late") == [
        ("should", ("happen",)),
        ("should", ("sftp",)),
        ("should", ("settlement",)),
        ("should", ("file",)),
        ("should", ("late",)),
    ]


def test_a_contraction_is_a_stopword_and_a_compound_with_a_content_part_is_not() -> None:
    assert is_stopword("don't") and is_stopword("Which") and not is_stopword("apt-get")
    assert _ranked("why don't apt-get upgrades run") == [
        ("should", ("apt", "get")),
        ("should", ("upgrad",)),
        ("should", ("run",)),
    ]


def test_phrases_and_required_or_excluded_stopwords_are_kept() -> None:
    assert _ranked('"does not retry" +not -the job') == [
        ("should", ("doe", "not", "retri")),
        ("must", ("not",)),
        ("must_not", ("the",)),
        ("should", ("job",)),
    ]


def test_a_word_asked_twice_counts_once() -> None:
    assert _ranked("backup the backup server") == [("should", ("backup",)), ("should", ("server",))]


def test_a_question_of_stopwords_only_falls_back_to_its_words() -> None:
    assert _ranked("to be or not") == [
        ("should", ("to",)),
        ("should", ("be",)),
        ("should", ("or",)),
        ("should", ("not",)),
    ]


def test_content_terms_are_the_stems_of_the_content_words_in_order() -> None:
    assert content_terms("Where are the backups of the settlement files kept?") == [
        "backup",
        "settlement",
        "file",
        "kept",
    ]
