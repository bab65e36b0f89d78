"""services/enhancement/chat_completions: a model's answer keeps only cited drafts, and a run's error message is written
for the person reading the run, never an exception's name or repr."""

from __future__ import annotations

import re
import socket

import pytest

from groundwork.domain.enhancement.enhancer import EnhancementContext, Evidence
from groundwork.domain.enhancement.model import EvidenceRef
from groundwork.services.enhancement.chat_completions import (
    ChatCompletionsEnhancer,
    GenerationFailed,
    parse_answer,
    prompt,
)

PYTHON = re.compile(r"\w+(?:Error|Exception)\b|\{'|<class ")


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


async def test_an_unreachable_generator_is_described_not_named() -> None:
    enhancer = ChatCompletionsEnhancer(f"http://127.0.0.1:{_closed_port()}/v1", "model", None, timeout=2)
    context = EnhancementContext("design", "wi_1", "ALPHA-1", "Save cards", {}, (), "", None)
    with pytest.raises(GenerationFailed) as failed:
        await enhancer.enhance(context)
    message = str(failed.value)
    assert "could not be reached" in message and "run the action again" in message
    assert not PYTHON.search(message), message


PASSAGE = Evidence(EvidenceRef("passage", "psg_1"), "The PSP rotates its SFTP host keys at 02:00.", "runbook.md")
ITEM = Evidence(EvidenceRef("work_item", "wi_1"), "Investigate flaky settlement job.", "title")


def _context(action: str = "implementation_plan") -> EnhancementContext:
    return EnhancementContext(action, "wi_1", "PAY-3", "Flaky settlement job", {}, (PASSAGE, ITEM), "Be brief", None)


def test_the_prompt_numbers_the_evidence_the_model_may_cite() -> None:
    text = prompt(_context())
    assert "[1] (runbook.md) The PSP rotates" in text and "[2] (title) Investigate" in text
    assert "Instructions: Be brief" in text and "Work item PAY-3" in text


def test_only_drafts_citing_shown_evidence_are_kept_and_the_digest_says_how_many_were_dropped() -> None:
    answer = {
        "drafts": [
            {"value": "Retry the upload after 02:10.", "evidence": [1, 1, 7], "confidence": 3},
            {"value": "Invented step.", "evidence": [9]},
            {"value": "", "evidence": [1]},
            "not an object",
        ],
        "artifacts": [{"type": "not_a_type", "evidence": [1]}],
    }
    output = parse_answer(_context(), answer)
    assert [(d.proposed_value, d.confidence, d.evidence_refs) for d in output.drafts] == [
        ("Retry the upload after 02:10.", 1.0, (PASSAGE.ref,))
    ]
    assert [a.type for a in output.artifacts] == ["evidence_digest"]
    assert "3 uncited draft(s) were dropped" in output.artifacts[0].summary


def test_an_estimate_must_be_a_number_and_never_a_boolean() -> None:
    answer = {"drafts": [{"value": True, "evidence": [1]}, {"value": "5", "evidence": [1]}]}
    output = parse_answer(_context("estimate"), answer)
    assert output.drafts == ()
    assert output.artifacts[0].summary.startswith("No draft for estimate")
