"""The built-in providers read what a sentence states: a blocker only where something is blocked or waiting, a
milestone where a date later than its document is named, and one milestone package per date across sources."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from groundwork.domain.context_engine.derivation import (
    PassageFacts,
    WorkItemFacts,
    derive_from_passages,
    derive_from_work_items,
)
from groundwork.domain.context_engine.statements import classify_passage_sentence, commitment_date, states_blocker

MEETING = datetime(2026, 5, 28, tzinfo=UTC)


@pytest.mark.parametrize(
    "sentence",
    [
        "The export is blocked by the vendor's export tool.",
        "Go-live is waiting on the PSP's production keys.",
        "It is not in the current rebuild scope; parked until the client confirms budget.",
        "The request has been open for nine days; without the file the Apple Pay button cannot be enabled.",
        "It cannot be rotated while 410 units remain on firmware 3.x.",
        "Payouts cannot start until the bank signs the mandate.",
        "This must be fixed before the planner uses shifts as an input.",
        "The rollout depends on the routing contract, which is late.",
    ],
)
def test_a_sentence_saying_something_is_blocked_or_waiting_is_a_blocker(sentence: str) -> None:
    assert states_blocker(sentence)


@pytest.mark.parametrize(
    "sentence",
    [
        "Third-party tags: loaded only after consent, never render-blocking.",
        "23 issues were found: 6 blocking, 9 serious and 8 moderate.",
        "Sandra agreed that a warning is better than blocking the move.",
        "The session timeout warning cannot be extended without a mouse.",
        "Dispatchers cannot plan routes without the import; tell the depot managers.",
        "Fix all blocking and serious issues before the client's re-audit.",
    ],
)
def test_a_keyword_like_blocking_makes_no_blocker(sentence: str) -> None:
    assert not states_blocker(sentence)


def test_a_date_later_than_the_document_is_a_commitment_and_an_earlier_one_is_not() -> None:
    assert commitment_date("The FleetView licence ends on 30 September.", MEETING) == datetime(2026, 9, 30, tzinfo=UTC)
    assert commitment_date("Maya: send the plan to Rebecca by 19 May.", datetime(2026, 5, 12, tzinfo=UTC)) is not None
    assert commitment_date("Twice in the week of 8 May the job failed.", MEETING) is None
    assert commitment_date("The QSA reviewed it on 28 May 2026.", MEETING) is None  # the document's own day
    statement = classify_passage_sentence("The licence ends on 30 September.", "Notes", MEETING)
    assert statement is not None and (statement.contribution_type, statement.capability) == ("milestone", "milestones")
    decided = classify_passage_sentence("Decision: the board meets on 26 June.", "Notes", MEETING)
    assert decided is not None and decided.contribution_type == "decision"  # the first rule it meets
    risky = classify_passage_sentence("The weekend windows before 30 September are not enough.", "Risks", MEETING)
    assert risky is not None and risky.contribution_type == "risk"  # a sentence of a "Risks" section


def _passage(pid: str, source: str, title: str, text: str, as_of: datetime, section: str | None = None) -> PassageFacts:
    return PassageFacts(pid, source, title, section, 0, text, "general", as_of)


def test_a_deadline_sentence_becomes_one_milestone_package_citing_every_source_that_states_it() -> None:
    derived = derive_from_passages(
        [
            _passage(
                "psg_1",
                "src_1",
                "FleetView backfill planning",
                "Graham confirmed the row count. "
                "The FleetView licence ends on 30 September; after that the data is gone.",
                MEETING,
            ),
            _passage(
                "psg_2",
                "src_2",
                "FleetView data migration plan",
                "History moves before the FleetView licence ends on 30 September 2026.",
                datetime(2026, 6, 1, tzinfo=UTC),
            ),
            _passage("psg_3", "src_3", "Old note", "The licence ended on 30 April 2026.", MEETING),
        ]
    )
    [milestone] = [d for d in derived if d.contribution_type == "milestone"]
    assert milestone.term == "30 September 2026 — FleetView backfill planning"
    assert milestone.summary == (
        "The FleetView licence ends on 30 September; after that the data is gone. "
        "History moves before the FleetView licence ends on 30 September 2026."
    )
    assert {(e.reference_id, e.capability, e.as_of) for e in milestone.evidence} == {
        ("psg_1", "milestones", MEETING),
        ("psg_2", "milestones", datetime(2026, 6, 1, tzinfo=UTC)),  # each dated by its document
    }
    assert all(d.contribution_type != "blocker" for d in derived)


def test_no_provider_derives_a_blocker_from_the_word_blocking() -> None:
    tags = _passage(
        "psg_1", "src_1", "Budget", "Third-party tags: loaded only after consent, never render-blocking.", MEETING
    )
    assert derive_from_passages([tags]) == []
    item = WorkItemFacts(
        "wi_1",
        "CHK-8",
        "WCAG fixes",
        "todo",
        None,
        MEETING,
        {
            "description": "The audit found 23 issues, 6 of them blocking. "
            "It is parked until the client confirms budget."
        },
    )
    [blocker] = [d for d in derive_from_work_items("CHK", [item]) if d.contribution_type == "blocker"]
    assert blocker.summary == "CHK-8: It is parked until the client confirms budget."
