"""The statements an action may draw on: the work item's own sentences and the evidence sentences about it.

Every sentence is classified once (`classify.py`), given what it states beyond its class (a cause, a fix,
a limit, a setting, a command: `relevance.facet`) and a relevance to the item (`relevance.ItemQuery`).
A corpus sentence joins the pool when its passage ranks as relevant and the sentence is kept there, when
the caller did not exclude it, and when it adds something the item does not already state.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

from groundwork.domain.enhancement.classify import classify
from groundwork.domain.enhancement.enhancer import CorpusRarity, EnhancementContext, Evidence
from groundwork.domain.enhancement.instructions import Instructions
from groundwork.domain.enhancement.model import EvidenceRef
from groundwork.domain.enhancement.relevance import ItemQuery, Scored, facet, keeps, relevant_passages, stems
from groundwork.domain.enhancement.sentences import sectioned_sentences

# Document furniture that is not a statement: attendee lists, owners, message templates with placeholders.
_NOISE = re.compile(
    r"^(?:present|attendees|owner|pager|epic|status|prepared by)\b|\{[a-z_]+\}|^actions?\s*:"
    r"|^(?!(?:hard|soft|decisions?|agreed|risks?|constraints?|requirements?|questions?)\b)[A-Z][a-z]+:\s+[a-z]+\b",
    re.I,
)


# An inline code span of several words: a command line, not a name.
_CODE_BLOCK = re.compile(r"`[^`]*\s[^`]*\s[^`]*`")


@dataclass(frozen=True)
class Statement:
    """A sentence, where it came from, what kind of statement it is and how relevant it is to the item."""

    text: str
    ref: EvidenceRef
    label: str
    kind: str
    section: str | None = None
    relevance: float = 1.0
    facet: str | None = None

    @property
    def own(self) -> bool:
        """Whether the work item itself states it."""
        return self.ref.kind == "work_item"

    @property
    def words(self) -> frozenset[str]:
        """Its content stems."""
        return stems(self.text)

    @property
    def is_command(self) -> bool:
        """A code block, or a sentence carrying one: never a requirement or a risk."""
        return self.facet == "command" or bool(_CODE_BLOCK.search(self.text))


@dataclass(frozen=True)
class Pool:
    """The classified statements of one action: the work item's own, then the relevant corpus ones."""

    own: tuple[Statement, ...]
    corpus: tuple[Statement, ...]
    query: ItemQuery
    instructions: Instructions

    def of(self, *kinds: str, own: bool = False) -> list[Statement]:
        """Corpus statements of these classes (and the item's own, when asked), focus first, then by relevance."""
        chosen = [s for s in (*self.own, *self.corpus) if s.kind in kinds and (own or not s.own)]
        return self.ranked(chosen)

    def with_facet(self, *facets: str) -> list[Statement]:
        """Corpus statements stating one of these facets."""
        return self.ranked([s for s in self.corpus if s.facet in facets])

    def ranked(self, statements: list[Statement]) -> list[Statement]:
        """Focus matches first, then the most relevant (stable, so same input, same order)."""
        focus = self.instructions.focus_words
        return sorted(statements, key=lambda s: (0 if s.words & focus else 1, 0 if s.own else 1, -s.relevance))

    @property
    def empty(self) -> bool:
        """Nothing at all to draw on."""
        return not self.own and not self.corpus


def statement_pool(context: EnhancementContext) -> Pool:
    """The work item's own sentences and the evidence sentences relevant to it, each classified once."""
    description = str(context.fields.get("description") or "")
    own_text = " ".join([context.title, *(v for v in context.fields.values() if isinstance(v, str))])
    return _pool(context.instructions, context.title, description, own_text, context.evidence, context.rarity)


# The actions of a run share their inputs: its eight actions classify its evidence once, not eight times.
@functools.lru_cache(maxsize=32)
def _pool(
    instructions_text: str,
    title: str,
    description: str,
    own_text: str,
    shown: tuple[Evidence, ...],
    rarity: CorpusRarity | None = None,
) -> Pool:
    instructions = Instructions.parse(instructions_text)
    passages = [e for e in shown if e.ref.kind != "work_item"]
    query = ItemQuery.of(
        f"{title} {description}",
        own_text,
        instructions.focus_words,
        [_scored_text(e) for e in passages],
        rarity,
    )
    own: list[Statement] = []
    seen: set[str] = set()
    for evidence in shown:
        if evidence.ref.kind != "work_item":
            continue
        for text, section in sectioned_sentences(evidence.text, evidence.section):
            if text.lower() not in seen and instructions.allows(text) and not _NOISE.search(text):
                seen.add(text.lower())
                own.append(
                    Statement(text, evidence.ref, evidence.label, classify(text, section), section, 1.0, facet(text))
                )
    scores = {e.ref.id: query.relevance(_scored_text(e)) for e in passages}
    relevant = relevant_passages(
        [Scored(e.ref.id, source_of(e.label), e.section or "", scores[e.ref.id]) for e in passages]
    )
    corpus: list[Statement] = []
    for evidence in passages:
        if evidence.ref.id not in relevant:
            continue
        for text, section in _with_commands(sectioned_sentences(evidence.text, evidence.section)):
            key = text.lower()
            if key in seen or not instructions.allows(text) or _NOISE.search(text) or query.restates(text):
                continue
            score, kind_of = query.relevance(text), facet(text)
            if not keeps(score, kind_of):
                continue
            seen.add(key)
            # A sentence weighs what its passage does, and more when it shares the item's words itself.
            weight = round(min(1.0, 0.5 * scores[evidence.ref.id] + 0.5 * max(score, 0.3 if kind_of else 0.0)), 3)
            corpus.append(
                Statement(text, evidence.ref, evidence.label, classify(text, section), section, weight, kind_of)
            )
    return Pool(tuple(own), tuple(corpus), query, instructions)


def _scored_text(evidence: Evidence) -> str:
    """What a passage is judged by: its source's title, its section and its text."""
    return f"{source_of(evidence.label)} {evidence.section or ''} {evidence.text}"


def source_of(label: str) -> str:
    """The source a passage's label names (`Title, p. 3, ¶ 2` -> `Title`)."""
    return re.split(r", (?:p\. \d+|¶ \d+)", label, maxsplit=1)[0]


def _with_commands(found: list[tuple[str, str | None]]) -> list[tuple[str, str | None]]:
    """A sentence that introduces a code block ("rerun it by hand after 02:15:") joined with it."""
    joined: list[tuple[str, str | None]] = []
    for text, section in found:
        if joined and joined[-1][0].endswith(":") and text.startswith("`") and joined[-1][1] == section:
            joined[-1] = (f"{joined[-1][0]} {text}", section)
        else:
            joined.append((text, section))
    return joined
