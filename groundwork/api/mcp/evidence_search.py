"""MCP evidence search: `search_context`, and opening evidence (`get_passage`, `list_sources`), with the same
services, scope and visibility as REST and GraphQL."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from mcp.server.mcpserver import Context
from pydantic import BaseModel, ConfigDict, Field

from groundwork.api.mcp.answers import listed
from groundwork.api.mcp.arguments import (
    Cursor,
    EngagementFilter,
    Limit,
    PassageId,
    ProjectFilter,
    SearchQuery,
    SourceFilter,
    described,
)
from groundwork.api.mcp.server import GroundworkMCPServer, caller, tool_error
from groundwork.api.resources.evidence_search import listed_source_resource, search_answer, stored_passage_resource
from groundwork.domain.errors import GroundworkError
from groundwork.domain.evidence_search.corpus import SOURCE_KINDS
from groundwork.services.evidence_search import corpus_reads
from groundwork.services.evidence_search import search as corpus_search


class SubjectRef(BaseModel):
    """The project, engagement or portfolio to search; engagements and portfolios reach only your projects."""

    model_config = ConfigDict(extra="forbid")
    type: Literal["project", "engagement", "portfolio"] = Field(description="What kind of subject `id` names.")
    id: str = Field(min_length=1, description="The project's (`prj_...`), engagement's or portfolio's id.")


READ = "context-engine:read"
Subject = Annotated[
    SubjectRef | None,
    described("The project, engagement or portfolio; engagements and portfolios reach only your projects."),
]
Kind = Annotated[str | None, described("Only passages of sources of this kind.", enum=[*SOURCE_KINDS, None])]


def register_context_search_tools(mcp: GroundworkMCPServer) -> None:
    """Register the evidence search tools on `mcp`: search, and opening a passage or listing sources."""

    @mcp.groundwork_tool(title="Open a passage", scopes=[READ])
    async def get_passage(ctx: Context[Any, Any], passage_id: PassageId) -> dict[str, Any]:
        """Open a passage by id (an evidence reference of kind `passage`, or a search hit): the exact stored text
        with its source and document date, page, paragraph, section, provenance quality and the ids of the passages
        before and after it. A passage whose source changed since is the error `passage_superseded`, naming
        `active_passage_id` (the serving passage with its text, or null)."""
        try:
            passage = await corpus_reads.get_passage(caller(ctx, READ), passage_id)
        except GroundworkError as error:
            raise tool_error(error) from None
        return {"data": stored_passage_resource(passage)}

    @mcp.groundwork_tool(title="List corpus sources", scopes=[READ])
    async def list_sources(
        ctx: Context[Any, Any],
        project_id: ProjectFilter = None,
        engagement_id: EngagementFilter = None,
        limit: Limit = 20,
        cursor: Cursor = None,
    ) -> dict[str, Any]:
        """Corpus sources of a project or an engagement (neither: every project you read), newest first, with
        their serving version, document date (and where it came from), ingestion time and passage count."""
        try:
            rows, page = await corpus_reads.list_sources(
                caller(ctx, READ),
                corpus_reads.SourceFilters(project_id, engagement_id, limit, cursor),
            )
        except GroundworkError as error:
            raise tool_error(error) from None
        return listed([listed_source_resource(r) for r in rows], page)

    @mcp.groundwork_tool(title="Search evidence", scopes=[READ])
    async def search_context(
        ctx: Context[Any, Any],
        subject_ref: Annotated[SubjectRef, described("The project, engagement or portfolio to search.")],
        query: SearchQuery,
        limit: Limit = 20,
        cursor: Cursor = None,
        source_id: SourceFilter = None,
        kind: Kind = None,
    ) -> dict[str, Any]:
        """Evidence search: ranked exact passages (with source, page, paragraph, provenance) of the corpus.

        Full text only (BM25, English stemming): words, "exact phrases", +required and -excluded. The answer
        holds stored passages, never a synthesized answer. Pass `page.nextCursor` as `cursor` for more.
        """
        try:
            result = await corpus_search.search_corpus(
                caller(ctx, READ),
                corpus_search.CorpusSearch(
                    subject_type=subject_ref.type,
                    subject_id=subject_ref.id,
                    query=query,
                    limit=limit,
                    cursor=cursor,
                    source_id=source_id,
                    kind=kind,
                ),
            )
        except GroundworkError as error:
            raise tool_error(error) from None
        answer = search_answer(result)
        return listed(answer["data"], answer["page"], truncated=answer["truncated"], totalCount=answer["totalCount"])
