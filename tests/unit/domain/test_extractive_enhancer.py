"""The extractive generator: grounded, deterministic, steerable, and honest when evidence is missing."""

from __future__ import annotations

import re

import pytest

from groundwork.domain.enhancement.enhancer import EnhancementContext, Evidence
from groundwork.domain.enhancement.extractive import Steering, generate, sentences, work_item_evidence
from groundwork.domain.enhancement.model import ACTION_FIELDS, ACTIONS, EvidenceRef

DESCRIPTION = (
    "Drivers must see their next stop within 5 seconds of a route change. If the dispatcher reassigns a van, "
    "the driver app must show the new route. Location history older than 90 days must be deleted for GDPR."
)
RUNBOOK = Evidence(
    EvidenceRef("passage", "psg_runbook"),
    "Route changes are pushed over MQTT to the driver app. The MQTT broker must stay under 200 ms p99 for pushes. "
    "We decided to use the vendor routing API for reassignments.",
    "Dispatch runbook, paragraph 3",
)
UNRELATED = Evidence(EvidenceRef("passage", "psg_menu"), "The canteen serves soup on Fridays.", "Menu")


def context(
    action: str, evidence: list[Evidence] | None = None, instructions: str = "", description: str = DESCRIPTION
) -> EnhancementContext:
    own = work_item_evidence("wi_1", "Push route changes to drivers", {"description": description})
    return EnhancementContext(
        action,
        "wi_1",
        "DSP-7",
        "Push route changes to drivers",
        {"description": description},
        tuple(own + (evidence or [])),
        instructions,
        "no connector.",
    )


@pytest.mark.parametrize("action", ACTIONS)
def test_every_action_drafts_its_field_from_quoted_sources_only(action: str) -> None:
    output = generate(context(action, [RUNBOOK, UNRELATED]))
    [draft] = output.drafts
    assert draft.field == ACTION_FIELDS[action]
    assert {r.id for r in draft.evidence_refs} <= {"wi_1", "psg_runbook"}
    assert "canteen" not in str(draft.proposed_value)  # irrelevant evidence is not pulled in
    assert any(a.type == "evidence_digest" for a in output.artifacts)
    if isinstance(draft.proposed_value, str):
        cited = set(re.findall(r"\[(work_item|passage):([a-z_0-9]+)\]", draft.proposed_value))
        assert cited <= {("work_item", "wi_1"), ("passage", "psg_runbook")}


def test_same_input_same_output() -> None:
    assert generate(context("test_plan", [RUNBOOK])) == generate(context("test_plan", [RUNBOOK]))


def test_more_independent_evidence_means_more_confidence() -> None:
    alone = generate(context("requirements")).drafts[0].confidence
    supported = generate(context("requirements", [RUNBOOK])).drafts[0].confidence
    assert 0 < alone < supported <= 1


def test_no_evidence_at_all_yields_no_draft_and_says_so() -> None:
    empty = EnhancementContext("requirements", "wi_1", "DSP-8", "Thin item", {}, (), "", None)
    output = generate(empty)
    assert output.drafts == ()
    [digest] = output.artifacts
    assert "nothing was invented" in digest.summary


def test_work_item_alone_is_flagged_as_weak_support() -> None:
    digest = next(a for a in generate(context("requirements")).artifacts if a.type == "evidence_digest")
    assert "work item text alone" in digest.summary


def test_acceptance_criteria_turn_conditions_into_given_when_then() -> None:
    value = generate(context("acceptance_criteria")).drafts[0].proposed_value
    assert "**When** the dispatcher reassigns a van" in value
    assert "**Then** the driver app must show the new route" in value


def test_risk_check_names_concrete_categories_with_evidence() -> None:
    output = generate(context("risk_check", [RUNBOOK]))
    value = output.drafts[0].proposed_value
    for heading in ("Security risk", "Performance risk", "Dependency risk"):
        assert heading in value
    report = next(a for a in output.artifacts if a.type == "risk_report")
    assert "security" in report.summary and report.evidence_refs


def test_estimate_is_a_fibonacci_number_with_its_rationale() -> None:
    output = generate(context("estimate", [RUNBOOK]))
    assert output.drafts[0].proposed_value in (1, 2, 3, 5, 8, 13, 21)
    rationale = next(a for a in output.artifacts if a.type == "estimate_rationale")
    assert "story points" in rationale.summary and "risk area" in rationale.body


def test_plan_states_that_code_context_was_unavailable() -> None:
    output = generate(context("implementation_plan"))
    outline = next(a for a in output.artifacts if a.type == "plan_outline")
    assert "Code context was unavailable: no connector." in outline.summary
    assert output.drafts[0].proposed_value.startswith("1. ")


def test_instructions_exclude_and_focus() -> None:
    excluded = generate(context("requirements", [RUNBOOK], instructions="Exclude GDPR.")).drafts[0]
    assert "GDPR" not in excluded.proposed_value
    focused = generate(context("requirements", [RUNBOOK], instructions="focus on MQTT")).drafts[0]
    assert "MQTT" in focused.proposed_value.splitlines()[2]


def test_sentences_unwrap_markdown() -> None:
    text = "## Goal\n- First bullet point here.\n1. Second numbered point. Third sentence follows here!"
    assert sentences(text) == ["First bullet point here.", "Second numbered point.", "Third sentence follows here!"]


def test_steering_parses_focus_and_exclusions() -> None:
    steering = Steering.parse("Focus: security and latency. Ignore billing, invoices")
    assert {"secu", "late"} <= steering.focus  # stems
    assert steering.exclude == ("billing", "invoices")


def test_wrapped_lines_are_rejoined_into_one_sentence() -> None:
    text = "Card numbers must never appear in\napplication logs at all.\n\n- A bullet that\nwraps too."
    assert sentences(text) == ["Card numbers must never appear in application logs at all.", "A bullet that wraps too."]
