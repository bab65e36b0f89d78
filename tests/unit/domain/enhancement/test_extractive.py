"""The extractive generator: grounded, deterministic, steerable, classed, and honest when evidence is missing."""

from __future__ import annotations

import re

import pytest

from groundwork.domain.enhancement import extractive
from groundwork.domain.enhancement.classify import classify
from groundwork.domain.enhancement.enhancer import EnhancementContext, Evidence, ReferenceItem
from groundwork.domain.enhancement.extractive import (
    Steering,
    generate,
    sectioned_sentences,
    sentences,
    work_item_evidence,
)
from groundwork.domain.enhancement.model import ACTION_FIELDS, ACTIONS, EvidenceRef

DESCRIPTION = (
    "Drivers must see their next stop within 5 seconds of a route change. If the dispatcher reassigns a van, "
    "the driver app must show the new route. Location history older than 90 days must be deleted for GDPR. "
    "The vendor routing API has not been load-tested at 1,200 stops."
)
RUNBOOK = Evidence(
    EvidenceRef("passage", "psg_runbook"),
    "Route changes are pushed over MQTT to the driver app. The MQTT broker must stay under 200 ms p99 for pushes. "
    "We decided to use the vendor routing API for reassignments.",
    "Dispatch runbook, paragraph 3",
)
UNRELATED = Evidence(EvidenceRef("passage", "psg_menu"), "The canteen serves soup on Fridays.", "Menu")
CITATION = re.compile(r"\[(work_item|passage):([a-z_0-9]+)\]|`(work_item|passage):([a-z_0-9]+)`")

# From the demo's DSP "Next-day route optimisation": requirements, a decision, a dependency and two risks.
ROUTE_FIELDS: dict[str, object] = {
    "description": "Build next-day routes for about 110 vans per depot from the imported jobs, respecting time "
    "windows and vehicle capacity.\n\nWe are using the routing vendor's optimisation API rather than writing a "
    "solver. The contract is still with Copperline procurement, so development runs on a trial key limited to "
    "500 stops per request.",
    "requirements": "- No route exceeds vehicle weight or volume capacity.\n"
    "- No driver's shift exceeds 10 hours including breaks.",
    "risks": "- If procurement does not sign by sprint 2026-S24, production has no routing key.\n"
    "- The trial key's 500-stop limit hides how the API behaves at 1,200 stops.",
}


def context(
    action: str,
    evidence: list[Evidence] | None = None,
    instructions: str = "",
    description: str = DESCRIPTION,
    references: tuple[ReferenceItem, ...] = (),
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
        references,
    )


def route_context(action: str, references: tuple[ReferenceItem, ...] = ()) -> EnhancementContext:
    own = work_item_evidence("wi_4", "Next-day route optimisation", ROUTE_FIELDS)
    return EnhancementContext(
        action, "wi_4", "DSP-4", "Next-day route optimisation", ROUTE_FIELDS, tuple(own), "", None, references
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
        cited = {(m[0] or m[2], m[1] or m[3]) for m in CITATION.findall(draft.proposed_value)}
        assert cited <= {("work_item", "wi_1"), ("passage", "psg_runbook")}


@pytest.mark.parametrize("action", [a for a in ACTIONS if a != "estimate"])
def test_every_statement_of_a_draft_keeps_its_evidence_reference(action: str) -> None:
    [draft] = generate(context(action, [RUNBOOK])).drafts
    statements = [
        line
        for line in str(draft.proposed_value).splitlines()
        if line.startswith(("- ", "|", "1", "2", "3", "4", "5", "6", "7", "8", "9", "  **Then**"))
        and not line.startswith(("|---", "| #"))
    ]
    assert statements
    for line in statements:
        if line.startswith("- **Given**") or line.startswith("- **When**"):
            continue  # its citation closes the **Then** line below it
        assert CITATION.search(line), line


@pytest.mark.parametrize("action", ACTIONS)
def test_same_input_same_drafts(action: str) -> None:
    assert generate(context(action, [RUNBOOK])) == generate(context(action, [RUNBOOK]))


def test_the_actions_of_one_run_classify_its_evidence_once_and_draft_as_if_alone(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    alone = {}
    for action in ACTIONS:
        extractive._pool.cache_clear()  # each action classifies the evidence for itself
        alone[action] = generate(context(action, [RUNBOOK, UNRELATED]))
    extractive._pool.cache_clear()
    classified: list[str] = []

    def counting(text: str, section: str | None = None) -> str:
        classified.append(text)
        return classify(text, section)

    monkeypatch.setattr(extractive, "classify", counting)
    together = {action: generate(context(action, [RUNBOOK, UNRELATED])) for action in ACTIONS}
    assert together == alone
    assert classified and len(classified) == len(set(classified))  # each sentence once for all eight actions


def test_requirements_never_list_risks_and_risks_never_list_requirements() -> None:
    requirements = str(generate(route_context("requirements")).drafts[0].proposed_value)
    risks = str(generate(route_context("risk_check")).drafts[0].proposed_value)
    plan = str(generate(route_context("implementation_plan")).drafts[0].proposed_value)
    risk = "The trial key's 500-stop limit hides how the API behaves at 1,200 stops."
    assert risk not in requirements and "hides how the API behaves" not in plan
    assert risk in risks and "If procurement does not sign" in risks
    assert "No route exceeds vehicle weight" in requirements
    assert "No route exceeds" not in risks and "Build next-day routes" not in risks
    assert "### Behaviour" in requirements and "### Constraints" in requirements


def test_acceptance_criteria_derive_given_when_then_from_the_requirement_itself() -> None:
    value = str(generate(context("acceptance_criteria")).drafts[0].proposed_value)
    assert "**When** the dispatcher reassigns a van\n  **Then** the driver app shows the new route" in value
    # No condition of its own: the criterion says what must be observed.
    assert "**Check that** drivers see their next stop within 5 seconds of a route change" in value
    assert "**Check that** location history older than 90 days is deleted for GDPR" in value
    assert "is delivered" not in value and "behaviour is exercised" not in value
    assert "The vendor routing API" not in value  # a risk is no acceptance criterion
    state = generate(
        context("acceptance_criteria", description="If the PSP is unavailable, checkout must continue without it.")
    )
    assert "**Given** the PSP is unavailable\n  **Then** checkout continues without it" in str(
        state.drafts[0].proposed_value
    )


def test_implementation_steps_are_imperative_grouped_by_component_in_dependency_order() -> None:
    value = str(generate(route_context("implementation_plan")).drafts[0].proposed_value)
    assert "Implement:" not in value
    headings = re.findall(r"^### (.+)$", value, re.M)
    assert headings[0] == "Before building"  # what the work depends on comes first
    steps = re.findall(r"^\d+\. (.+)$", value, re.M)
    assert steps[0].startswith("Settle what this work depends on: the contract is still with Copperline procurement")
    assert "Build next-day routes for about 110 vans per depot" in value
    assert "Make sure no route exceeds vehicle weight or volume capacity." in value
    numbers = [int(n) for n in re.findall(r"^(\d+)\.", value, re.M)]
    assert numbers == list(range(1, len(numbers) + 1))  # one numbering across the groups
    grouped = generate(
        context(
            "implementation_plan",
            description="Add a `position_events` table for route changes. The driver app must show the new route "
            "from `position_events`. Write the migration for `position_events` first.",
        )
    )
    text = str(grouped.drafts[0].proposed_value)
    assert "### `position_events`" in text


def test_the_estimate_compares_with_completed_work_of_the_project_and_says_so() -> None:
    alone = generate(route_context("estimate"))
    rationale = next(a for a in alone.artifacts if a.type == "estimate_rationale")
    assert "no completed work item of this project has an estimate" in rationale.summary
    references = (
        ReferenceItem("wi_2", "DSP-1", "Import next-day orders", 5.0, "## description\n\nPick up the file."),
        ReferenceItem("wi_3", "DSP-2", "Dispatcher sign-in", 3.0, "## description\n\nReplace the local accounts."),
    )
    compared = generate(route_context("estimate", references))
    [draft] = compared.drafts
    assert draft.proposed_value in (1, 2, 3, 5, 8, 13, 21)
    rationale = next(a for a in compared.artifacts if a.type == "estimate_rationale")
    assert "compared with 2 completed work item(s) of this project" in rationale.summary
    assert "| DSP-1 | Import next-day orders | 5 |" in rationale.body
    assert {"wi_2", "wi_3"} <= {r.id for r in draft.evidence_refs}


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


def test_risk_check_groups_stated_risks_by_area_with_evidence() -> None:
    output = generate(route_context("risk_check"))
    value = str(output.drafts[0].proposed_value)
    assert "### Performance risk" in value and "### Dependency risk" in value
    report = next(a for a in output.artifacts if a.type == "risk_report")
    assert "dependency" in report.summary and report.evidence_refs


def test_a_risk_check_with_no_stated_risk_drafts_nothing_and_says_why() -> None:
    output = generate(context("risk_check", description="Drivers must see their next stop within 5 seconds."))
    assert output.drafts == ()
    report = next(a for a in output.artifacts if a.type == "risk_report")
    assert "absence of evidence" in report.body


def test_plan_states_that_code_context_was_unavailable() -> None:
    output = generate(context("implementation_plan"))
    outline = next(a for a in output.artifacts if a.type == "plan_outline")
    assert "Code context was unavailable: no connector." in outline.summary


def test_instructions_exclude_and_focus() -> None:
    excluded = generate(context("requirements", [RUNBOOK], instructions="Exclude GDPR.")).drafts[0]
    assert "GDPR" not in str(excluded.proposed_value)
    focused = generate(context("requirements", [RUNBOOK], instructions="focus on MQTT")).drafts[0]
    first = next(line for line in str(focused.proposed_value).splitlines() if line.startswith("- **R"))
    assert "R1." in first


def test_sentences_unwrap_markdown() -> None:
    text = "## Goal\n- First bullet point here.\n1. Second numbered point. Third sentence follows here!"
    assert sentences(text) == ["First bullet point here.", "Second numbered point.", "Third sentence follows here!"]


def test_headings_become_the_section_of_the_sentences_under_them() -> None:
    text = (
        "## Risks\n\nExport speed is unknown.\n\nApproach. Data is exported month by month.\n\n"
        "Risks and mitigations\n\nThe replica may be slow at night."
    )
    assert sectioned_sentences(text, "plan.pdf") == [
        ("Export speed is unknown.", "plan.pdf > Risks"),
        ("Data is exported month by month.", "plan.pdf > Approach"),
        ("The replica may be slow at night.", "plan.pdf > Risks and mitigations"),
    ]


def test_steering_parses_focus_and_exclusions() -> None:
    steering = Steering.parse("Focus: security and latency. Ignore billing, invoices")
    assert {"secu", "late"} <= steering.focus  # stems
    assert steering.exclude == ("billing", "invoices")


def test_wrapped_lines_are_rejoined_into_one_sentence() -> None:
    text = "Card numbers must never appear in\napplication logs at all.\n\n- A bullet that\nwraps too."
    assert sentences(text) == ["Card numbers must never appear in application logs at all.", "A bullet that wraps too."]
