"""The one place a run's evidence is gathered: once per run, stored, and shared by all its actions.

The run's first step (`enhancement_prepare_run`) gathers it; every action, including review-time
actions, reads the stored copy, so eight concurrent actions cost one evidence search, and a retried
or later action sees the same evidence as its siblings (same input, same drafts). Corpus passages and
context packages are gathered here; a new kind of evidence (code context, once a connector exists)
joins in `RunEvidence.gather`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from groundwork.domain.enhancement.enhancer import CorpusRarity, Evidence, ReferenceItem
from groundwork.domain.work_items import WorkItem
from groundwork.persistence.repositories.enhancement import run_evidence as stored_evidence
from groundwork.persistence.repositories.enhancement import runs
from groundwork.platform.caches.recently_used import RecentlyUsed


class EvidenceSource(Protocol):
    """Where evidence for a work item comes from (evidence search and context packages: `enhancers.evidence`)."""

    async def gather(
        self,
        workspace_id: str,
        project_id: str,
        requested_by: str,
        title: str,
        fields: dict[str, object],
        instructions: str = "",
    ) -> list[Evidence]:
        """Passages of the project's corpus and its ready context packages relevant to the work item, as
        `requested_by` may read them."""
        ...

    async def rarity(
        self, workspace_id: str, project_id: str, title: str, fields: dict[str, object], instructions: str = ""
    ) -> CorpusRarity | None:
        """How many of the project's passages hold each word the work item asks with."""
        ...


@dataclass(frozen=True)
class GatheredEvidence:
    """What a run's actions draw on besides the work item's own (live) text."""

    evidence: tuple[Evidence, ...]
    reference_items: tuple[ReferenceItem, ...]
    # The item's words' frequencies in the project's corpus (None: no passage was gathered, or stored before).
    rarity: CorpusRarity | None = None


# Stored evidence never changes (the first gathering wins), so a process keeps the last few hundred runs'
# copies: a run's first step stores it and its actions, moments later and usually here, read it back.
_KEPT = 256


class RunEvidence:
    """Gathers a run's evidence once and hands the stored copy to each of its actions."""

    def __init__(self, corpus: EvidenceSource) -> None:
        self.corpus = corpus
        self._kept: RecentlyUsed[str, GatheredEvidence] = RecentlyUsed(_KEPT)

    async def gather(self, run: runs.RunRow, item: WorkItem) -> GatheredEvidence:
        """Every source of evidence for the run, as the requester may see it (the seam for new sources)."""
        who = (run.workspace_id, run.project_id, run.requested_by, item.title, item.fields)
        # The run's instructions steer its evidence query (a review-time action's own instructions steer its
        # ordering only: the run's evidence is gathered once).
        found = await self.corpus.gather(*who, instructions=run.instructions or "")
        references = await stored_evidence.reference_items(run.project_id, item.id)
        # Counted only when passages were gathered (which the requester may read): nothing else weighs words.
        rarity = (
            await self.corpus.rarity(run.workspace_id, run.project_id, item.title, item.fields, run.instructions or "")
            if any(e.ref.kind == "passage" for e in found)
            else None
        )
        return GatheredEvidence(tuple(found), tuple(references), rarity)

    async def for_run(self, run: runs.RunRow, item: WorkItem) -> GatheredEvidence:
        """The run's stored evidence; gathered and stored first if no step has done so yet."""
        kept = self._kept.get(run.id)
        if kept is not None:
            return kept
        stored = await stored_evidence.get_run_evidence(run.id)
        if stored is None:
            gathered = await self.gather(run, item)
            stored = await stored_evidence.store_run_evidence(
                run.id, list(gathered.evidence), list(gathered.reference_items), gathered.rarity
            )
            if stored is None:  # a concurrent gatherer stored first: its copy is the run's
                stored = await stored_evidence.get_run_evidence(run.id)
                assert stored is not None
        evidence, references, rarity = stored
        kept = GatheredEvidence(tuple(evidence), tuple(references), rarity)
        self._kept.put(run.id, kept)
        return kept
