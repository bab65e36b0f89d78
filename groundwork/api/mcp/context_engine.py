"""MCP context engine tools: `query_context` and the package inspection tools, all read-only.

They call the same service as REST and GraphQL and answer the REST bodies.
"""

from __future__ import annotations

from collections.abc import Awaitable
from typing import Any, TypeVar

from mcp.server.mcpserver import Context, MCPServer

from groundwork.api.mcp.evidence_search import SubjectRef
from groundwork.api.mcp.server import READ_ONLY, caller, tool_error
from groundwork.api.resources.context_engine import (
    briefing_resource,
    evidence_resource,
    overview_resource,
    package_resource,
    provider_resource,
    search_resource,
)
from groundwork.domain.errors import GroundworkError
from groundwork.services.context_engine import briefings
from groundwork.services.context_engine import reads as service

READ = "context-engine:read"
T = TypeVar("T")


async def _call(work: Awaitable[T]) -> T:
    try:
        return await work
    except GroundworkError as error:
        raise tool_error(error) from None


def register_context_engine_tools(mcp: MCPServer) -> None:
    """Register `query_context` and the package tools on `mcp`."""

    @mcp.tool(annotations=READ_ONLY)
    async def query_context(
        ctx: Context[Any, Any],
        question: str,
        project_id: str | None = None,
        subject_ref: SubjectRef | None = None,
    ) -> dict[str, Any]:
        """A deterministic, evidence-backed briefing: findings, risks, blockers, coverage, freshness, provenance.

        Give `project_id`, or `subject_ref` for an engagement or portfolio (only child projects you may read).
        Every claim is a context package's summary with its evidence references; `coverage.missing` names the
        question's words that nothing covers. No model: the same question over the same data answers the same.
        """
        subject = (subject_ref.type, subject_ref.id) if subject_ref is not None else None
        briefing = await _call(
            briefings.query_context(caller(ctx, READ), question, project_id=project_id, subject=subject)
        )
        return {"data": briefing_resource(briefing)}

    @mcp.tool(annotations=READ_ONLY)
    async def get_context_overview(
        ctx: Context[Any, Any], project_id: str | None = None, engagement_id: str | None = None
    ) -> dict[str, Any]:
        """Coverage and freshness per project (packages by status and type, evidence, providers)."""
        overview = await _call(
            service.get_overview(caller(ctx, READ), project_id=project_id, engagement_id=engagement_id)
        )
        return {"data": overview_resource(overview)}

    @mcp.tool(annotations=READ_ONLY)
    async def list_context_packages(
        ctx: Context[Any, Any],
        project_id: str | None = None,
        engagement_id: str | None = None,
        status: str | None = None,
        contribution_type: str | None = None,
        limit: int = 20,
        cursor: str | None = None,
    ) -> dict[str, Any]:
        """Context packages, newest first; `status` ready|stale|superseded (default ready and stale)."""
        packages, page = await _call(
            service.list_packages(
                caller(ctx, READ),
                service.PackageFilters(project_id, engagement_id, status, contribution_type, limit, cursor),
            )
        )
        return {"data": [package_resource(p) for p in packages], "page": page}

    @mcp.tool(annotations=READ_ONLY)
    async def get_context_package(ctx: Context[Any, Any], package_id: str) -> dict[str, Any]:
        """One context package with its scope, freshness, provenance and coverage."""
        return {"data": package_resource(await _call(service.get_package(caller(ctx, READ), package_id)))}

    @mcp.tool(annotations=READ_ONLY)
    async def get_package_evidence(
        ctx: Context[Any, Any], package_id: str, limit: int = 20, cursor: str | None = None
    ) -> dict[str, Any]:
        """A package's evidence references: what each points at (passage, work item...), never a body."""
        items, page = await _call(service.package_evidence(caller(ctx, READ), package_id, limit=limit, cursor=cursor))
        return {"data": [evidence_resource(e) for e in items], "page": page}

    @mcp.tool(annotations=READ_ONLY)
    async def list_context_providers(
        ctx: Context[Any, Any],
        project_id: str | None = None,
        engagement_id: str | None = None,
        limit: int = 20,
        cursor: str | None = None,
    ) -> dict[str, Any]:
        """Providers contributing context, with contribution counts, coverage and freshness."""
        providers, page = await _call(
            service.list_providers(
                caller(ctx, READ), project_id=project_id, engagement_id=engagement_id, limit=limit, cursor=cursor
            )
        )
        return {"data": [provider_resource(p) for p in providers], "page": page}

    @mcp.tool(annotations=READ_ONLY)
    async def search_context_packages(
        ctx: Context[Any, Any],
        query: str,
        project_id: str | None = None,
        engagement_id: str | None = None,
        limit: int = 20,
        cursor: str | None = None,
    ) -> dict[str, Any]:
        """Search context packages (BM25 over term and summary; words, "phrases", +required, -excluded)."""
        result = await _call(
            service.search_packages(
                caller(ctx, READ), service.PackageSearch(query, project_id, engagement_id, limit, cursor)
            )
        )
        return search_resource(result)
