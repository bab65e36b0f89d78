"""Context engine reads: overview, packages, package search, evidence and providers (the briefing: `briefings`).

Every transport (REST, GraphQL, MCP) calls these with the principal. A read reaches only projects
where the principal holds `context:read` (engagement and portfolio subjects fan out to those child
projects), and only content of the classes its key may see: a financial or staffing provider, entry
or evidence reference is absent without `context-engine:financial` / `context-engine:staffing`,
in lists, counts, coverage and briefings alike. Reads write nothing and emit no event.
"""

from __future__ import annotations

import hashlib
import json
from collections import defaultdict
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from groundwork.domain.context_engine.model import (
    CAPABILITY_TYPES,
    CONTRIBUTION_TYPES,
    PACKAGE_STATUSES,
    Freshness,
    allowed_classes,
    freshness,
    package_status,
    provider_visible,
    stale_threshold_days,
)
from groundwork.domain.context_engine.views import EvidenceView, PackageView, Provenance, ProviderView
from groundwork.domain.errors import FieldError, InvalidRequest, NotFound, ValidationFailed
from groundwork.domain.evidence_search.analysis import AnalyzedClause, analyze_question
from groundwork.domain.evidence_search.corpus import (
    MAX_QUERY_CHARS,
    MAX_REACHABLE_HITS,
    SUBJECT_TYPES,
    InvalidQuery,
    parse_query,
)
from groundwork.domain.ids import SUBJECT_PREFIXES, cannot_be_an_id, id_like
from groundwork.domain.pagination import page_info, page_request, ranked_cursor, ranked_position
from groundwork.domain.tenancy.principals import Principal
from groundwork.persistence.repositories.context_engine import package_reads
from groundwork.persistence.repositories.context_engine import providers as provider_rows
from groundwork.persistence.repositories.context_engine.package_reads import (
    EvidenceRow,
    PackageRow,
    ProjectCoverageRow,
    ProviderActivityRow,
)
from groundwork.persistence.repositories.context_engine.providers import ProviderRow
from groundwork.persistence.repositories.tenancy import workspaces as tenancy
from groundwork.platform.search_replica.reads import readable
from groundwork.search.package_index import package_index
from groundwork.search.package_search import find_packages
from groundwork.services.evidence_search.search import CONTEXT_READ, search_scope
from groundwork.services.tenancy import project_access


def _now() -> datetime:
    return datetime.now(UTC)


@dataclass(frozen=True)
class Reach:
    """What a read may touch: the subject, its projects the caller may read, and the visible classes."""

    workspace_id: str
    subject_type: str | None
    subject_id: str | None
    project_ids: list[str]
    classes: tuple[str, ...]


def _check_id(value: str | None, path: str, prefix: str | None, errors: list[FieldError]) -> None:
    if cannot_be_an_id(value):
        errors.append(FieldError(path, f"must be {id_like(prefix)}"))


async def reach(
    principal: Principal,
    *,
    project_id: str | None = None,
    engagement_id: str | None = None,
    subject: tuple[str, str] | None = None,
) -> Reach:
    """Resolve a read's target to the projects the caller may read; an unseen subject is 404."""
    errors: list[FieldError] = []
    _check_id(project_id, "project_id", SUBJECT_PREFIXES["project"], errors)
    _check_id(engagement_id, "engagement_id", SUBJECT_PREFIXES["engagement"], errors)
    if project_id is not None and engagement_id is not None:
        errors.append(FieldError("engagement_id", "give project_id or engagement_id, not both"))
    if subject is not None:
        if subject[0] not in SUBJECT_TYPES:
            errors.append(FieldError("subject_ref.type", f"must be one of {', '.join(SUBJECT_TYPES)}"))
        _check_id(subject[1], "subject_ref.id", SUBJECT_PREFIXES.get(subject[0]), errors)
    if errors:
        raise ValidationFailed("The request is not valid.", errors)
    classes = allowed_classes(principal.scopes)
    if subject is None and project_id is not None:
        subject = ("project", project_id)
    elif subject is None and engagement_id is not None:
        subject = ("engagement", engagement_id)
    if subject is None:
        readable = await tenancy.visible_project_ids(principal, CONTEXT_READ)
        return Reach(principal.workspace_id, None, None, sorted(readable), classes)
    scope = await search_scope(principal, subject[0], subject[1])
    return Reach(principal.workspace_id, subject[0], subject[1], scope.readable_project_ids, classes)


# -- rendering rows into views ------------------------------------------------------------------------------


@dataclass(frozen=True)
class _ProviderFacts:
    """The visible providers, and which of them contributed to which project."""

    providers: dict[str, ProviderRow]
    by_project: dict[str, set[str]]
    activity: list[ProviderActivityRow]


async def _visible_providers(principal: Principal) -> dict[str, ProviderRow]:
    return {
        p.id: p
        for p in await provider_rows.providers_of_workspace(principal.workspace_id)
        if provider_visible(p.classification, principal.scopes)
    }


async def _provider_facts(principal: Principal, target: Reach) -> _ProviderFacts:
    """Visible providers with their contribution counts per project of the target (providers, overview)."""
    providers = await _visible_providers(principal)
    activity = [
        a
        for a in await package_reads.provider_activity(principal.workspace_id, target.project_ids, list(target.classes))
        if a.provider_id in providers
    ]
    by_project: dict[str, set[str]] = defaultdict(set)
    for row in activity:
        by_project[row.project_id].add(row.provider_id)
    return _ProviderFacts(providers, by_project, activity)


async def _presence(principal: Principal, project_ids: list[str], classes: tuple[str, ...]) -> _ProviderFacts:
    """Visible providers and the projects they are active in, for rendering packages of these projects only."""
    providers = await _visible_providers(principal)
    by_project: dict[str, set[str]] = defaultdict(set)
    for project_id, provider_id in await package_reads.providers_by_project(sorted(set(project_ids)), list(classes)):
        if provider_id in providers:
            by_project[project_id].add(provider_id)
    return _ProviderFacts(providers, by_project, [])


def _missing(row: PackageRow, facts: _ProviderFacts) -> tuple[str, ...]:
    """Visible providers active in the package's project that could speak to its type but did not."""
    have = set(row.provider_ids)
    names = []
    for provider_id in facts.by_project.get(row.project_id, set()):
        provider = facts.providers[provider_id]
        speaks = any(CAPABILITY_TYPES.get(c) == row.contribution_type for c in provider.capabilities)
        if speaks and provider_id not in have:
            names.append(provider.name)
    return tuple(sorted(names))


def _package(row: PackageRow, facts: _ProviderFacts, now: datetime) -> PackageView:
    fresh = freshness(row.as_of, now)
    visible_providers = [p for p in row.provider_ids if p in facts.providers]
    return PackageView(
        id=row.id,
        seq=int(row.seq),
        status=package_status(row.status, fresh),
        term=row.term,
        summary=row.summary,
        contribution_type=row.contribution_type,
        classification=row.classification,
        project_id=row.project_id,
        engagement_id=row.engagement_id,
        workspace_id=row.workspace_id,
        freshness=fresh,
        provenance=Provenance(row.provider_name, row.promoter_identity, row.generated_at),
        evidence_count=int(row.evidence_count),
        provider_count=len(visible_providers),
        missing=_missing(row, facts),
        supersedes=row.supersedes,
        superseded_by=row.superseded_by,
        created_at=row.created_at,
        updated_at=row.updated_at,
    )


def evidence_view(row: EvidenceRow, reference: datetime) -> EvidenceView:
    return EvidenceView(
        id=row.id,
        provider_id=row.provider_id,
        capability=row.capability,
        kind=row.reference_kind,
        reference_id=row.reference_id,
        reference_class=row.reference_class,
        as_of=row.as_of,
        freshness=freshness(row.as_of, reference),
        provenance=Provenance(row.provider_name, row.promoter_identity, row.generated_at),
    )


def _stale_before(now: datetime) -> datetime:
    return now - timedelta(days=stale_threshold_days())


# -- packages -------------------------------------------------------------------------------------------------


async def _visible_entry(principal: Principal, package_id: str) -> tuple[PackageRow, Reach]:
    """An entry the caller may see (project with context:read, an allowed class); 404 otherwise."""
    if not package_id.startswith("pkg_") or "\x00" in package_id or len(package_id) > 200:
        raise NotFound("No such context package.")
    row = await package_reads.entry_for_read(principal.workspace_id, package_id)
    classes = allowed_classes(principal.scopes)
    if row is None or row.classification not in classes:
        raise NotFound("No such context package.")
    permissions = await project_access.project_permissions(principal, row.project_id)
    if not permissions or CONTEXT_READ not in permissions:
        raise NotFound("No such context package.")
    return row, Reach(principal.workspace_id, "project", row.project_id, [row.project_id], classes)


async def get_package(principal: Principal, package_id: str) -> PackageView:
    """One context package (also a superseded one, which names its successor)."""
    row, target = await _visible_entry(principal, package_id)
    return _package(row, await _presence(principal, target.project_ids, target.classes), _now())


@dataclass(frozen=True)
class PackageFilters:
    """The package list's filters as a caller gives them."""

    project_id: str | None = None
    engagement_id: str | None = None
    status: str | None = None
    contribution_type: str | None = None
    limit: int | None = None
    cursor: str | None = None


async def list_packages(principal: Principal, filters: PackageFilters) -> tuple[list[PackageView], dict[str, Any]]:
    """Visible packages, newest first; `ready` and `stale` unless `status` asks for one status."""
    page = page_request(filters.limit, filters.cursor)
    errors = []
    if filters.status is not None and filters.status not in PACKAGE_STATUSES:
        errors.append(FieldError("status", f"must be one of {', '.join(PACKAGE_STATUSES)}"))
    if filters.contribution_type is not None and filters.contribution_type not in CONTRIBUTION_TYPES:
        errors.append(FieldError("contribution_type", f"must be one of {', '.join(CONTRIBUTION_TYPES)}"))
    if errors:
        raise ValidationFailed("Invalid filter.", errors)
    target = await reach(principal, project_id=filters.project_id, engagement_id=filters.engagement_id)
    now = _now()
    rows = await package_reads.list_entries(
        package_reads.EntryFilter(
            workspace_id=principal.workspace_id,
            project_ids=target.project_ids,
            classes=list(target.classes),
            statuses=[filters.status] if filters.status else ["ready", "stale"],
            contribution_type=filters.contribution_type,
            stale_before=_stale_before(now),
        ),
        after_id=page.after_text(),
        limit=page.limit + 1,
    )
    rows, info = page_info(rows, page.limit, lambda r: {"id": r.id})
    facts = await _presence(principal, [r.project_id for r in rows], target.classes)
    return [_package(r, facts, now) for r in rows], info


@dataclass(frozen=True)
class PackageSearch:
    """A package search as a caller gives it."""

    query: str
    project_id: str | None = None
    engagement_id: str | None = None
    limit: int | None = None
    cursor: str | None = None


@dataclass(frozen=True)
class PackageSearchResult:
    """Scored packages, how many match in all, whether hits were cut at the cap, the keyset page and the cursor
    after each package."""

    nodes: list[tuple[float, PackageView]]
    total_count: int
    truncated: bool
    page: dict[str, Any]
    cursors: list[str] = field(default_factory=list)


def _search_fingerprint(search: PackageSearch) -> str:
    raw = json.dumps(["packages", search.query, search.project_id, search.engagement_id])
    return hashlib.sha256(raw.encode()).hexdigest()[:16]


def _clauses(query: str, path: str) -> list[AnalyzedClause]:
    if len(query) > MAX_QUERY_CHARS:
        raise InvalidRequest(
            "The query is too long.", [FieldError(path, f"must be at most {MAX_QUERY_CHARS} characters")]
        )
    clauses = analyze_question(parse_query(query))
    if not any(a.clause.occur != "must_not" for a in clauses):
        raise InvalidQuery("no searchable word: use letters or digits", 0)
    return clauses


async def search_packages(principal: Principal, search: PackageSearch) -> PackageSearchResult:
    """Ready packages ranked by BM25 over term and summary (the corpus query language), keyset-paginated."""
    page_req = page_request(search.limit, search.cursor)
    clauses = _clauses(search.query, "query")
    fingerprint = _search_fingerprint(search)
    after, offset = ranked_position(page_req, fingerprint)
    target = await reach(principal, project_id=search.project_id, engagement_id=search.engagement_id)
    with readable(package_index()):
        hits = await find_packages(
            target.project_ids, target.classes, clauses, limit=page_req.limit, after=after, offset=offset
        )
    rows = await package_reads.entries_by_seq(
        principal.workspace_id, [h.seq for h in hits.hits], target.project_ids, list(target.classes)
    )
    facts = await _presence(principal, [r.project_id for r in rows.values()], target.classes)
    now = _now()
    shown = [(i, h) for i, h in enumerate(hits.hits) if h.seq in rows]
    nodes = [(round(h.score, 6), _package(rows[h.seq], facts, now)) for _, h in shown]
    next_cursor = None
    if hits.has_more and hits.hits:
        last = hits.hits[-1]
        next_cursor = ranked_cursor(fingerprint, last.score, last.seq, offset + len(hits.hits))
    return PackageSearchResult(
        nodes=nodes,
        total_count=hits.total,
        truncated=hits.total > MAX_REACHABLE_HITS,
        page={"next_cursor": next_cursor, "has_more": hits.has_more},
        cursors=[ranked_cursor(fingerprint, h.score, h.seq, offset + i + 1) for i, h in shown],
    )


async def package_evidence(
    principal: Principal, package_id: str, *, limit: int | None = None, cursor: str | None = None
) -> tuple[list[EvidenceView], dict[str, Any]]:
    """A visible package's evidence references (policy-safe: what they point at, never a body), newest first."""
    page = page_request(limit, cursor)
    await _visible_entry(principal, package_id)
    after = page.after.get("seq") if page.after is not None else None
    if after is not None and (not isinstance(after, int) or isinstance(after, bool)):
        raise InvalidRequest("Invalid cursor.", [FieldError("cursor", "is not a cursor this API issued")])
    rows = await package_reads.evidence_page(package_id, after_seq=after, limit=page.limit + 1)
    rows, info = page_info(rows, page.limit, lambda r: {"seq": int(r.seq)})
    now = _now()
    return [evidence_view(r, now) for r in rows], info


# -- providers and overview --------------------------------------------------------------------------------------


def _providers(target: Reach, facts: _ProviderFacts, now: datetime) -> list[ProviderView]:
    counts: dict[str, int] = defaultdict(int)
    projects: dict[str, set[str]] = defaultdict(set)
    newest: dict[str, datetime] = {}
    for row in facts.activity:
        counts[row.provider_id] += int(row.contributions)
        projects[row.provider_id].add(row.project_id)
        if row.newest is not None and (row.provider_id not in newest or row.newest > newest[row.provider_id]):
            newest[row.provider_id] = row.newest
    views = []
    for provider in sorted(facts.providers.values(), key=lambda p: p.name):
        covered = len(projects[provider.id])
        coverage = "none" if covered == 0 else "covered" if covered >= len(target.project_ids) else "partial"
        last = newest.get(provider.id)
        views.append(
            ProviderView(
                id=provider.id,
                name=provider.name,
                classification=provider.classification,
                capabilities=tuple(provider.capabilities),
                contribution_count=counts[provider.id],
                coverage_status=coverage,
                freshness_status=freshness(last, now).status if last is not None else None,
                authority=provider.authority,
            )
        )
    return views


async def list_providers(
    principal: Principal,
    *,
    project_id: str | None = None,
    engagement_id: str | None = None,
    limit: int | None = None,
    cursor: str | None = None,
) -> tuple[list[ProviderView], dict[str, Any]]:
    """The visible providers with counts, coverage and freshness over the subject's visible projects, by name."""
    page = page_request(limit, cursor)
    target = await reach(principal, project_id=project_id, engagement_id=engagement_id)
    views = _providers(target, await _provider_facts(principal, target), _now())
    after = page.after_text("name")
    if after is not None:
        views = [v for v in views if v.name > after]
    return page_info(views[: page.limit + 1], page.limit, lambda v: {"name": v.name})


@dataclass(frozen=True)
class ProjectOverview:
    """One project's coverage and freshness."""

    project_id: str
    key: str
    name: str
    engagement_id: str
    by_status: dict[str, int]
    by_type: dict[str, int]
    evidence_count: int
    provider_count: int
    missing: tuple[str, ...]
    freshness: Freshness | None


@dataclass(frozen=True)
class Overview:
    """Coverage and freshness per project of the subject, totals, and the contributing providers."""

    subject_type: str | None
    subject_id: str | None
    projects: list[ProjectOverview]
    by_status: dict[str, int]
    by_type: dict[str, int]
    evidence_count: int
    provider_count: int
    freshness: Freshness | None
    providers: list[ProviderView]


async def get_overview(
    principal: Principal, *, project_id: str | None = None, engagement_id: str | None = None
) -> Overview:
    """Per project: packages by status and type, evidence and provider coverage, freshness; and the providers."""
    target = await reach(principal, project_id=project_id, engagement_id=engagement_id)
    now = _now()
    facts = await _provider_facts(principal, target)
    rows = await package_reads.project_overview(
        principal.workspace_id, target.project_ids, list(target.classes), _stale_before(now)
    )
    per_project: dict[str, list[ProjectCoverageRow]] = defaultdict(list)
    for row in rows:
        per_project[row.project_id].append(row)
    projects = []
    all_providers: set[str] = set()
    for project in await tenancy.projects_by_id(target.project_ids):
        stats = per_project.get(project.id, [])
        by_status = {s: sum(r.count(s) for r in stats) for s in PACKAGE_STATUSES}
        by_type = {
            t: sum(int(r.ready) + int(r.stale) for r in stats if r.contribution_type == t) for t in CONTRIBUTION_TYPES
        }
        providers = {p for r in stats for p in r.providers if p in facts.providers}
        all_providers |= providers
        newest = max((r.as_of for r in stats if r.as_of is not None), default=None)
        active = facts.by_project.get(project.id, set())
        projects.append(
            ProjectOverview(
                project_id=project.id,
                key=project.key,
                name=project.name,
                engagement_id=project.engagement_id,
                by_status=by_status,
                by_type=by_type,
                evidence_count=sum(int(r.evidence) for r in stats),
                provider_count=len(providers),
                missing=tuple(sorted(p.name for pid, p in facts.providers.items() if pid not in active)),
                freshness=freshness(newest, now) if newest is not None else None,
            )
        )
    newest_all = max((p.freshness.as_of for p in projects if p.freshness is not None), default=None)
    return Overview(
        subject_type=target.subject_type,
        subject_id=target.subject_id,
        projects=projects,
        by_status={s: sum(p.by_status[s] for p in projects) for s in PACKAGE_STATUSES},
        by_type={t: sum(p.by_type[t] for p in projects) for t in CONTRIBUTION_TYPES},
        evidence_count=sum(p.evidence_count for p in projects),
        provider_count=len(all_providers),
        freshness=freshness(newest_all, now) if newest_all is not None else None,
        providers=_providers(target, facts, now),
    )
