"""A draft generator that speaks the OpenAI-compatible chat-completions protocol.

It keeps the same evidence discipline as the extractive default: the model sees the evidence as a
numbered list and must cite the numbers it used, line by line. Each statement (a line of a draft) is
checked against the evidence it cites: most of its content words must be in the cited text. An
unsupported statement is dropped and listed in the evidence digest; a draft or artifact citing nothing
that was shown is dropped too. Citation markers never reach `proposedValue`: each statement's evidence
goes in the draft's `statements`. It never asks for code and never changes a work item.
"""

from __future__ import annotations

import json
import re
from typing import Any

import httpx

from groundwork.domain.enhancement.enhancer import EnhancementContext, EnhancementFailure, Evidence
from groundwork.domain.enhancement.model import (
    ACTION_FIELDS,
    ARTIFACT_TYPES,
    ActionOutput,
    ArtifactProposal,
    DraftProposal,
    DraftStatement,
    EvidenceRef,
)
from groundwork.domain.evidence_search.analysis import content_terms

# A statement is supported when at least this share of its content words is in the evidence it cites.
SUPPORTED_SHARE = 0.6
_MARKERS = re.compile(r"\s*\[(?:\d+(?:\s*,\s*\d+)*|[a-z_]+:[A-Za-z0-9_]+)\]")
_NUMBERS = re.compile(r"\[(\d+(?:\s*,\s*\d+)*)\]")

_SYSTEM = (
    "You draft proposals for a software work item. Use ONLY the numbered evidence given. Every draft and "
    "artifact must cite the evidence numbers it relies on in `evidence` (e.g. [1, 3]), and every line of a draft "
    "ends with the numbers of the evidence that line states (e.g. `- Rotate keys monthly. [2]`); a line the "
    "cited evidence does not support is dropped. Never write code. Answer with one JSON object: "
    '{"drafts": [{"value": <Markdown string, or a number of story points for estimate>, '
    '"confidence": <0..1>, "evidence": [<numbers>]}], '
    '"artifacts": [{"type": <one of ' + ", ".join(ARTIFACT_TYPES) + '>, "title": str, "summary": str, '
    '"body": <Markdown>, "evidence": [<numbers>]}]}'
)


class GenerationFailed(EnhancementFailure):
    """The endpoint failed, could not be reached or answered unusable JSON (retried by the activity's policy)."""

    def __init__(self, message: str) -> None:
        super().__init__("generation_failed", message, retryable=True)


class GenerationRejected(EnhancementFailure):
    """The endpoint refused the request (4xx): retrying the same request cannot help."""

    def __init__(self, message: str) -> None:
        super().__init__("generation_rejected", message, retryable=False)


class ChatCompletionsEnhancer:
    """An `Enhancer` backed by any OpenAI-compatible `/chat/completions` endpoint."""

    in_process = False  # a network call: its actions run in an activity that heartbeats and retries alone

    def __init__(self, base_url: str, model: str, api_key: str | None, timeout: float = 120.0) -> None:
        self.base_url = base_url.rstrip("/")
        self.model = model
        self.api_key = api_key
        self.timeout = timeout
        self.name = f"chat-completions:{model}"

    async def enhance(self, context: EnhancementContext) -> ActionOutput:
        """Ask the endpoint for the action's drafts and keep only what cites shown evidence."""
        headers = {"Authorization": f"Bearer {self.api_key}"} if self.api_key else {}
        body = {
            "model": self.model,
            "temperature": 0,
            "response_format": {"type": "json_object"},
            "messages": [{"role": "system", "content": _SYSTEM}, {"role": "user", "content": prompt(context)}],
        }
        try:
            async with httpx.AsyncClient(timeout=self.timeout) as http:
                response = await http.post(f"{self.base_url}/chat/completions", json=body, headers=headers)
        except httpx.HTTPError as exc:
            raise GenerationFailed(self._unreachable(exc)) from None
        if 400 <= response.status_code < 500 and response.status_code not in (408, 429):
            raise GenerationRejected(
                f"The draft generator refused the request (HTTP {response.status_code}); retrying cannot help. "
                "Check its model name and API key (GROUNDWORK_LLM_MODEL, GROUNDWORK_LLM_API_KEY)."
            )
        if response.status_code >= 400:
            raise GenerationFailed(f"The draft generator answered HTTP {response.status_code} on every attempt.")
        try:
            content = response.json()["choices"][0]["message"]["content"]
            answer = json.loads(content)
        except (ValueError, KeyError, IndexError, TypeError):
            raise GenerationFailed(
                "The draft generator's answers were not chat completions holding one JSON object."
            ) from None
        return parse_answer(context, answer)

    def _unreachable(self, exc: httpx.HTTPError) -> str:
        """Why the endpoint gave no answer, for the person reading the failed run (no exception's name)."""
        if isinstance(exc, httpx.TimeoutException):
            why = f"did not answer within {self.timeout:g} seconds"
        elif isinstance(exc, httpx.ConnectError):
            why = "could not be reached: the connection was refused or its address did not resolve"
        else:
            why = "dropped the connection before it answered"
        return f"The draft generator {why}. Check that it runs (GROUNDWORK_LLM_BASE_URL), then run the action again."


def prompt(context: EnhancementContext) -> str:
    """The user message: the action, the work item, the instructions and the numbered evidence."""
    evidence = "\n".join(f"[{i}] ({e.label}) {e.text}" for i, e in enumerate(context.evidence, 1))
    code = (
        f"Code context is unavailable: {context.code_context_unavailable_reason}"
        if context.code_context_unavailable_reason
        else ""
    )
    references = ""
    if context.action == "estimate" and context.reference_items:
        listed = "\n".join(f"- {r.key} ({r.estimate:g} points): {r.title}" for r in context.reference_items)
        references = f"\n\nCompleted work items of this project with estimates (reference class):\n{listed}"
    return (
        f"Action: {context.action} (drafts the field `{ACTION_FIELDS[context.action]}`).\n"
        f"Work item {context.work_item_key}: {context.title}\n"
        f"Instructions: {context.instructions or '(none)'}\n{code}\n\nEvidence:\n{evidence or '(none)'}{references}"
    )


def _cited(numbers: Any, evidence: tuple[Evidence, ...]) -> tuple[EvidenceRef, ...]:
    refs: dict[EvidenceRef, None] = {}
    for number in numbers if isinstance(numbers, list) else []:
        if isinstance(number, int) and 1 <= number <= len(evidence):
            refs.setdefault(evidence[number - 1].ref, None)
    return tuple(refs)


def supported(text: str, cited: list[Evidence]) -> float:
    """The share of a statement's content words found in the evidence it cites (1.0 for a line without any)."""
    words = set(content_terms(text))
    if not words:
        return 1.0
    shown = set(content_terms(" ".join(e.text for e in cited)))
    return round(len(words & shown) / len(words), 3)


def checked_lines(
    value: str, default: list[int], evidence: tuple[Evidence, ...]
) -> tuple[list[str], list[DraftStatement], list[str]]:
    """The value's lines without markers, each supported line as a statement, and the unsupported lines."""
    kept: list[str] = []
    statements: list[DraftStatement] = []
    dropped: list[str] = []
    for line in value.splitlines():
        marked = [int(n) for group in _NUMBERS.findall(line) for n in group.split(",")]
        text = _MARKERS.sub("", line).rstrip()
        numbers = [n for n in (marked or default) if 1 <= n <= len(evidence)]
        cited = [evidence[n - 1] for n in dict.fromkeys(numbers)]
        plain = text.strip().lstrip("-*# ").strip()
        if not plain or not content_terms(plain):
            kept.append(text)  # a heading's rule or a blank line: structure, not a statement
            continue
        share = supported(plain, cited)
        if not cited or share < SUPPORTED_SHARE:
            dropped.append(plain)
            continue
        kept.append(text)
        refs = tuple(dict.fromkeys(e.ref for e in cited))
        statements.append(DraftStatement(plain, refs, share))
    return kept, statements, dropped


def parse_answer(context: EnhancementContext, answer: Any) -> ActionOutput:
    """Turn the model's JSON into proposals, dropping anything without cited evidence and every statement the
    evidence it cites does not support."""
    field = ACTION_FIELDS[context.action]
    drafts: list[DraftProposal] = []
    dropped = 0
    unsupported: list[str] = []
    for item in answer.get("drafts", []) if isinstance(answer, dict) else []:
        refs = _cited(item.get("evidence"), context.evidence) if isinstance(item, dict) else ()
        value = item.get("value") if isinstance(item, dict) else None
        # A boolean is not a number of story points (in Python it is an int).
        number = isinstance(value, int | float) and not isinstance(value, bool)
        valid = number if field == "estimate" else isinstance(value, str) and value.strip()
        if not refs or not valid:
            dropped += 1
            continue
        confidence = item.get("confidence")
        confidence = min(1.0, max(0.0, float(confidence))) if isinstance(confidence, int | float) else 0.5
        statements: tuple[DraftStatement, ...] = ()
        if isinstance(value, str):
            default = [n for n in item.get("evidence", []) if isinstance(n, int) and not isinstance(n, bool)]
            lines, checked, lost = checked_lines(value, default, context.evidence)
            unsupported += lost
            if not checked:
                dropped += 1
                continue
            value, statements = "\n".join(lines).strip(), tuple(checked)
            refs = tuple(dict.fromkeys(r for s in statements for r in s.evidence_refs))
        drafts.append(DraftProposal(field, value, confidence, refs, statements))
    artifacts: list[ArtifactProposal] = []
    for item in answer.get("artifacts", []) if isinstance(answer, dict) else []:
        if not isinstance(item, dict) or item.get("type") not in ARTIFACT_TYPES:
            continue
        refs = _cited(item.get("evidence"), context.evidence)
        if refs:
            artifacts.append(
                ArtifactProposal(
                    item["type"],
                    str(item.get("title", ""))[:300],
                    str(item.get("summary", ""))[:2000],
                    str(item.get("body", "")),
                    refs,
                )
            )
    used = tuple(dict.fromkeys(r for d in drafts for r in d.evidence_refs))
    summary = f"{len(drafts)} draft(s) for {field}, each citing the evidence it used" + (
        f"; {dropped} uncited draft(s) were dropped." if dropped else "."
    )
    if unsupported:
        summary += f" {len(unsupported)} statement(s) the cited evidence does not support were dropped."
    if not drafts:
        summary = (
            f"No draft for {field}: the generator cited no evidence shown to it that supports it, so nothing was kept."
        )
    body = "\n".join(f"- `{r.kind}:{r.id}`" for r in used)
    if unsupported:
        body += "\n\n## Unsupported statements (dropped)\n\n" + "\n".join(f"- {text}" for text in unsupported)
    artifacts.append(ArtifactProposal("evidence_digest", f"Evidence for {field}", summary, body.strip(), used))
    return ActionOutput(tuple(drafts), tuple(artifacts))
