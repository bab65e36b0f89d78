"""REST: the synthesized query and the context engine's read API (packages, evidence, providers, overview)."""

from __future__ import annotations

from typing import Annotated, Any

import msgspec
from litestar import Controller, Request, get, post
from litestar.openapi.spec import OpenAPIType, Schema
from litestar.params import Parameter

from groundwork.api.documented import SEARCHABLE, text
from groundwork.api.resources.context_engine import (
    briefing_resource,
    evidence_resource,
    overview_resource,
    package_resource,
    provider_resource,
    search_resource,
)
from groundwork.api.rest.documents.common import typed
from groundwork.api.rest.documents.context_engine import (
    BriefingDocument,
    EvidenceList,
    OverviewDocument,
    PackageDocument,
    PackageList,
    PackageSearchDocument,
    ProviderList,
)
from groundwork.api.rest.evidence_search import SubjectRefBody
from groundwork.domain.context_engine.model import CONTRIBUTION_TYPES, PACKAGE_STATUSES
from groundwork.domain.errors import FieldError, InvalidRequest
from groundwork.domain.evidence_search.corpus import MAX_QUERY_CHARS
from groundwork.domain.pagination import MAX_LIMIT
from groundwork.domain.tenancy.principals import Principal
from groundwork.services.context_engine import briefings
from groundwork.services.context_engine import reads as service

READ = {"scope": "context-engine:read"}


# `query` is read from the request (Litestar reserves the name), so its schema is added to the document:
# a query needs at least one searchable word.
SEARCH_QUERY_SCHEMA = Schema(type=OpenAPIType.STRING, min_length=1, max_length=MAX_QUERY_CHARS, pattern=SEARCHABLE)


class ContextQueryBody(msgspec.Struct, forbid_unknown_fields=True):
    question: Annotated[str, text(briefings.MAX_QUESTION_CHARS)]
    project_id: str | None = None
    subject_ref: SubjectRefBody | None = None


class ContextQueryController(Controller):
    path = "/api/v1/context"
    tags = ["context engine"]

    @post(
        "/query",
        opt=READ,
        status_code=200,
        summary="Synthesized query: a deterministic, evidence-backed briefing",
        description=(
            "`question` with `project_id`, or with `subject_ref` (`project`, `engagement` or `portfolio`; engagements "
            "and portfolios reach only child projects you may read). Claims are package summaries ranked by BM25 of "
            "the question, then recency; each keeps its evidence references, freshness and provenance. Equal "
            "questions over equal data give byte-equal answers: `asOf` is the newest evidence time and freshness "
            "inside the briefing is measured against it, never against the clock. Read-only: no Idempotency-Key."
        ),
    )
    async def query(self, request: Request[Principal, Any, Any], data: ContextQueryBody) -> BriefingDocument:
        subject = (data.subject_ref.type, data.subject_ref.id) if data.subject_ref is not None else None
        briefing = await briefings.query_context(
            request.user, data.question, project_id=data.project_id, subject=subject
        )
        return typed(BriefingDocument, {"data": briefing_resource(briefing)})


class ContextEngineController(Controller):
    path = "/api/v1/context-engine"
    tags = ["context engine"]

    @get(
        "/",
        opt=READ,
        summary="Overview: coverage and freshness per project, and the contributing providers",
    )
    async def overview(
        self, request: Request[Principal, Any, Any], project_id: str | None = None, engagement_id: str | None = None
    ) -> OverviewDocument:
        overview = await service.get_overview(request.user, project_id=project_id, engagement_id=engagement_id)
        return typed(OverviewDocument, {"data": overview_resource(overview)})

    @get(
        "/search",
        opt={**READ, "required_query": {"query": SEARCH_QUERY_SCHEMA}},
        summary="Search packages: BM25 over term and summary, keyset pages",
        description=(
            '`query` (required): the query language of evidence search (words, "phrases", +required, -excluded). '
            "Ready packages only; "
            "`totalCount` counts every match, `truncated` says the 1,000 reachable hits were cut."
        ),
    )
    async def search(
        self,
        request: Request[Principal, Any, Any],
        project_id: str | None = None,
        engagement_id: str | None = None,
        limit: int | None = Parameter(default=None, schema_extra={"minimum": 1, "maximum": MAX_LIMIT}),
        cursor: str | None = None,
    ) -> PackageSearchDocument:
        # `query` is a name Litestar reserves for the whole query string, so it is read here.
        search_query = request.query_params.get("query")
        if search_query is None:
            raise InvalidRequest("The search needs a query.", [FieldError("query", "is required")])
        result = await service.search_packages(
            request.user,
            service.PackageSearch(
                search_query, project_id=project_id, engagement_id=engagement_id, limit=limit, cursor=cursor
            ),
        )
        return typed(PackageSearchDocument, search_resource(result))

    @get(
        "/packages",
        opt=READ,
        summary="List packages, newest first",
        description="`status` is `ready`, `stale` or `superseded` (default: ready and stale).",
    )
    async def packages(
        self,
        request: Request[Principal, Any, Any],
        project_id: str | None = None,
        engagement_id: str | None = None,
        status: str | None = Parameter(default=None, schema_extra={"enum": list(PACKAGE_STATUSES)}),
        contribution_type: str | None = Parameter(default=None, schema_extra={"enum": list(CONTRIBUTION_TYPES)}),
        limit: int | None = Parameter(default=None, schema_extra={"minimum": 1, "maximum": MAX_LIMIT}),
        cursor: str | None = None,
    ) -> PackageList:
        packages, page = await service.list_packages(
            request.user,
            service.PackageFilters(project_id, engagement_id, status, contribution_type, limit, cursor),
        )
        return typed(PackageList, {"data": [package_resource(p) for p in packages], "page": page})

    @get("/packages/{package_id:str}/evidence", opt=READ, summary="A package's evidence references (policy-safe)")
    async def evidence(
        self,
        request: Request[Principal, Any, Any],
        package_id: str,
        limit: int | None = Parameter(default=None, schema_extra={"minimum": 1, "maximum": MAX_LIMIT}),
        cursor: str | None = None,
    ) -> EvidenceList:
        items, page = await service.package_evidence(request.user, package_id, limit=limit, cursor=cursor)
        return typed(EvidenceList, {"data": [evidence_resource(e) for e in items], "page": page})

    @get("/providers", opt=READ, summary="Contributing providers with coverage and freshness")
    async def providers(
        self,
        request: Request[Principal, Any, Any],
        project_id: str | None = None,
        engagement_id: str | None = None,
        limit: int | None = Parameter(default=None, schema_extra={"minimum": 1, "maximum": MAX_LIMIT}),
        cursor: str | None = None,
    ) -> ProviderList:
        providers, page = await service.list_providers(
            request.user, project_id=project_id, engagement_id=engagement_id, limit=limit, cursor=cursor
        )
        return typed(ProviderList, {"data": [provider_resource(p) for p in providers], "page": page})

    @get("/{package_id:str}", opt=READ, summary="One context package")
    async def package(self, request: Request[Principal, Any, Any], package_id: str) -> PackageDocument:
        return typed(PackageDocument, {"data": package_resource(await service.get_package(request.user, package_id))})
