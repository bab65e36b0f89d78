"""Acceptance criteria and test rows: a When of the statement's own wherever the evidence gives one."""

from __future__ import annotations

import pytest

from groundwork.domain.enhancement.delivery_drafts import event
from groundwork.domain.enhancement.enhancer import EnhancementContext, Evidence
from groundwork.domain.enhancement.extractive import generate, work_item_evidence
from groundwork.domain.enhancement.model import ActionOutput, EvidenceRef

PLACEHOLDERS = ("**When** it is checked", "**When** the work is reviewed", "**When** the work is checked")


@pytest.mark.parametrize(
    ("sentence", "expected"),
    [
        ("Add the host to /etc/hosts.allow before the restart.", "`/etc/hosts.allow` is configured"),
        ("Generate the pair with `ssh-keygen -t ed25519 -a 100`.", "`ssh-keygen -t ed25519 -a 100` is run"),
        ("Set `PRUNEDPATHS` so backups are not indexed.", "`PRUNEDPATHS` is set"),
        ("The postfix-policyd-spf-python package checks SPF records.", "`postfix-policyd-spf-python` is installed"),
        ("The visudo command checks the syntax before saving.", "`visudo` is run"),
    ],
)
def test_a_criterion_takes_its_when_from_the_component_a_statement_acts_on(sentence: str, expected: str) -> None:
    assert event(sentence) == expected


@pytest.mark.parametrize(
    "sentence",
    [
        "Each returned token is mapped to our `customer_id`.",  # an identifier says what is involved, not what is done
        "A hard link cannot be differentiated from the linked file.",  # "linked" describes the file
        "Positions are streamed over a WebSocket filtered by region.",
        "Most services keep running.",
    ],
)
def test_a_statement_naming_no_component_acted_on_has_no_event(sentence: str) -> None:
    assert event(sentence) is None


def _context(
    action: str,
    evidence: tuple[Evidence, ...],
    title: str = "Replace a failed RAID disk",
    description: str = "A disk of the RAID mirror failed; replace it without data loss.",
) -> EnhancementContext:
    fields: dict[str, object] = {"description": description}
    own = work_item_evidence("wi_9", title, fields)
    return EnhancementContext(action, "wi_9", "OPS-9", title, fields, (*own, *evidence), "", "no connector.", ())


RAID = Evidence(
    EvidenceRef("passage", "psg_raid"),
    "## 12.1.1.2. Setting up RAID\n\n"
    "The RAID mirror keeps a copy of every block on two disks of the array. "
    "The new disk must be added to the RAID array; the mirror is then rebuilt onto it. "
    "Each time a disk of the RAID array is replaced, the kernel rebuilds the mirror onto the new disk. "
    "Disks of the array are listed in /etc/mdadm/mdadm.conf for the RAID array to assemble at boot.",
    "RAID chapter",
    "Setting up RAID",
)


def _criteria(output: ActionOutput) -> list[str]:
    [draft] = output.drafts
    return [c for c in str(draft.proposed_value).split("\n- ") if c.strip()]


def test_acceptance_criteria_take_their_when_from_a_consequence_a_condition_and_a_configured_path() -> None:
    criteria = _criteria(generate(_context("acceptance_criteria", (RAID,))))
    text = "\n".join(criteria)
    # "X; Y": the event and what follows from it.
    assert "**When** the new disk is added to the RAID array\n  **Then** the mirror is then rebuilt onto it" in text
    # "Each time X, Y" is a condition like "When X, Y".
    assert "**When** a disk of the RAID array is replaced" in text
    assert "**When** `/etc/mdadm/mdadm.conf` is configured" in text
    # Section numbers are the handbook's furniture, not the case's name.
    assert "“12.1.1.2." not in text and "the case “Setting up RAID”" in text


def test_criteria_prefer_statements_that_give_a_when_of_their_own() -> None:
    criteria = _criteria(generate(_context("acceptance_criteria", (RAID,))))
    corpus = [c for c in criteria if "the case “" in c]
    assert corpus, criteria
    # Every corpus statement here names an event, so none is left with a placeholder When.
    assert not [c for c in corpus if any(p in c for p in PLACEHOLDERS)]


def test_test_rows_carry_the_event_as_their_action() -> None:
    [draft] = generate(_context("test_plan", (RAID,))).drafts
    rows = [r for r in str(draft.proposed_value).splitlines() if r.startswith("| T")]
    assert any("; a disk of the RAID array is replaced |" in r for r in rows), rows


def test_until_holds_before_its_event_not_once_it_has_happened() -> None:
    runbook = Evidence(
        EvidenceRef("passage", "psg_until"),
        "## Known failure\n\nUntil the retry change ships, rerun the import by hand after 02:15.\n\n"
        "Never edit `settlement_lines` by hand.",
        "Settlement runbook",
        "Known failure",
    )
    item = ("Settlement import fails at night", "The settlement import failed; it needs a rerun by hand.")
    text = "\n".join(_criteria(generate(_context("acceptance_criteria", (runbook,), *item))))
    assert "**When** it is checked before the retry change ships" in text
    assert "**When** the retry change ships" not in text  # the opposite of what the runbook says
    # "Edit" is an instruction's verb: the prohibition is observed as a fact.
    assert "`settlement_lines` are never edited by hand" in text
