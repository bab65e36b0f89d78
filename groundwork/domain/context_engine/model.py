"""Vocabularies of the context engine, freshness, classification and the subject of a read.

Freshness is computed from an `asOf` and a reference instant, never stored: `fresh` (at most 7 whole
days old), `aging` (at most 30), `stale` (older).
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from datetime import datetime

CONTRIBUTION_TYPES = ("finding", "risk", "blocker", "decision", "dependency", "milestone")
PROVIDER_CLASSIFICATIONS = ("delivery", "corpus", "work_items", "financial", "staffing")
AUTHORITIES = ("advisory", "canonical")
# What a piece of content (an entry, an evidence reference, a corpus source) is classified as.
CONTENT_CLASSES = ("general", "financial", "staffing")
# The restricted classes and the scope each needs on top of `context-engine:read`.
RESTRICTED_SCOPES = {"financial": "context-engine:financial", "staffing": "context-engine:staffing"}
REFERENCE_KINDS = ("passage", "work_item", "work_item_history", "external")
PACKAGE_STATUSES = ("ready", "stale", "superseded")
FRESHNESS_STATUSES = ("fresh", "aging", "stale")
COVERAGE_STATUSES = ("covered", "partial", "none")
EVOLUTION_KINDS = ("contribution_persisted", "created", "merged", "kept_separate", "superseded")

# A provider's capabilities name what it can find; each capability yields one contribution type.
CAPABILITY_TYPES = {
    "findings": "finding",
    "scope_changes": "finding",
    "action_items": "finding",
    "risks": "risk",
    "blockers": "blocker",
    "decisions": "decision",
    "dependencies": "dependency",
    "milestones": "milestone",
}
CAPABILITIES = tuple(CAPABILITY_TYPES)

FRESH_DAYS = 7
AGING_DAYS = 30
_DAY_SECONDS = 86_400

EVOLUTION_RESOURCE = "context_engine_evolution"
EVENT_PERSISTED = "context_engine.contribution_persisted"
EVENT_MERGE_DECIDED = "context_engine.merge_decided"
EVENT_SUPERSEDED = "context_engine.entry_superseded"


@dataclass(frozen=True)
class Freshness:
    """How old something is against a reference instant: status, its `asOf`, whole days of age."""

    status: str
    as_of: datetime
    age_days: int


def age_in_days(as_of: datetime, reference: datetime) -> int:
    """Whole days from `as_of` to `reference` (0 when `as_of` is not earlier)."""
    return max(0, int((reference - as_of).total_seconds() // _DAY_SECONDS))


def freshness(as_of: datetime, reference: datetime) -> Freshness:
    """The freshness of something last evidenced at `as_of`, seen at `reference`."""
    days = age_in_days(as_of, reference)
    status = "fresh" if days <= FRESH_DAYS else "aging" if days <= AGING_DAYS else "stale"
    return Freshness(status, as_of, days)


def package_status(stored_status: str, fresh: Freshness) -> str:
    """`superseded` as stored; otherwise `stale` when its freshness is stale, else `ready`."""
    if stored_status == "superseded":
        return "superseded"
    return "stale" if fresh.status == "stale" else "ready"


def stale_threshold_days() -> int:
    """A package is stale once it is this many whole days old (freshness `stale`)."""
    return AGING_DAYS + 1


def allowed_classes(scopes: frozenset[str]) -> tuple[str, ...]:
    """The content classes a key may see: `general`, plus each restricted class whose scope it holds."""
    return ("general", *(cls for cls, scope in RESTRICTED_SCOPES.items() if scope in scopes))


def provider_visible(classification: str, scopes: frozenset[str]) -> bool:
    """A financial or staffing provider exists only for keys holding that scope."""
    needed = RESTRICTED_SCOPES.get(classification)
    return needed is None or needed in scopes


def content_class_of_provider(classification: str) -> str:
    """The class of everything a provider says: its restricted class, else `general`."""
    return classification if classification in RESTRICTED_SCOPES else "general"


_NON_WORD = re.compile(r"[^\w]+", re.UNICODE)


def normalise_term(term: str) -> str:
    """The key entries merge on: case-folded, accents and punctuation dropped, whitespace collapsed."""
    decomposed = unicodedata.normalize("NFKD", term)
    plain = "".join(c for c in decomposed if not unicodedata.combining(c))
    return " ".join(_NON_WORD.sub(" ", plain.casefold()).split())


@dataclass(frozen=True)
class Subject:
    """What a read is about: a `project`, `engagement` or `portfolio` id, or None for all the caller sees."""

    type: str | None
    id: str | None
