"""MCP evidence search: `search_context`, and opening evidence (`get_passage`, `list_sources`), with the same
services, scope and visibility as REST and GraphQL."""

from __future__ import annotations

from typing import Any, Literal

from mcp.server.mcpserver import Context, MCPServer
from pydantic import BaseModel, ConfigDict, Field

from groundwork.api.mcp.server import READ_ONLY, caller, tool_error
from groundwork.api.resources.evidence_search import listed_source_resource, search_answer, stored_passage_resource
from groundwork.domain.errors import GroundworkError
from groundwork.services.evidence_search import corpus_reads
from groundwork.services.evidence_search import search as corpus_search


class SubjectRef(BaseModel):
    """The project, engagement or portfolio to search; engagements and portfolios reach only your projects."""

    model_config = ConfigDict(extra="forbid")
    type: Literal["project", "engagement", "portfolio"]
    id: str = Field(min_length=1)


def register_context_search_tools(mcp: MCPServer) -> None:
    """Register the evidence search tools on `mcp`: search, and opening a passage or listing sources."""

    @mcp.tool(annotations=READ_ONLY)
    async def get_passage(ctx: Context[Any, Any], passage_id: str) -> dict[str, Any]:
        """Open a passage by id (an evidence reference of kind `passage`, or a search hit): the exact stored text
        with its source and document date, page, paragraph, section, provenance quality and the ids of the passages
        before and after it. A passage whose source changed since is the error `passage_superseded`, naming
        `active_passage_id` (the serving passage with its text, or null)."""
        try:
            passage = await corpus_reads.get_passage(caller(ctx, "context-engine:read"), passage_id)
        except GroundworkError as error:
            raise tool_error(error) from None
        return {"data": stored_passage_resource(passage)}

    @mcp.tool(annotations=READ_ONLY)
    async def list_sources(
        ctx: Context[Any, Any],
        project_id: str | None = None,
        engagement_id: str | None = None,
        limit: int = 20,
        cursor: str | None = None,
    ) -> dict[str, Any]:
        """Corpus sources of a project or an engagement (neither: every project you read), newest first, with
        their serving version, document date (and where it came from), ingestion time and passage count."""
        try:
            rows, page = await corpus_reads.list_sources(
                caller(ctx, "context-engine:read"),
                corpus_reads.SourceFilters(project_id, engagement_id, limit, cursor),
            )
        except GroundworkError as error:
            raise tool_error(error) from None
        return {"data": [listed_source_resource(r) for r in rows], "page": page}

    @mcp.tool(annotations=READ_ONLY)
    async def search_context(
        ctx: Context[Any, Any],
        subject_ref: SubjectRef,
        query: str,
        limit: int = 20,
        cursor: str | None = None,
        source_id: str | None = None,
        kind: Literal["text", "markdown", "html", "pdf"] | None = None,
    ) -> dict[str, Any]:
        """Evidence search: ranked exact passages (with source, page, paragraph, provenance) of the corpus.

        Full text only (BM25, English stemming): words, "exact phrases", +required and -excluded. The answer
        holds stored passages, never a synthesized answer. Pass `page.next_cursor` as `cursor` for more.
        """
        try:
            result = await corpus_search.search_corpus(
                caller(ctx, "context-engine:read"),
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
        return search_answer(result)
