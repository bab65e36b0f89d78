"""The searches a run's evidence fuses: the whole item, its title alone, and the instructions' focus alone."""

from __future__ import annotations

from groundwork.services.enhancement.evidence import evidence_query, item_queries


def test_the_title_is_searched_alone_as_a_question_without_its_stopwords() -> None:
    assert item_queries("Firewall on the office gateway") == ["Firewall office gateway"]


def test_the_instructions_focus_is_searched_alone_and_their_format_requests_are_not() -> None:
    instructions = "focus on the PCI re-assessment and on rollback; write acceptance criteria as Given/When/Then"
    assert item_queries("Pay with saved cards", instructions) == ["Pay saved cards", "PCI re-assessment rollback"]
    whole = evidence_query("Pay with saved cards", {"description": "Store the card token."}, instructions)
    assert whole == "Pay saved cards Store token. PCI re-assessment rollback"  # a word asked twice counts once
    assert "Given/When/Then" not in " ".join(item_queries("Pay with saved cards", instructions))


def test_instructions_without_a_focus_add_no_search() -> None:
    assert item_queries("Server clocks drift", "write acceptance criteria as Given/When/Then") == [
        "Server clocks drift"
    ]
