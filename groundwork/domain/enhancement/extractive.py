"""The embedded draft generator: deterministic and extractive.

It never invents a statement. Every line of a draft is built from a sentence of an evidence passage about
the item (or, for acceptance criteria and tests, of the item's own requirements), reworded only
grammatically (an instruction, an observable fact, a Given/When/Then), and each line carries the references
of where it came from in the draft's `statements`, not as markup in the value. Evidence is about the item
when it shares its rarer words, stemmed (`relevance.py`); a line the item already states is no draft line,
and a field with nothing to add gets no draft, only the digest saying why. Each sentence is classified
once (`classify.py`) and each field draws only from its own classes. Same context in, same drafts out.
"""

from __future__ import annotations

from collections.abc import Callable

from groundwork.domain.enhancement import delivery_drafts, scope_drafts
from groundwork.domain.enhancement.enhancer import EnhancementContext, Evidence
from groundwork.domain.enhancement.estimate_draft import estimate
from groundwork.domain.enhancement.model import ActionOutput, EvidenceRef
from groundwork.domain.enhancement.risk_draft import risk_check
from groundwork.domain.enhancement.sentences import sectioned_sentences, sentences
from groundwork.domain.enhancement.statements import Pool, Statement, statement_pool

__all__ = [
    "ExtractiveEnhancer",
    "Pool",
    "Statement",
    "generate",
    "sectioned_sentences",
    "sentences",
    "statement_pool",
    "work_item_evidence",
]


class ExtractiveEnhancer:
    """The deterministic, evidence-grounded default `Enhancer`."""

    name = "extractive-v5"
    in_process = True

    async def enhance(self, context: EnhancementContext) -> ActionOutput:
        """Produce the drafts and artifacts of one action from the work item and its evidence."""
        return generate(context)


_BUILDERS: dict[str, Callable[[EnhancementContext, Pool], ActionOutput]] = {
    "requirements": scope_drafts.requirements,
    "description": scope_drafts.description,
    "design": scope_drafts.design,
    "implementation_plan": delivery_drafts.plan,
    "acceptance_criteria": delivery_drafts.acceptance,
    "test_plan": delivery_drafts.test_plan,
    "estimate": estimate,
    "risk_check": risk_check,
}


def generate(context: EnhancementContext) -> ActionOutput:
    """The pure function behind `ExtractiveEnhancer` (sync, for tests and benchmarks)."""
    return _BUILDERS[context.action](context, statement_pool(context))


def work_item_evidence(work_item_id: str, title: str, fields: dict[str, object]) -> list[Evidence]:
    """The work item's own text as evidence (kind `work_item`), field by field (the title anchors, not quotes)."""
    evidence = []
    for name, value in fields.items():
        if isinstance(value, str) and value.strip():
            evidence.append(Evidence(EvidenceRef("work_item", work_item_id), value, f"work item {name}", name))
    return evidence
