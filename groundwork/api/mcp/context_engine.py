"""MCP context engine tools: `query_context` and the package inspection tools, all read-only.

They call the same service as REST and GraphQL and answer the REST bodies.
"""

from __future__ import annotations

from collections.abc import Awaitable
from typing import Any, TypeVar

from mcp.server.mcpserver import Context

from groundwork.api.mcp.answers import listed, page_resource
from groundwork.api.mcp.arguments import (
    ContributionType,
    Cursor,
    EngagementFilter,
    Limit,
    PackageId,
    PackageStatus,
    ProjectFilter,
    Question,
    SearchQuery,
)
from groundwork.api.mcp.evidence_search import Subject
from groundwork.api.mcp.server import GroundworkMCPServer, caller, tool_error
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


def register_context_engine_tools(mcp: GroundworkMCPServer) -> None:
    """Register `query_context` and the package tools on `mcp`."""

    @mcp.groundwork_tool(title="Query context", scopes=[READ])
    async def query_context(
        ctx: Context[Any, Any],
        question: Question,
        project_id: ProjectFilter = None,
        subject_ref: Subject = None,
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

    @mcp.groundwork_tool(title="Get the context overview", scopes=[READ])
    async def get_context_overview(
        ctx: Context[Any, Any], project_id: ProjectFilter = None, engagement_id: EngagementFilter = None
    ) -> dict[str, Any]:
        """Coverage and freshness per project (packages by status and type, evidence, providers)."""
        overview = await _call(
            service.get_overview(caller(ctx, READ), project_id=project_id, engagement_id=engagement_id)
        )
        return {"data": overview_resource(overview)}

    @mcp.groundwork_tool(title="List context packages", scopes=[READ])
    async def list_context_packages(
        ctx: Context[Any, Any],
        project_id: ProjectFilter = None,
        engagement_id: EngagementFilter = None,
        status: PackageStatus = None,
        contribution_type: ContributionType = None,
        limit: Limit = 20,
        cursor: Cursor = None,
    ) -> dict[str, Any]:
        """Context packages, newest first; `status` ready|stale|superseded (default ready and stale)."""
        packages, page = await _call(
            service.list_packages(
                caller(ctx, READ),
                service.PackageFilters(project_id, engagement_id, status, contribution_type, limit, cursor),
            )
        )
        return listed([package_resource(p) for p in packages], page)

    @mcp.groundwork_tool(title="Get a context package", scopes=[READ])
    async def get_context_package(ctx: Context[Any, Any], package_id: PackageId) -> dict[str, Any]:
        """One context package with its scope, freshness, provenance and coverage."""
        return {"data": package_resource(await _call(service.get_package(caller(ctx, READ), package_id)))}

    @mcp.groundwork_tool(title="List a package's evidence", scopes=[READ])
    async def get_package_evidence(
        ctx: Context[Any, Any], package_id: PackageId, limit: Limit = 20, cursor: Cursor = None
    ) -> dict[str, Any]:
        """A package's evidence references: what each points at (passage, work item...), never a body."""
        items, page = await _call(service.package_evidence(caller(ctx, READ), package_id, limit=limit, cursor=cursor))
        return listed([evidence_resource(e) for e in items], page)

    @mcp.groundwork_tool(title="List context providers", scopes=[READ])
    async def list_context_providers(
        ctx: Context[Any, Any],
        project_id: ProjectFilter = None,
        engagement_id: EngagementFilter = None,
        limit: Limit = 20,
        cursor: Cursor = None,
    ) -> dict[str, Any]:
        """Providers contributing context, with contribution counts, coverage and freshness."""
        providers, page = await _call(
            service.list_providers(
                caller(ctx, READ), project_id=project_id, engagement_id=engagement_id, limit=limit, cursor=cursor
            )
        )
        return listed([provider_resource(p) for p in providers], page)

    @mcp.groundwork_tool(title="Search context packages", scopes=[READ])
    async def search_context_packages(
        ctx: Context[Any, Any],
        query: SearchQuery,
        project_id: ProjectFilter = None,
        engagement_id: EngagementFilter = None,
        limit: Limit = 20,
        cursor: Cursor = None,
    ) -> dict[str, Any]:
        """Search context packages (BM25 over term and summary; words, "phrases", +required, -excluded)."""
        result = await _call(
            service.search_packages(
                caller(ctx, READ), service.PackageSearch(query, project_id, engagement_id, limit, cursor)
            )
        )
        answer = search_resource(result)
        return {**answer, "page": page_resource(answer["page"])}
