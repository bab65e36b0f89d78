"""The estimate: complexity signals read from the statements, compared with the project's reference class.

When the reference class and the signals disagree, the rationale shows both side by side and says which one
the proposal follows. Confidence is capped by how many reference items exist (none: at most 0.3), and is
lower when the two disagree. An item whose own estimate the evidence confirms gets no draft, and neither does
an item with an estimate of its own when there is no reference class: signals alone never overrule a person.
"""

from __future__ import annotations

import re
import statistics
from dataclasses import dataclass

from groundwork.domain.enhancement.classify import classify
from groundwork.domain.enhancement.drafting import Line, cell, digest, refs
from groundwork.domain.enhancement.enhancer import EnhancementContext, ReferenceItem
from groundwork.domain.enhancement.model import (
    ACTION_FIELDS,
    ActionOutput,
    ArtifactProposal,
    DraftProposal,
    EvidenceRef,
)
from groundwork.domain.enhancement.phrasing import upper_first
from groundwork.domain.enhancement.scope_drafts import nothing
from groundwork.domain.enhancement.sentences import sectioned_sentences
from groundwork.domain.enhancement.statements import Pool, Statement

FIBONACCI = (1, 2, 3, 5, 8, 13, 21)
_INTEGRATION_WORDS = ("api", "endpoint", "webhook", "vendor", "provider", "service", "queue", "event", "broker")
RISK_WORDS = re.compile(
    r"\b(?:security|auth\w*|tokens?|credentials?|secrets?|passwords?|pci|encrypt\w*|tls|certificates?|migrat\w*"
    r"|backfill\w*|legacy|latency|throughput|load|vendors?|third[- ]party|contracts?|licen[cs]\w*|upstream)\b",
    re.I,
)


@dataclass(frozen=True)
class Signal:
    """One thing that makes the work bigger, and its weight in points."""

    label: str
    weight: float


def signals(statements: list[Statement], own_count: int) -> list[Signal]:
    """What makes work bigger, read from classified statements."""

    def count(kind: str) -> int:
        return sum(1 for s in statements if s.kind == kind)

    text = " ".join(s.text for s in statements).lower()
    areas = sorted({m.lower() for m in RISK_WORDS.findall(text)})
    integrations = sum(1 for word in _INTEGRATION_WORDS if re.search(rf"\b{word}s?\b", text))
    requirements = count("requirement") + count("constraint")
    thin = own_count < 3
    return [
        Signal(f"{requirements} requirement and constraint statement(s)", min(requirements, 8) * 0.5),
        Signal(f"{count('risk')} stated risk(s)", min(count("risk"), 4) * 1.0),
        Signal(f"{count('dependency')} dependency statement(s)", min(count("dependency"), 3) * 1.0),
        Signal(f"{count('question')} open question(s)", min(count("question"), 3) * 0.5),
        Signal(f"{len(areas)} risk word(s): {', '.join(areas[:6]) or 'none'}", min(len(areas), 4) * 0.5),
        Signal(f"{integrations} integration point keyword(s)", min(integrations, 4) * 0.5),
        Signal("little written detail, so more unknowns" if thin else "written detail available", 1.5 if thin else 0.0),
    ]


def raw(found: list[Signal]) -> float:
    """1 plus the signals' weights."""
    return 1 + sum(s.weight for s in found)


def fibonacci_at_least(value: float) -> int:
    """The smallest point value on the scale at or above `value`."""
    return next((p for p in FIBONACCI if p >= value), FIBONACCI[-1])


def fibonacci_nearest(value: float) -> int:
    """The point value on the scale nearest to `value`."""
    return min(FIBONACCI, key=lambda p: (abs(p - value), -p))


def _reference_complexity(item: ReferenceItem) -> float:
    ref = EvidenceRef("work_item", item.id)
    own = [Statement(t, ref, item.key, classify(t, s), s) for t, s in sectioned_sentences(item.text)]
    return raw(signals(own, len(own)))


def estimate(context: EnhancementContext, pool: Pool) -> ActionOutput:
    """Story points from the reference class when there is one, with the signals beside it."""
    wanted = ("requirement", "constraint", "risk", "dependency", "question")
    if pool.empty:
        return nothing(context, pool, wanted, "there is nothing to read the work's size from.")
    used = pool.of(*wanted, own=True)
    found = signals(used, len(pool.own))
    total = raw(found)
    by_signals = fibonacci_at_least(total)
    own_raw = raw(signals([s for s in used if s.own], len(pool.own)))
    body = "Complexity signals (base 1):\n" + "\n".join(f"- {s.label}: +{s.weight:g}" for s in found)
    body += f"\n\nTotal {total:g} → {by_signals} points on the Fibonacci scale."
    references = sorted(context.reference_items, key=lambda r: r.key)
    if references:
        rows, scaled = [], []
        for item in references:
            complexity = _reference_complexity(item)
            scaled.append(item.estimate * own_raw / complexity)
            rows.append(f"| {item.key} | {cell(item.title)} | {item.estimate:g} | {complexity:g} |")
        middle = statistics.median(scaled)
        by_class = fibonacci_nearest(middle)
        points = by_class
        body += (
            f"\n\nReference class: {len(references)} completed work item(s) of the same project with estimates. "
            f"Each estimate is scaled by this item's own complexity ({own_raw:g}) over the reference's; the median, "
            f"{middle:.1f}, is nearest to {by_class} points.\n\n| work item | title | points | complexity |\n"
            "|---|---|---|---|\n" + "\n".join(rows)
        )
        # Capped by how many reference items exist: one comparison is weak evidence.
        cap = min(0.8, 0.3 + 0.1 * len(references))
        agree = by_class == by_signals
        summary = f"{points} story points from {len(references)} reference item(s)"
        if agree:
            summary += "; the complexity signals agree."
        else:
            summary += f"; the complexity signals alone say {by_signals}, so the two disagree."
            body += (
                "\n\n| basis | points |\n|---|---|\n"
                f"| reference class ({len(references)} item(s)) | {by_class} |\n"
                f"| complexity signals | {by_signals} |\n\n"
                "The proposal follows the reference class; the disagreement lowers its confidence."
            )
        score = cap if agree else cap - 0.15
    else:
        points = by_signals
        summary = (
            f"{points} story points from complexity signals alone: no completed work item of this project has an "
            "estimate to compare with, so confidence is capped at 0.3."
        )
        score = 0.3
    current = context.fields.get("estimate")
    own = float(current) if isinstance(current, int | float) and not isinstance(current, bool) else None
    reference_refs = tuple(EvidenceRef("work_item", r.id) for r in references)
    if own is not None and not references and own != points:
        # Signals alone count what the evidence says, not the work: they never overrule a person's estimate.
        why = (
            f"no completed work item of this project has an estimate to compare with, so the item's own estimate "
            f"of {own:g} stands; the complexity signals alone would say {points}."
        )
        kept = _rationale(context, upper_first(why), body, refs(used))
        return ActionOutput((), (kept, digest(context, pool, [], wanted, why)))
    if own is not None:
        summary += f" The item's own estimate is {own:g}."
        if own == points:
            return nothing(context, pool, wanted, f"the evidence confirms the item's own estimate of {own:g}.")
    rationale = _rationale(context, summary, body, refs(used) + reference_refs)
    line = Line(summary, tuple(used))
    draft = DraftProposal(
        ACTION_FIELDS[context.action],
        points,
        round(max(0.05, score), 2),
        refs(used) + reference_refs,
        (line.statement(),),
    )
    return ActionOutput((draft,), (rationale, digest(context, pool, [line], wanted)))


def _rationale(
    context: EnhancementContext, summary: str, body: str, evidence: tuple[EvidenceRef, ...]
) -> ArtifactProposal:
    """The estimate's rationale artifact, whether or not a draft comes with it."""
    return ArtifactProposal(
        "estimate_rationale", f"Estimate rationale for {context.work_item_key}", summary, body, evidence
    )
