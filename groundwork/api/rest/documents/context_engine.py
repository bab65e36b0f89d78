"""REST answers of the context engine: packages, evidence, providers, the overview, package search, briefings,
and the Agent API's delivery read models."""

from __future__ import annotations

from typing import Any

import msgspec

from groundwork.api.rest.documents.common import Page, Reference, Resource, Timestamp


class Freshness(Resource, kw_only=True):
    """How fresh something is: its status, as of when, and its age in days."""

    status: str
    as_of: Timestamp | None
    age_days: float | None


class Provenance(Resource, kw_only=True):
    """Where something came from: its source, who promoted it and when it was generated."""

    source: str | None
    promoter_identity: str | None
    generated_at: Timestamp | None


class PackageScope(Resource, kw_only=True):
    """Where a package applies."""

    project_id: str | None
    engagement_id: str | None
    adoption_workspace_id: str | None


class Coverage(Resource, kw_only=True):
    """How much evidence, from how many providers, and what is missing."""

    evidence_count: int
    provider_count: int
    missing: list[str]


class Package(Resource, kw_only=True):
    """A context package."""

    id: str
    status: str
    term: str
    summary: str | None
    contribution_type: str
    classification: str | None
    scope: PackageScope
    freshness: Freshness | None
    provenance: Provenance
    coverage: Coverage
    supersedes: str | None
    superseded_by: str | None
    created_at: Timestamp | None
    updated_at: Timestamp | None


class EvidenceTarget(Resource, kw_only=True):
    """What an evidence reference points at, and the route that opens it (null when none does)."""

    kind: str
    id: str
    class_: str | None = msgspec.field(name="class")
    href: str | None


class Evidence(Resource, kw_only=True):
    """A policy-safe evidence reference: what it points at, never a body or an excerpt."""

    id: str
    provider: str | None
    capability: str | None
    as_of: Timestamp | None
    freshness: Freshness | None
    reference: EvidenceTarget
    provenance: Provenance


class Provider(Resource, kw_only=True):
    """A contributing provider with counts over what the caller may see."""

    id: str
    name: str
    classification: str | None
    capabilities: list[str]
    contribution_count: int
    coverage_status: str | None
    freshness_status: str | None
    authority: Any


class ScoredPackage(Resource, kw_only=True):
    """A package that matches a search, with its score."""

    score: float
    package: Package


class PackageSearch(Resource, kw_only=True):
    """The packages that match, how many in all, and whether the hits were cut at the cap."""

    total_count: int
    truncated: bool
    nodes: list[ScoredPackage]


class Claim(Resource, kw_only=True):
    """One finding, risk or blocker of a briefing, with its evidence."""

    text: str
    package_id: str | None
    project_id: str | None
    term: str | None
    contribution_type: str | None
    relevance: float | None
    evidence_refs: list[Evidence]
    freshness: Freshness | None
    provenance: Provenance


class Briefing(Resource, kw_only=True):
    """The deterministic briefing: findings, risks, blockers, coverage, freshness, provenance, asOf."""

    subject: Reference
    question: str | None
    answer: str | None
    findings: list[Claim]
    risks: list[Claim]
    blockers: list[Claim]
    coverage: Coverage
    freshness: Freshness | None
    provenance: list[Provenance]
    as_of: Timestamp | None


class Counts(Resource, kw_only=True):
    """Packages by status and by type."""

    by_status: dict[str, int]
    by_type: dict[str, int]


class Totals(Resource, kw_only=True):
    """Evidence and providers over the whole subject."""

    evidence_count: int
    provider_count: int


class ProjectOverview(Resource, kw_only=True):
    """Coverage and freshness of one project."""

    project_id: str
    key: str
    name: str
    engagement_id: str | None
    counts: Counts
    coverage: Coverage
    freshness: Freshness | None


class Overview(Resource, kw_only=True):
    """Coverage and freshness per project, totals, and the contributing providers."""

    subject: Reference | None
    projects: list[ProjectOverview]
    counts: Counts
    coverage: Totals
    freshness: Freshness | None
    providers: list[Provider]


class AgentProject(Resource, kw_only=True):
    """A project with its delivery health and its throughput and risk trends."""

    id: str
    key: str
    engagement_id: str | None
    health: str
    throughput_trend: str
    risk_trend: str


class ProjectDelivery(Resource, kw_only=True):
    """Delivery of one project: work by status, throughput and scope trends, blockers, health."""

    project_id: str
    health: str
    window_days: int
    work_items: dict[str, Any]
    throughput: dict[str, Any]
    scope: dict[str, Any]
    blockers: dict[str, Any]


class CurrentSprint(Resource, kw_only=True):
    """The current sprint of one project: work by status, completion and untouched ratios, blockers, health."""

    project_id: str
    sprint: str | None
    health: str
    work_items: dict[str, Any] | None
    blockers: int


class ProjectRisks(Resource, kw_only=True):
    """Risk posture of one project: risk, blocker and dependency packages (open, stale, new), with trends."""

    project_id: str
    health: str
    window_days: int
    risks: dict[str, Any]
    blockers: dict[str, Any]
    dependencies: dict[str, Any]


class PackageDocument(msgspec.Struct):
    """One context package."""

    data: Package


class PackageList(msgspec.Struct):
    """A page of context packages."""

    data: list[Package]
    page: Page


class EvidenceList(msgspec.Struct):
    """A page of a package's evidence references."""

    data: list[Evidence]
    page: Page


class ProviderList(msgspec.Struct):
    """A page of contributing providers."""

    data: list[Provider]
    page: Page


class PackageSearchDocument(msgspec.Struct):
    """A page of package search results."""

    data: PackageSearch
    page: Page


class BriefingDocument(msgspec.Struct):
    """A briefing."""

    data: Briefing


class OverviewDocument(msgspec.Struct):
    """The context engine's overview."""

    data: Overview


class AgentProjectList(msgspec.Struct):
    """Every visible project (one page)."""

    data: list[AgentProject]
    page: Page


class ProjectDeliveryDocument(msgspec.Struct):
    """Delivery signals of a project."""

    data: ProjectDelivery


class CurrentSprintDocument(msgspec.Struct):
    """The current sprint's signals."""

    data: CurrentSprint


class ProjectRisksDocument(msgspec.Struct):
    """Risk, blocker and dependency signals of a project."""

    data: ProjectRisks
