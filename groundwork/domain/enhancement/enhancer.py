"""The `Enhancer` protocol: what a draft generator receives and must return."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

from groundwork.domain.enhancement.model import ActionOutput, EvidenceRef


@dataclass(frozen=True)
class Evidence:
    """One piece of evidence a generator may quote: its reference, its exact text and a human label."""

    ref: EvidenceRef
    text: str
    label: str
    # Where the text sits: the work item field, or the heading path above a passage ("Spec > Risks").
    section: str | None = None


@dataclass(frozen=True)
class ReferenceItem:
    """A completed work item of the same project with an estimate: the reference class an estimate compares with."""

    id: str
    key: str
    title: str
    estimate: float
    # Its text fields, so its complexity can be read the same way as the target's.
    text: str


@dataclass(frozen=True)
class CorpusRarity:
    """How many of the project's passages hold each of the item's words (stems), out of how many passages.

    A word's rarity in the whole corpus says how much it tells about a passage: the topic of an item ("munin",
    "firewall") is rare in a manual and common among the passages gathered for it, while its everyday words
    ("want", "still", "set") are the reverse."""

    passages: int
    frequencies: tuple[tuple[str, int], ...]


@dataclass(frozen=True)
class EnhancementContext:
    """Everything a generator may use for one action, and nothing else."""

    action: str
    work_item_id: str
    work_item_key: str
    title: str
    fields: dict[str, Any]
    evidence: tuple[Evidence, ...]
    instructions: str
    # Why code context is absent (no scope, no authorized connector); None when it was provided.
    code_context_unavailable_reason: str | None
    # Completed, estimated work items of the same project (the estimate's reference class).
    reference_items: tuple[ReferenceItem, ...] = ()
    # The item's words' frequencies in the project's corpus; None when the run's evidence predates them.
    rarity: CorpusRarity | None = None


class EnhancementFailure(Exception):
    """A generator could not produce an action's output; `code` is one of `ACTION_ERROR_CODES`."""

    def __init__(self, code: str, message: str, *, retryable: bool) -> None:
        super().__init__(message)
        self.code = code
        self.retryable = retryable


class Enhancer(Protocol):
    """Turns an action's context into drafts and artifacts; never writes code, never changes a work item."""

    name: str
    # True when the generator calls nothing outside this process and answers within milliseconds: a run's
    # initial actions then run inside its first, local activity instead of an activity of their own.
    in_process: bool

    async def enhance(self, context: EnhancementContext) -> ActionOutput:
        """Produce the drafts and artifacts of `context.action`."""
        ...
