"""What the context engine's reads see of entries: packages with their provider and engagement, their evidence,
provider activity, and per-project coverage."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from asyncpg import Record

from groundwork.persistence import db


@dataclass(frozen=True, slots=True)
class PackageRow:
    """An entry as a package is shown: with its project's engagement and its provider's name."""

    id: str
    seq: int
    workspace_id: str
    project_id: str
    engagement_id: str
    term: str
    summary: str
    contribution_type: str
    classification: str
    authority: str
    status: str
    provider_id: str
    provider_name: str
    promoter_identity: str
    generated_at: datetime
    as_of: datetime
    evidence_count: int
    provider_ids: list[str]
    supersedes: str | None
    superseded_by: str | None
    created_at: datetime
    updated_at: datetime


@dataclass(frozen=True, slots=True)
class EvidenceRow:
    """One evidence reference of an entry: what it points at (never a body), with its provider and provenance."""

    id: str
    seq: int
    entry_id: str
    provider_id: str
    provider_name: str
    capability: str
    reference_kind: str
    reference_id: str
    reference_class: str
    as_of: datetime
    promoter_identity: str
    generated_at: datetime


@dataclass(frozen=True, slots=True)
class ProviderActivityRow:
    """A provider's applied contributions in one project, and the newest one's time."""

    provider_id: str
    project_id: str
    contributions: int
    newest: datetime | None


@dataclass(frozen=True, slots=True)
class ProjectCoverageRow:
    """One project's entries of one type: by status, their evidence, newest `as_of` and providers (ready ones)."""

    project_id: str
    contribution_type: str
    ready: int
    stale: int
    superseded: int
    evidence: int
    as_of: datetime | None
    providers: list[str]

    def count(self, status: str) -> int:
        """How many of these entries are in `status` (ready, stale or superseded)."""
        return {"ready": self.ready, "stale": self.stale, "superseded": self.superseded}[status]


_ENTRY_COLUMNS = """
    e.id, e.seq, e.workspace_id, e.project_id, p.engagement_id, e.term, e.summary, e.contribution_type,
    e.classification, e.authority, e.status, e.provider_id, v.name AS provider_name, e.promoter_identity,
    e.generated_at, e.as_of, e.evidence_count, e.provider_ids, e.supersedes, e.superseded_by, e.created_at,
    e.updated_at
"""
_ENTRY_FROM = """
    FROM context_entries e
    JOIN projects p ON p.id = e.project_id
    JOIN context_providers v ON v.id = e.provider_id
"""


def _package(row: Record) -> PackageRow:
    return PackageRow(
        id=row["id"],
        seq=row["seq"],
        workspace_id=row["workspace_id"],
        project_id=row["project_id"],
        engagement_id=row["engagement_id"],
        term=row["term"],
        summary=row["summary"],
        contribution_type=row["contribution_type"],
        classification=row["classification"],
        authority=row["authority"],
        status=row["status"],
        provider_id=row["provider_id"],
        provider_name=row["provider_name"],
        promoter_identity=row["promoter_identity"],
        generated_at=row["generated_at"],
        as_of=row["as_of"],
        evidence_count=row["evidence_count"],
        provider_ids=row["provider_ids"],
        supersedes=row["supersedes"],
        superseded_by=row["superseded_by"],
        created_at=row["created_at"],
        updated_at=row["updated_at"],
    )


@dataclass(frozen=True, slots=True)
class EntryFilter:
    """Which entries a read may return: the caller's projects and classes, and the list filters."""

    workspace_id: str
    project_ids: list[str]
    classes: list[str]
    statuses: list[str]  # of ready, stale, superseded
    contribution_type: str | None
    stale_before: datetime  # `as_of` at or before this instant makes a ready entry stale


def _status_clause(first: int) -> str:
    # ready/stale are the stored `ready` split by age at read time; superseded is stored.
    return f"""(
        (e.status = 'superseded' AND 'superseded' = ANY(${first}::text[]))
        OR (e.status = 'ready' AND e.as_of > ${first + 1} AND 'ready' = ANY(${first}::text[]))
        OR (e.status = 'ready' AND e.as_of <= ${first + 1} AND 'stale' = ANY(${first}::text[])))"""


async def list_entries(where: EntryFilter, *, after_id: str | None, limit: int) -> list[PackageRow]:
    """Visible entries, newest first, after the keyset position `after_id`."""
    rows = await db.fetch(
        f"""
        SELECT {_ENTRY_COLUMNS} {_ENTRY_FROM}
        WHERE e.workspace_id = $1 AND e.project_id = ANY($2::text[]) AND e.classification = ANY($3::text[])
          AND {_status_clause(4)}
          AND ($6::text IS NULL OR e.contribution_type = $6) AND ($7::text IS NULL OR e.id < $7)
        ORDER BY e.id DESC LIMIT $8
        """,
        where.workspace_id,
        where.project_ids,
        where.classes,
        where.statuses,
        where.stale_before,
        where.contribution_type,
        after_id,
        limit,
    )
    return [_package(r) for r in rows]


async def entry_for_read(workspace_id: str, entry_id: str) -> PackageRow | None:
    """One shown entry (ready or superseded) of the workspace; visibility is the caller's to check."""
    row = await db.fetchrow(
        f"SELECT {_ENTRY_COLUMNS} {_ENTRY_FROM} WHERE e.id = $1 AND e.workspace_id = $2 AND e.status <> 'pending'",
        entry_id,
        workspace_id,
    )
    return _package(row) if row else None


async def entries_by_seq(
    workspace_id: str, seqs: list[int], project_ids: list[str], classes: list[str]
) -> dict[int, PackageRow]:
    """Ready entries for index hits, re-checked against PostgreSQL (the truth) and the caller's reach."""
    rows = await db.fetch(
        f"""
        SELECT {_ENTRY_COLUMNS} {_ENTRY_FROM}
        WHERE e.seq = ANY($2::bigint[]) AND e.workspace_id = $1 AND e.project_id = ANY($3::text[])
          AND e.classification = ANY($4::text[]) AND e.status = 'ready'
        """,
        workspace_id,
        seqs,
        project_ids,
        classes,
    )
    return {int(r["seq"]): _package(r) for r in rows}


_EVIDENCE_COLUMNS = """
    x.id, x.seq, x.entry_id, x.provider_id, v.name AS provider_name, x.capability, x.reference_kind, x.reference_id,
    x.reference_class, x.as_of, c.promoter_identity, c.generated_at
"""
_EVIDENCE_FROM = """
    FROM context_evidence x
    JOIN context_providers v ON v.id = x.provider_id
    JOIN context_contributions c ON c.id = x.contribution_id
"""


def _evidence(row: Record) -> EvidenceRow:
    return EvidenceRow(
        id=row["id"],
        seq=row["seq"],
        entry_id=row["entry_id"],
        provider_id=row["provider_id"],
        provider_name=row["provider_name"],
        capability=row["capability"],
        reference_kind=row["reference_kind"],
        reference_id=row["reference_id"],
        reference_class=row["reference_class"],
        as_of=row["as_of"],
        promoter_identity=row["promoter_identity"],
        generated_at=row["generated_at"],
    )


async def evidence_of_entries(entry_ids: list[str]) -> dict[str, list[EvidenceRow]]:
    """Every evidence reference of the given entries, newest first."""
    rows = await db.fetch(
        f"SELECT {_EVIDENCE_COLUMNS} {_EVIDENCE_FROM} WHERE x.entry_id = ANY($1::text[]) ORDER BY x.seq DESC",
        entry_ids,
    )
    result: dict[str, list[EvidenceRow]] = {entry_id: [] for entry_id in entry_ids}
    for row in rows:
        result[row["entry_id"]].append(_evidence(row))
    return result


async def evidence_page(entry_id: str, *, after_seq: int | None, limit: int) -> list[EvidenceRow]:
    """One entry's evidence references, newest first, after the keyset position."""
    rows = await db.fetch(
        f"SELECT {_EVIDENCE_COLUMNS} {_EVIDENCE_FROM}"
        " WHERE x.entry_id = $1 AND ($2::bigint IS NULL OR x.seq < $2) ORDER BY x.seq DESC LIMIT $3",
        entry_id,
        after_seq,
        limit,
    )
    return [_evidence(r) for r in rows]


async def provider_activity(workspace_id: str, project_ids: list[str], classes: list[str]) -> list[ProviderActivityRow]:
    """Per provider and project: applied contributions to entries of allowed classes, and the newest one."""
    rows = await db.fetch(
        """
        SELECT c.provider_id, c.project_id, count(*) AS contributions, max(c.generated_at) AS newest
        FROM context_contributions c
        WHERE c.workspace_id = $1 AND c.project_id = ANY($2::text[]) AND c.classification = ANY($3::text[])
          AND c.state = 'applied'
        GROUP BY c.provider_id, c.project_id
        """,
        workspace_id,
        project_ids,
        classes,
    )
    return [
        ProviderActivityRow(
            provider_id=r["provider_id"],
            project_id=r["project_id"],
            contributions=r["contributions"],
            newest=r["newest"],
        )
        for r in rows
    ]


async def providers_by_project(project_ids: list[str], classes: list[str]) -> list[tuple[str, str]]:
    """(project, provider) pairs with applied contributions of the allowed classes."""
    rows = await db.fetch(
        "SELECT DISTINCT project_id, provider_id FROM context_contributions"
        " WHERE project_id = ANY($1::text[]) AND classification = ANY($2::text[]) AND state = 'applied'",
        project_ids,
        classes,
    )
    return [(r["project_id"], r["provider_id"]) for r in rows]


async def project_overview(
    workspace_id: str, project_ids: list[str], classes: list[str], stale_before: datetime
) -> list[ProjectCoverageRow]:
    """Per project and type: entries by status (ready, stale, superseded), evidence, providers, newest `as_of`."""
    rows = await db.fetch(
        """
        SELECT e.project_id, e.contribution_type,
               count(*) FILTER (WHERE e.status = 'ready' AND e.as_of > $4) AS ready,
               count(*) FILTER (WHERE e.status = 'ready' AND e.as_of <= $4) AS stale,
               count(*) FILTER (WHERE e.status = 'superseded') AS superseded,
               coalesce(sum(e.evidence_count) FILTER (WHERE e.status = 'ready'), 0) AS evidence,
               max(e.as_of) FILTER (WHERE e.status = 'ready') AS as_of,
               array_remove(array_agg(DISTINCT p.provider) FILTER (WHERE e.status = 'ready'), NULL) AS providers
        FROM context_entries e LEFT JOIN LATERAL unnest(e.provider_ids) AS p(provider) ON true
        WHERE e.workspace_id = $1 AND e.project_id = ANY($2::text[]) AND e.classification = ANY($3::text[])
          AND e.status <> 'pending'
        GROUP BY e.project_id, e.contribution_type
        """,
        workspace_id,
        project_ids,
        classes,
        stale_before,
    )
    return [
        ProjectCoverageRow(
            project_id=r["project_id"],
            contribution_type=r["contribution_type"],
            ready=r["ready"],
            stale=r["stale"],
            superseded=r["superseded"],
            evidence=r["evidence"],
            as_of=r["as_of"],
            providers=r["providers"],
        )
        for r in rows
    ]
