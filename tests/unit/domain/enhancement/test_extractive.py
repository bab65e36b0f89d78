"""The extractive generator: evidence about the item, only what it lacks, in each field's shape, deterministic."""

from __future__ import annotations

import re

import pytest

from groundwork.domain.enhancement.enhancer import EnhancementContext, Evidence, ReferenceItem
from groundwork.domain.enhancement.extractive import generate, sectioned_sentences, sentences, work_item_evidence
from groundwork.domain.enhancement.instructions import Instructions
from groundwork.domain.enhancement.model import ACTIONS, ActionOutput, EvidenceRef

MARKUP = re.compile(r"\[[a-z_]+:[A-Za-z0-9_]+\]|`(?:work_item|passage):")
RUNBOOK = Evidence(
    EvidenceRef("passage", "psg_runbook"),
    "# Runbook: nightly settlement job failures\n\n"
    "## Known failure: SFTP timeout\n\n"
    "Twice in the week of 8 June the settlement job failed with an SSH protocol banner error. "
    "The PSP rotates its SFTP host keys and restarts the endpoint between 02:00 and 02:10.\n\n"
    "The job does not retry on its own. Until the retry change ships, rerun it by hand after 02:15:\n\n"
    "```bash\nkubectl -n payments create job --from=cronjob/settlement-import settlement-import-manual\n```\n\n"
    "## Known failure: report not yet published\n\n"
    "If the log says no settlement report for batch, the PSP has not published the file yet.\n\n"
    "## Escalation\n\nNever edit `settlement_lines` by hand: Finance audits every row against the PSP file.",
    "Settlement runbook",
    "Runbook",
)
MENU = Evidence(EvidenceRef("passage", "psg_menu"), "The canteen serves soup on Fridays.", "Canteen menu")


def context(
    action: str,
    title: str = "Investigate flaky settlement job",
    description: str = "Investigate flaky settlement job. It failed twice last week.",
    evidence: tuple[Evidence, ...] = (RUNBOOK, MENU),
    instructions: str = "",
    references: tuple[ReferenceItem, ...] = (),
    fields: dict[str, object] | None = None,
) -> EnhancementContext:
    fields = {"description": description, **(fields or {})}
    own = work_item_evidence("wi_3", title, fields)
    return EnhancementContext(
        action, "wi_3", "PAY-3", title, fields, (*own, *evidence), instructions, "no connector.", references
    )


def value_of(output: ActionOutput) -> str:
    [draft] = output.drafts
    return str(draft.proposed_value)


def digest_of(output: ActionOutput) -> str:
    found = next(a for a in output.artifacts if a.type == "evidence_digest")
    return f"{found.summary}\n{found.body}"


def test_a_sentence_sharing_only_a_four_letter_prefix_with_the_item_is_not_evidence() -> None:
    certificates = Evidence(
        EvidenceRef("passage", "psg_cert"),
        "Regional certificates are renewed by the operations team every spring. Liverpool depots renew theirs "
        "in March.",
        "Certificate runbook",
    )
    mapping = Evidence(
        EvidenceRef("passage", "psg_map"),
        "The live map registers each vehicle when its first ping arrives. Registered vehicles refresh every 10 s.",
        "Live map spec",
    )
    for action in ACTIONS:
        output = generate(
            context(action, "Register vehicles on the live map", "Register vehicles.", (certificates, mapping))
        )
        cited = {r.id for d in output.drafts for r in d.evidence_refs}
        assert "psg_cert" not in cited, action
        assert "certificates" not in digest_of(output).lower(), action


def test_a_vague_item_gets_a_description_with_the_cause_and_fix_from_a_relevant_passage() -> None:
    value = value_of(generate(context("description")))
    assert "## Cause" in value and "rotates its SFTP host keys" in value
    assert "## Fix" in value and ("does not retry on its own" in value or "rerun it by hand after 02:15" in value)
    assert "canteen" not in value.lower()


def test_a_field_with_nothing_to_add_makes_no_draft_and_says_why() -> None:
    output = generate(context("design"))
    assert output.drafts == ()
    assert "The evidence adds nothing to the design" in digest_of(output)


def test_no_draft_line_restates_the_item() -> None:
    echo = Evidence(
        EvidenceRef("passage", "psg_echo"),
        "Investigate the flaky settlement job. The settlement job failed twice last week.",
        "Settlement runbook",
    )
    for action in ACTIONS:
        for draft in generate(context(action, evidence=(echo, RUNBOOK))).drafts:
            for statement in draft.statements:
                assert "failed twice last week" not in statement.text, action
                assert statement.text.lower().rstrip(".") != "investigate the flaky settlement job", action


def test_acceptance_criteria_are_given_when_then_from_a_condition_and_a_failure_case() -> None:
    value = value_of(generate(context("acceptance_criteria")))
    criteria = [c for c in value.split("\n- ") if c.strip()]
    assert criteria and all("**Given**" in c and "**When**" in c and "**Then**" in c for c in criteria)
    # The condition the runbook states becomes the criterion's When, its consequence the Then.
    assert "**When** the log says no settlement report for batch" in value
    assert "Check that never" not in value


def test_a_command_never_becomes_a_requirement_or_a_risk() -> None:
    for action in ("requirements", "risk_check"):
        for draft in generate(context(action)).drafts:
            assert "kubectl" not in str(draft.proposed_value), action
    plan = value_of(generate(context("implementation_plan")))
    assert "`kubectl -n payments create job" in plan  # it belongs to the step that runs it
    assert not re.search(r"^\d+\. Never", plan, re.M)  # a prohibition is no step


def test_instructions_that_were_not_followed_are_reported() -> None:
    instructions = "focus on the PCI re-assessment and on rollback; write acceptance criteria as Given/When/Then"
    output = generate(context("acceptance_criteria", instructions=instructions))
    digest = digest_of(output)
    assert "## Instructions not followed" in digest
    assert "focus on “rollback”: no evidence used for this draft mentions it" in digest
    assert "Given/When/Then" not in digest.split("## Instructions not followed")[1]  # applied, so not reported
    other = digest_of(generate(context("requirements", instructions="Write it in French.")))
    assert "“Write it in French”: not a request the extractive generator can follow" in other


def test_instructions_parse_focus_exclusions_and_formats() -> None:
    parsed = Instructions.parse("Focus on security and latency. Ignore billing, invoices. Number the steps")
    assert [topic for topic, _ in parsed.focus] == ["security", "latency"]
    assert parsed.exclude == ("billing", "invoices")
    assert parsed.formats == {"numbered_steps"} and parsed.unsupported == ()


@pytest.mark.parametrize("action", ACTIONS)
def test_proposed_values_carry_no_markup_and_every_statement_keeps_its_evidence(action: str) -> None:
    for draft in generate(context(action)).drafts:
        assert not MARKUP.search(str(draft.proposed_value))
        assert draft.statements and all(s.evidence_refs for s in draft.statements)
        assert {r for s in draft.statements for r in s.evidence_refs} <= set(draft.evidence_refs)
        assert all(0 <= s.relevance <= 1 for s in draft.statements)


@pytest.mark.parametrize("action", ACTIONS)
def test_same_input_same_drafts(action: str) -> None:
    assert generate(context(action)) == generate(context(action))


def test_confidence_is_lower_when_the_evidence_disagrees() -> None:
    first = Evidence(
        EvidenceRef("passage", "psg_a"), "The settlement job must retry the SFTP download 3 times.", "Runbook"
    )
    agree = Evidence(
        EvidenceRef("passage", "psg_b"),
        "The settlement job must retry the SFTP download 3 times before it alerts.",
        "Job spec",
    )
    disagree = Evidence(
        EvidenceRef("passage", "psg_b"),
        "The settlement job must retry the SFTP download 5 times before it alerts.",
        "Job spec",
    )
    agreeing = generate(context("requirements", evidence=(first, agree))).drafts
    disagreeing = generate(context("requirements", evidence=(first, disagree))).drafts
    assert agreeing and disagreeing
    assert disagreeing[0].confidence < agreeing[0].confidence


def test_the_estimate_is_capped_by_its_reference_class_and_shows_both_bases_when_they_disagree() -> None:
    alone = generate(context("estimate")).drafts[0]
    assert alone.confidence <= 0.3
    references = (ReferenceItem("wi_9", "PAY-9", "Rebuild the ledger", 21.0, "## description\n\nRebuild it."),)
    output = generate(context("estimate", references=references))
    [draft] = output.drafts
    rationale = next(a for a in output.artifacts if a.type == "estimate_rationale")
    assert draft.confidence <= 0.4  # one reference item
    if "disagree" in rationale.summary:
        assert "| reference class (1 item(s)) |" in rationale.body and "| complexity signals |" in rationale.body


def test_without_a_reference_class_the_items_own_estimate_stands_and_the_rationale_says_what_signals_say() -> None:
    output = generate(context("estimate", fields={"estimate": 1}))
    assert output.drafts == ()  # signals alone never overrule a person's estimate
    rationale = next(a for a in output.artifacts if a.type == "estimate_rationale")
    assert rationale.summary.startswith("No completed work item of this project has an estimate to compare with")
    assert "own estimate of 1 stands; the complexity signals alone would say" in rationale.summary
    assert "Complexity signals (base 1):" in rationale.body
    # With a reference class, the estimate is still proposed against the item's own.
    references = (ReferenceItem("wi_9", "PAY-9", "Rebuild the ledger", 21.0, "## description\n\nRebuild it."),)
    assert generate(context("estimate", fields={"estimate": 1}, references=references)).drafts


def test_sentences_unwrap_markdown_and_keep_a_code_block_whole() -> None:
    text = (
        "## Goal\n- First bullet point here.\n1. Second numbered point. Third sentence follows here!"
        "\n\n```\nrun this --now\n```"
    )
    assert sentences(text) == [
        "First bullet point here.",
        "Second numbered point.",
        "Third sentence follows here!",
        "`run this --now`",
    ]


def test_a_passage_that_opens_inside_a_code_block_keeps_its_lines_as_code_never_as_a_risk() -> None:
    # A long block split between passages: this one holds its end, closed by the block's only fence.
    tail = "# mdadm --detail /dev/md1\n    Failed Devices : 1\n    State : clean, degraded\n```\nThe array rebuilds."
    assert sentences(tail) == [
        "`mdadm --detail /dev/md1 ; Failed Devices : 1 ; State : clean, degraded`",
        "The array rebuilds.",
    ]
    output = Evidence(EvidenceRef("passage", "psg_tail"), tail, "RAID chapter")
    risks = generate(context("risk_check", "Replace the failed RAID disk", "A disk failed.", (output,))).drafts
    assert not any("Failed Devices" in str(d.proposed_value) for d in risks)
    # A passage cut off at its end still opens its block as before.
    assert sentences("Start the service with systemd:\n```\nsystemctl start x") == [
        "Start the service with systemd:",
        "`systemctl start x`",
    ]


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
