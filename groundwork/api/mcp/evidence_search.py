"""MCP evidence search: `search_context`, the same service, scope and visibility as REST and GraphQL."""

from __future__ import annotations

from typing import Any, Literal

from mcp.server.mcpserver import Context, MCPServer
from pydantic import BaseModel, ConfigDict, Field

from groundwork.api.mcp.server import READ_ONLY, caller, tool_error
from groundwork.api.resources.evidence_search import search_answer
from groundwork.domain.errors import GroundworkError
from groundwork.services.evidence_search import search as corpus_search


class SubjectRef(BaseModel):
    """The project, engagement or portfolio to search; engagements and portfolios reach only your projects."""

    model_config = ConfigDict(extra="forbid")
    type: Literal["project", "engagement", "portfolio"]
    id: str = Field(min_length=1)


def register_context_search_tools(mcp: MCPServer) -> None:
    """Register the evidence search tool on `mcp`."""

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
