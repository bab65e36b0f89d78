"""What every action's output shares: draft lines traced to their statements, confidence, the evidence digest.

A proposed value holds only what a person would write into the field: no `[kind:id]` markup. Each line of
it is a `DraftStatement` carrying the references of the statements it was built from and their relevance,
so every line stays traceable through the API (the draft's `statements`) and in the evidence digest.

Confidence comes from the statements, not from how many citations there are: the mean relevance of the
statements a draft uses, a little more when independent passages back it, less when statements disagree
(the same subject with different figures), and low when it rests on the work item alone.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from groundwork.domain.enhancement.enhancer import EnhancementContext
from groundwork.domain.enhancement.model import (
    ACTION_FIELDS,
    ArtifactProposal,
    DraftProposal,
    DraftStatement,
    EvidenceRef,
)
from groundwork.domain.enhancement.statements import Pool, Statement

_NUMBER = re.compile(r"\d+(?:[.,:]\d+)*")
# What each field is called in a sentence ("the evidence adds nothing to the design").
FIELD_WORDS = {
    "requirements": "the requirements",
    "description": "the description",
    "design_notes": "the design",
    "implementation_plan": "the implementation plan",
    "acceptance_criteria": "the acceptance criteria",
    "test_plan": "the test plan",
    "estimate": "the estimate",
    "risks": "the risks",
}


@dataclass(frozen=True)
class Line:
    """One line of a proposed value and the statements it was built from."""

    text: str
    sources: tuple[Statement, ...]

    def statement(self) -> DraftStatement:
        """The line with its evidence references and relevance, for the API."""
        relevance = max((s.relevance for s in self.sources), default=0.0)
        return DraftStatement(self.text, refs(list(self.sources)), round(relevance, 3))


def refs(statements: list[Statement]) -> tuple[EvidenceRef, ...]:
    """The distinct references of statements, in order."""
    ordered: dict[EvidenceRef, None] = {}
    for statement in statements:
        ordered.setdefault(statement.ref, None)
    return tuple(ordered)


def disagreements(used: list[Statement]) -> int:
    """Pairs of statements about the same subject (most content words shared) that give different figures."""
    found = 0
    numbered = [(s, set(_NUMBER.findall(s.text)), s.words) for s in used if _NUMBER.search(s.text)]
    for i, (first, numbers, words) in enumerate(numbered):
        for second, other_numbers, other_words in numbered[i + 1 :]:
            shared = len(words & other_words)
            if first.ref != second.ref and shared >= 3 and shared >= 0.6 * min(len(words), len(other_words)):
                found += numbers != other_numbers
    return found


def confidence(used: list[Statement]) -> float:
    """From the statements' relevance and agreement, never from the number of citations."""
    corpus = [s for s in used if not s.own]
    if not corpus:
        return 0.3 if used else 0.1
    mean = sum(s.relevance for s in corpus) / len(corpus)
    passages = len({s.ref for s in corpus})
    agreement = min(1.0, (passages - 1) / 2)
    value = 0.15 + 0.55 * mean + 0.15 * agreement - 0.2 * min(disagreements(corpus), 2)
    return round(min(0.9, max(0.05, value)), 2)


def classes(used: list[Statement]) -> str:
    """`requirement 3, constraint 1`."""
    counts: dict[str, int] = {}
    for statement in used:
        counts[statement.kind] = counts.get(statement.kind, 0) + 1
    return ", ".join(f"{kind} {n}" for kind, n in counts.items())


def _instructions_section(context: EnhancementContext, pool: Pool, used: list[Statement]) -> str:
    words = frozenset(w for s in used for w in s.words)
    missing = pool.instructions.not_followed(words, context.action)
    if not context.instructions.strip():
        return ""
    if not missing:
        return "\n\n## Instructions\n\nEvery part of the instructions was followed."
    return "\n\n## Instructions not followed\n\n" + "\n".join(f"- {m}" for m in missing)


def digest(
    context: EnhancementContext, pool: Pool, lines: list[Line], wanted: tuple[str, ...], why_none: str = ""
) -> ArtifactProposal:
    """The evidence digest every action produces: each statement of the draft with its evidence and relevance,
    or why there is no draft; and what of the instructions was not followed."""
    field = ACTION_FIELDS[context.action]
    used = [s for line in lines for s in line.sources]
    corpus = [s for s in used if not s.own]
    if not lines:
        summary = f"The evidence adds nothing to {FIELD_WORDS[field]} of {context.work_item_key}: {why_none}"
        body = (
            f"No draft: {why_none} A draft of `{field}` draws on {', '.join(wanted)} statements that the work item "
            "does not already state, from passages about it. Nothing was invented."
        )
    else:
        sources = sorted({s.label for s in corpus})
        summary = (
            f"{len(lines)} statement(s) for {FIELD_WORDS[field]} ({classes(used)}), from "
            + (f"{len(sources)} corpus source(s)" if sources else "the work item alone, so confidence is low")
            + "."
        )
        body = "\n".join(
            f"- {line.text} — relevance {line.statement().relevance:.2f}; "
            + "; ".join(f"{s.kind}, _{s.label}_ `{s.ref.kind}:{s.ref.id}`" for s in line.sources)
            for line in lines
        )
    body += _instructions_section(context, pool, used)
    return ArtifactProposal("evidence_digest", f"Evidence for {field}", summary, body, refs(used))


def draft(context: EnhancementContext, value: object, lines: list[Line]) -> DraftProposal:
    """A draft of the action's field, its statements traced line by line."""
    used = [s for line in lines for s in line.sources]
    return DraftProposal(
        ACTION_FIELDS[context.action], value, confidence(used), refs(used), tuple(line.statement() for line in lines)
    )


def trace(column: str, prefix: str, lines: list[Line]) -> str:
    """A table tracing each numbered line (R1, AC1...) to the class and source it was taken from."""
    rows = "\n".join(
        f"| {prefix}{i} | {', '.join(dict.fromkeys(s.kind for s in line.sources))} | "
        f"{'; '.join(dict.fromkeys(s.label for s in line.sources))} | "
        f"{', '.join(f'`{r.kind}:{r.id}`' for r in refs(list(line.sources)))} |"
        for i, line in enumerate(lines, 1)
    )
    return f"| {column} | class | source | evidence |\n|---|---|---|---|\n{rows}"


def cell(text: str) -> str:
    """Text fit for a Markdown table cell."""
    return text.replace("|", "/").replace("\n", " ")
