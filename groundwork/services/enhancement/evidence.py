"""Evidence for draft generation: exact passages of the project's corpus, and its matching context packages."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime

from groundwork.domain.context_engine.model import freshness
from groundwork.domain.enhancement.enhancer import CorpusRarity, Evidence
from groundwork.domain.enhancement.fusion import fused
from groundwork.domain.enhancement.instructions import Instructions
from groundwork.domain.enhancement.model import EvidenceRef
from groundwork.domain.enhancement.neighbourhood import REACH, Found, Placed, anchors, in_reading_order
from groundwork.domain.enhancement.relevance import item_words
from groundwork.domain.evidence_search.analysis import analyze_question
from groundwork.domain.evidence_search.corpus import QueryClause
from groundwork.persistence.repositories.evidence_search import neighbours
from groundwork.persistence.repositories.tenancy import workspaces as tenancy
from groundwork.search.package_search import project_packages
from groundwork.search.passages import ServingState, load_serving_state, project_passages
from groundwork.search.term_rarity import project_term_rarity

# Enough words of the work item to find its documents; BM25 ranks the passages that share the most.
_QUERY_WORDS = 48
# More passages than a draft will cite: the generator keeps those that rank as relevant to the item.
PASSAGES_PER_ACTION = 24
# Each search's depth before fusion: a passage the other search ranks high may sit this deep in one.
SEARCH_DEPTH = 2 * PASSAGES_PER_ACTION
PACKAGES_PER_ACTION = 5


class CorpusEvidence:
    """Passages and context packages of the project that match the work item, as the requester may see them.

    `holds` (does a principal hold a permission on a project) and `serving_state` (what does not serve in an
    index snapshot) read PostgreSQL by default; the worker passes its cached ones, dropped by the change feed.
    """

    def __init__(
        self,
        *,
        holds: Callable[[str, str, str], Awaitable[bool]] = tenancy.principal_holds,
        serving_state: Callable[[int], Awaitable[ServingState]] = load_serving_state,
    ) -> None:
        self.holds = holds
        self.serving_state = serving_state

    async def gather(
        self,
        workspace_id: str,
        project_id: str,
        requested_by: str,
        title: str,
        fields: dict[str, object],
        instructions: str = "",
    ) -> list[Evidence]:
        """The best passages, then the matching packages; none if the requester lacks context:read."""
        # Drafts must not carry evidence the person who asked for them could not read themselves.
        if not await self.holds(requested_by, project_id, "context:read"):
            return []
        query = evidence_query(title, fields, instructions)
        # Side by side: a large search reads its index in a worker thread, and a run waits for the slower only.
        passages, packages = await asyncio.gather(
            self.passages(workspace_id, project_id, query, *item_queries(title, instructions)),
            self.packages(workspace_id, project_id, query),
        )
        return passages + packages

    async def passages(self, workspace_id: str, project_id: str, query: str, *more: str) -> list[Evidence]:
        """Best passages of the project's corpus for the whole item and for each of `more` (its title alone, the
        instructions' focus alone), fused (`domain.enhancement.fusion`), with the neighbours, in their section,
        of the leading pages' best passages (`domain.enhancement.neighbourhood`).

        What answers an item is often a few paragraphs past the passage that shares its words: the command or
        setting under the same heading."""
        queries = list(dict.fromkeys(q for q in (query, *more) if q))
        rankings = await asyncio.gather(
            *(
                project_passages(workspace_id, project_id, q, limit=SEARCH_DEPTH, serving_state=self.serving_state)
                for q in queries
            )
        )
        by_id = {hit.id: hit for ranking in rankings for hit in ranking}
        best = fused([[hit.id for hit in ranking] for ranking in rankings])[:PASSAGES_PER_ACTION]
        hits = [by_id[passage_id] for passage_id, _ in best]
        score = dict(best)
        anchored = anchors([Found(hit.id, hit.source_id, score[hit.id]) for hit in hits])
        near = await neighbours.section_neighbours(workspace_id, project_id, anchored, REACH) if anchored else []
        quoted = {
            hit.id: _evidence(hit.id, hit.source_title, hit.page, hit.paragraph, hit.section, hit.text) for hit in hits
        }
        for row in near:
            quoted.setdefault(
                row.id, _evidence(row.id, row.source_title, row.page, row.paragraph, row.section, row.text)
            )
        order = in_reading_order(
            [Placed(hit.id, hit.version_id, hit.section, hit.char_start) for hit in hits],
            [Placed(row.id, row.version_id, row.section, row.char_start) for row in near],
            anchored,
        )
        return [quoted[passage_id] for passage_id in order]

    async def rarity(
        self, workspace_id: str, project_id: str, title: str, fields: dict[str, object], instructions: str = ""
    ) -> CorpusRarity | None:
        """How many of the project's passages hold each word the item asks with (drafting weighs words by it)."""
        description = fields.get("description")
        words = item_words(
            title, description if isinstance(description, str) else "", Instructions.parse(instructions).focus_words
        )
        return await project_term_rarity(workspace_id, project_id, sorted(words), serving_state=self.serving_state)

    async def packages(self, workspace_id: str, project_id: str, query: str) -> list[Evidence]:
        """Ready (not stale) `general` context packages of the project matching the query, as `context_package`."""
        # Drafts are shown to anyone who may read the run: never a financial or staffing package.
        rows = await project_packages(workspace_id, project_id, query, limit=PACKAGES_PER_ACTION)
        now = datetime.now(UTC)
        return [
            Evidence(EvidenceRef("context_package", row.id), row.summary, f"context package: {row.term}")
            for row in rows
            if freshness(row.as_of, now).status != "stale"
        ]


def evidence_query(title: str, fields: dict[str, object], instructions: str = "") -> str:
    """The item's title, description and the instructions' focus, analysed as a question: its content words,
    each once (stopwords and question words rank nothing), at most `_QUERY_WORDS` of them."""
    description = fields.get("description")
    focus = " ".join(topic for topic, _ in Instructions.parse(instructions).focus)
    text = f"{title} {description if isinstance(description, str) else ''} {focus}"
    words = [QueryClause(word, False, "should", 0) for word in text.split()]
    kept = [analyzed.clause.text for analyzed in analyze_question(words)]
    return " ".join(kept[:_QUERY_WORDS])


def item_queries(title: str, instructions: str = "") -> list[str]:
    """The searches fused with the whole item's: its title alone, and the instructions' focus alone (if any)."""
    focus = [evidence_query("", {}, instructions)] if Instructions.parse(instructions).focus else []
    return [evidence_query(title, {}), *focus]


def _evidence(
    passage_id: str, title: str, page: int | None, paragraph: int | None, section: str | None, text: str
) -> Evidence:
    return Evidence(EvidenceRef("passage", passage_id), text, _label(title, page, paragraph), section)


def _label(title: str, page: int | None, paragraph: int | None) -> str:
    where = [f"p. {page}" if page is not None else "", f"¶ {paragraph}" if paragraph is not None else ""]
    return ", ".join([title, *[w for w in where if w]])
