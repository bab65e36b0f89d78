"""A plain word that is a form of an irregular verb also asks for the verb's other forms: "send" finds "sent"."""

from __future__ import annotations

from groundwork.domain.evidence_search.analysis import analyze_question
from groundwork.domain.evidence_search.corpus import parse_query
from groundwork.domain.evidence_search.word_forms import other_forms, with_other_forms


def _asked(query: str) -> list[tuple[tuple[str, ...], bool]]:
    return [(a.terms, a.alternative) for a in with_other_forms(analyze_question(parse_query(query)))]


def test_each_form_of_an_irregular_verb_finds_the_others() -> None:
    assert other_forms("send") == ("sent",) and other_forms("Sent") == ("send",)
    assert other_forms("taken") == ("take", "took")
    # Not a verb the stemmer misses, or a form with another common sense.
    assert other_forms("sends") == () and other_forms("server") == () and other_forms("bit") == ()


def test_the_other_forms_come_after_the_words_asked_and_are_marked_as_alternatives() -> None:
    assert _asked("can we send SMS at night") == [
        (("send",), False),
        (("sms",), False),
        (("night",), False),
        (("sent",), True),
    ]


def test_a_form_asked_already_a_phrase_and_an_exclusion_add_nothing() -> None:
    assert _asked("send sent") == [(("send",), False), (("sent",), False)]
    assert _asked('"send the file" -sent') == [(("send", "the", "file"), False), (("sent",), False)]
