"""GraphQL context engine: `contextQuery`, package search, evidence, providers, overview, packages.

Resolvers call the same service as REST and MCP; the types are built from the same resource renderers,
so every transport shows the same values.
"""

from __future__ import annotations

from collections.abc import Awaitable
from typing import Any, TypeVar

import strawberry
from strawberry.types import Info

from groundwork.api.graphql.connections import Edge, PageInfo, connection_fields
from groundwork.api.graphql.context import GraphQLContext, as_graphql_error, require
from groundwork.api.graphql.enums import (
    BriefingAnswer,
    ContentClass,
    ContextPackageStatus,
    ContextSubjectType,
    ContributionType,
    CoverageStatus,
    DateTime,
    FreshnessStatus,
    ProviderAuthority,
    ProviderClassification,
    ReferenceKind,
)
from groundwork.api.graphql.evidence_search import ContextEngineSubjectInput
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
        raise as_graphql_error(error) from None


def _id(value: strawberry.ID | None) -> str | None:
    return str(value) if value is not None else None


@strawberry.type
class ContextFreshness:
    status: FreshnessStatus
    as_of: DateTime
    age_days: int

    @classmethod
    def of(cls, d: dict[str, Any] | None) -> ContextFreshness | None:
        return cls(status=d["status"], as_of=d["asOf"], age_days=d["ageDays"]) if d is not None else None


@strawberry.type
class ContextProvenance:
    source: str
    promoter_identity: str
    generated_at: DateTime

    @classmethod
    def of(cls, d: dict[str, Any]) -> ContextProvenance:
        return cls(source=d["source"], promoter_identity=d["promoterIdentity"], generated_at=d["generatedAt"])


@strawberry.type
class ContextReference:
    kind: ReferenceKind
    id: str
    class_: ContentClass = strawberry.field(name="class")
    href: str | None = strawberry.field(description="The API path that opens it (null for an external reference).")


@strawberry.type(description="A policy-safe evidence reference: what it points at, never a body or an excerpt.")
class ContextEvidenceReference:
    id: strawberry.ID
    provider: strawberry.ID
    capability: str
    as_of: DateTime
    freshness: ContextFreshness
    reference: ContextReference
    provenance: ContextProvenance

    @classmethod
    def of(cls, d: dict[str, Any]) -> ContextEvidenceReference:
        fresh = ContextFreshness.of(d["freshness"])
        assert fresh is not None
        ref = d["reference"]
        return cls(
            id=strawberry.ID(d["id"]),
            provider=strawberry.ID(d["provider"]),
            capability=d["capability"],
            as_of=d["asOf"],
            freshness=fresh,
            reference=ContextReference(kind=ref["kind"], id=ref["id"], class_=ref["class"], href=ref["href"]),
            provenance=ContextProvenance.of(d["provenance"]),
        )


@strawberry.type
class ContextPackageScope:
    project_id: strawberry.ID
    engagement_id: strawberry.ID
    adoption_workspace_id: strawberry.ID


@strawberry.type
class ContextCoverage:
    evidence_count: int
    provider_count: int
    missing: list[str]

    @classmethod
    def of(cls, d: dict[str, Any]) -> ContextCoverage:
        return cls(evidence_count=d["evidenceCount"], provider_count=d["providerCount"], missing=d.get("missing", []))


@strawberry.type
class ContextPackage:
    id: strawberry.ID
    status: ContextPackageStatus
    term: str
    summary: str
    contribution_type: ContributionType
    classification: ContentClass
    scope: ContextPackageScope
    freshness: ContextFreshness
    provenance: ContextProvenance
    coverage: ContextCoverage
    supersedes: strawberry.ID | None
    superseded_by: strawberry.ID | None
    created_at: DateTime
    updated_at: DateTime

    @classmethod
    def of(cls, d: dict[str, Any]) -> ContextPackage:
        fresh = ContextFreshness.of(d["freshness"])
        assert fresh is not None
        scope = d["scope"]
        return cls(
            id=strawberry.ID(d["id"]),
            status=d["status"],
            term=d["term"],
            summary=d["summary"],
            contribution_type=d["contributionType"],
            classification=d["classification"],
            scope=ContextPackageScope(
                project_id=strawberry.ID(scope["projectId"]),
                engagement_id=strawberry.ID(scope["engagementId"]),
                adoption_workspace_id=strawberry.ID(scope["adoptionWorkspaceId"]),
            ),
            freshness=fresh,
            provenance=ContextProvenance.of(d["provenance"]),
            coverage=ContextCoverage.of(d["coverage"]),
            supersedes=d["supersedes"],
            superseded_by=d["supersededBy"],
            created_at=d["createdAt"],
            updated_at=d["updatedAt"],
        )


@strawberry.type
class ContextPackageHit:
    score: float
    package: ContextPackage


@strawberry.type
class ContextEngineSearchResult:
    total_count: int
    truncated: bool
    edges: list[Edge[ContextPackageHit]]
    nodes: list[ContextPackageHit]
    page_info: PageInfo


@strawberry.type
class ContextPackageConnection:
    edges: list[Edge[ContextPackage]]
    nodes: list[ContextPackage]
    page_info: PageInfo


@strawberry.type
class ContextProvider:
    id: strawberry.ID
    name: str
    classification: ProviderClassification
    capabilities: list[str]
    contribution_count: int
    coverage_status: CoverageStatus
    freshness_status: FreshnessStatus | None
    authority: ProviderAuthority

    @classmethod
    def of(cls, d: dict[str, Any]) -> ContextProvider:
        return cls(
            id=strawberry.ID(d["id"]),
            name=d["name"],
            classification=d["classification"],
            capabilities=d["capabilities"],
            contribution_count=d["contributionCount"],
            coverage_status=d["coverageStatus"],
            freshness_status=d["freshnessStatus"],
            authority=d["authority"],
        )


@strawberry.type
class ContextSubject:
    type: ContextSubjectType
    id: strawberry.ID


@strawberry.type(description="A synthesized statement: a package's summary with its evidence, freshness, provenance.")
class ContextClaim:
    text: str
    package_id: strawberry.ID
    project_id: strawberry.ID
    term: str
    contribution_type: ContributionType
    relevance: float = strawberry.field(description="How well the claim answers the question, from 0 to 1.")
    evidence_refs: list[ContextEvidenceReference]
    freshness: ContextFreshness
    provenance: ContextProvenance

    @classmethod
    def of(cls, d: dict[str, Any]) -> ContextClaim:
        fresh = ContextFreshness.of(d["freshness"])
        assert fresh is not None
        return cls(
            text=d["text"],
            package_id=strawberry.ID(d["packageId"]),
            project_id=strawberry.ID(d["projectId"]),
            term=d["term"],
            contribution_type=d["contributionType"],
            relevance=d["relevance"],
            evidence_refs=[ContextEvidenceReference.of(e) for e in d["evidenceRefs"]],
            freshness=fresh,
            provenance=ContextProvenance.of(d["provenance"]),
        )


@strawberry.type(description="The deterministic briefing: the same engine as REST and MCP.")
class ContextBriefing:
    subject: ContextSubject
    question: str
    answer: BriefingAnswer = strawberry.field(
        description="`answered`, `partial` (some content word uncovered) or `no_evidence`."
    )
    findings: list[ContextClaim]
    risks: list[ContextClaim]
    blockers: list[ContextClaim]
    coverage: ContextCoverage
    freshness: ContextFreshness | None
    provenance: list[ContextProvenance]
    as_of: DateTime | None


@strawberry.type
class ContextStatusCounts:
    ready: int
    stale: int
    superseded: int


@strawberry.type
class ContextTypeCounts:
    finding: int
    risk: int
    blocker: int
    decision: int
    dependency: int
    milestone: int


@strawberry.type
class ContextCounts:
    by_status: ContextStatusCounts
    by_type: ContextTypeCounts

    @classmethod
    def of(cls, d: dict[str, Any]) -> ContextCounts:
        return cls(by_status=ContextStatusCounts(**d["byStatus"]), by_type=ContextTypeCounts(**d["byType"]))


@strawberry.type
class ContextProjectOverview:
    project_id: strawberry.ID
    key: str
    name: str
    engagement_id: strawberry.ID
    counts: ContextCounts
    coverage: ContextCoverage
    freshness: ContextFreshness | None


@strawberry.type
class ContextEngineOverview:
    subject: ContextSubject | None
    projects: list[ContextProjectOverview]
    counts: ContextCounts
    coverage: ContextCoverage
    freshness: ContextFreshness | None
    providers: list[ContextProvider]


async def context_query(
    info: Info[GraphQLContext, Any],
    question: str,
    subject_ref: ContextEngineSubjectInput | None = None,
    project_id: strawberry.ID | None = None,
) -> ContextBriefing:
    """The deterministic briefing for a question about a project, engagement or portfolio."""
    principal = require(info, READ)
    subject = (subject_ref.type, str(subject_ref.id)) if subject_ref is not None else None
    briefing = briefing_resource(
        await _call(briefings.query_context(principal, question, project_id=_id(project_id), subject=subject))
    )
    return ContextBriefing(
        subject=ContextSubject(type=briefing["subject"]["type"], id=strawberry.ID(briefing["subject"]["id"])),
        question=briefing["question"],
        answer=briefing["answer"],
        findings=[ContextClaim.of(c) for c in briefing["findings"]],
        risks=[ContextClaim.of(c) for c in briefing["risks"]],
        blockers=[ContextClaim.of(c) for c in briefing["blockers"]],
        coverage=ContextCoverage.of(briefing["coverage"]),
        freshness=ContextFreshness.of(briefing["freshness"]),
        provenance=[ContextProvenance.of(p) for p in briefing["provenance"]],
        as_of=briefing["asOf"],
    )


async def context_engine_search(
    info: Info[GraphQLContext, Any],
    query: str,
    project_id: strawberry.ID | None = None,
    engagement_id: strawberry.ID | None = None,
    first: int | None = None,
    after: str | None = None,
) -> ContextEngineSearchResult:
    """Ready packages ranked by BM25 over term and summary."""
    principal = require(info, READ)
    search = service.PackageSearch(query, _id(project_id), _id(engagement_id), first, after)
    result = await _call(service.search_packages(principal, search))
    answer = search_resource(result)
    data = answer["data"]
    hits = [ContextPackageHit(score=n["score"], package=ContextPackage.of(n["package"])) for n in data["nodes"]]
    return ContextEngineSearchResult(
        total_count=data["totalCount"],
        truncated=data["truncated"],
        **connection_fields(hits, answer["page"], cursors=result.cursors),
    )


async def context_engine_package_evidence(
    info: Info[GraphQLContext, Any], package_id: strawberry.ID
) -> list[ContextEvidenceReference]:
    """A package's evidence references, newest first (at most 100)."""
    principal = require(info, READ)
    items, _ = await _call(service.package_evidence(principal, str(package_id), limit=100))
    return [ContextEvidenceReference.of(evidence_resource(e)) for e in items]


async def context_engine_providers(
    info: Info[GraphQLContext, Any],
    engagement_id: strawberry.ID | None = None,
    project_id: strawberry.ID | None = None,
) -> list[ContextProvider]:
    """Contributing providers, with counts over the subject's projects you may read."""
    principal = require(info, READ)
    providers, _ = await _call(
        service.list_providers(principal, project_id=_id(project_id), engagement_id=_id(engagement_id), limit=100)
    )
    return [ContextProvider.of(provider_resource(p)) for p in providers]


async def context_engine_overview(
    info: Info[GraphQLContext, Any],
    project_id: strawberry.ID | None = None,
    engagement_id: strawberry.ID | None = None,
) -> ContextEngineOverview:
    """Coverage and freshness per project, and the contributing providers."""
    principal = require(info, READ)
    d = overview_resource(
        await _call(service.get_overview(principal, project_id=_id(project_id), engagement_id=_id(engagement_id)))
    )
    subject = d["subject"]
    return ContextEngineOverview(
        subject=ContextSubject(type=subject["type"], id=strawberry.ID(subject["id"])) if subject else None,
        projects=[
            ContextProjectOverview(
                project_id=strawberry.ID(p["projectId"]),
                key=p["key"],
                name=p["name"],
                engagement_id=strawberry.ID(p["engagementId"]),
                counts=ContextCounts.of(p["counts"]),
                coverage=ContextCoverage.of(p["coverage"]),
                freshness=ContextFreshness.of(p["freshness"]),
            )
            for p in d["projects"]
        ],
        counts=ContextCounts.of(d["counts"]),
        coverage=ContextCoverage.of(d["coverage"]),
        freshness=ContextFreshness.of(d["freshness"]),
        providers=[ContextProvider.of(p) for p in d["providers"]],
    )


async def context_engine_packages(
    info: Info[GraphQLContext, Any],
    project_id: strawberry.ID | None = None,
    engagement_id: strawberry.ID | None = None,
    status: ContextPackageStatus | None = None,
    contribution_type: ContributionType | None = None,
    first: int | None = None,
    after: str | None = None,
) -> ContextPackageConnection:
    """Packages, newest first (ready and stale unless `status` asks for one)."""
    principal = require(info, READ)
    filters = service.PackageFilters(_id(project_id), _id(engagement_id), status, contribution_type, first, after)
    packages, page = await _call(service.list_packages(principal, filters))
    return ContextPackageConnection(
        **connection_fields([ContextPackage.of(package_resource(p)) for p in packages], page)
    )


async def context_engine_package(info: Info[GraphQLContext, Any], id: strawberry.ID) -> ContextPackage | None:
    """One visible package, or null."""
    principal = require(info, READ)
    try:
        return ContextPackage.of(package_resource(await service.get_package(principal, str(id))))
    except GroundworkError as error:
        if error.code == "not_found":
            return None
        raise as_graphql_error(error) from None
