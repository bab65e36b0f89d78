"""The governed merge decision: is a contribution merged, kept separate, a new entry, or a successor?

An entry's identity within its project is its normalised term, its contribution type and its class.
- `supersedes` names a current entry: a successor entry is created and that one is superseded (if
  it was superseded meanwhile, the new entry is `kept_separate` from it instead).
- A current entry with the same identity exists: a `canonical` provider over an `advisory` entry
  creates a successor that supersedes it; otherwise the contribution is `merged` into it (its
  evidence is added).
- Only the term matches (another type or class): a new entry, `kept_separate` from the first such one.
- Nothing matches: `created`.
"""

from __future__ import annotations

from dataclasses import dataclass

CURRENT = ("pending", "ready")


@dataclass(frozen=True)
class EntryFacts:
    """What the decision needs to know of an existing entry."""

    id: str
    project_id: str
    term_key: str
    contribution_type: str
    classification: str
    authority: str
    status: str


@dataclass(frozen=True)
class ContributionFacts:
    """What the decision needs to know of the contribution."""

    project_id: str
    term_key: str
    contribution_type: str
    classification: str
    authority: str
    supersedes: str | None


@dataclass(frozen=True)
class Decision:
    """The decision: `created`, `merged`, `kept_separate` or `superseded`.

    `target_entry_id` is the entry merged into (merged); `related_entry_id` is the overlapping entry
    (kept_separate) or the entry to supersede (superseded).
    """

    kind: str
    target_entry_id: str | None = None
    related_entry_id: str | None = None

    @property
    def creates_entry(self) -> bool:
        """Whether the decision makes a new entry (every kind but `merged`)."""
        return self.kind != "merged"

    @property
    def evolution_kind(self) -> str:
        """The `merge_decided` event's kind: a successor is a `created` entry."""
        return "created" if self.kind == "superseded" else self.kind


def decide(contribution: ContributionFacts, same_term: list[EntryFacts], named: EntryFacts | None) -> Decision:
    """Decide against the project's entries with the same normalised term and the entry `supersedes` names."""
    if contribution.supersedes is not None:
        if named is not None and named.status in CURRENT:
            return Decision("superseded", related_entry_id=named.id)
        return Decision("kept_separate", related_entry_id=contribution.supersedes)
    current = sorted((e for e in same_term if e.status in CURRENT), key=lambda e: e.id)
    for entry in current:
        if (entry.contribution_type, entry.classification) == (
            contribution.contribution_type,
            contribution.classification,
        ):
            if contribution.authority == "canonical" and entry.authority == "advisory":
                return Decision("superseded", related_entry_id=entry.id)
            return Decision("merged", target_entry_id=entry.id)
    if current:
        return Decision("kept_separate", related_entry_id=current[0].id)
    return Decision("created")
