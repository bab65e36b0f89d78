"""Context entries: decided per project and term, with the evidence their contributions attach."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from groundwork.domain.context_engine.contribution import ContributionInput, EvidenceInput
from groundwork.domain.context_engine.merge import EntryFacts
from groundwork.domain.ids import new_id
from groundwork.persistence import db

# Any constant works; every process deciding on a term takes the same one.
_TERM_LOCK_SPACE = 7_301


@dataclass(frozen=True, slots=True)
class EntryRow:
    """An entry as stored, any status: its term, type, class and authority, its provenance and evidence counts."""

    id: str
    seq: int
    workspace_id: str
    project_id: str
    term: str
    term_key: str
    summary: str
    contribution_type: str
    classification: str
    authority: str
    status: str
    provider_id: str
    promoter_identity: str
    generated_at: datetime
    as_of: datetime
    evidence_count: int
    provider_ids: list[str]
    supersedes: str | None
    superseded_by: str | None
    created_at: datetime
    updated_at: datetime
    superseded_at: datetime | None


async def lock_term(project_id: str, term_key: str) -> None:
    """Serialise merge decisions on one term of one project until commit."""
    await db.execute("SELECT pg_advisory_xact_lock($1, hashtext($2))", _TERM_LOCK_SPACE, f"{project_id}/{term_key}")


async def current_entries_with_term(project_id: str, term_key: str) -> list[EntryFacts]:
    """Pending and ready entries of a project with this normalised term."""
    rows = await db.fetch(
        "SELECT id, project_id, term_key, contribution_type, classification, authority, status FROM context_entries"
        " WHERE project_id = $1 AND term_key = $2 AND status IN ('pending', 'ready') ORDER BY id",
        project_id,
        term_key,
    )
    return [
        EntryFacts(
            id=r["id"],
            project_id=r["project_id"],
            term_key=r["term_key"],
            contribution_type=r["contribution_type"],
            classification=r["classification"],
            authority=r["authority"],
            status=r["status"],
        )
        for r in rows
    ]


async def get_entry(entry_id: str, *, for_update: bool = False) -> EntryRow | None:
    """An entry by id, any status; `for_update` locks it until commit."""
    lock = " FOR UPDATE" if for_update else ""
    row = await db.fetchrow(f"SELECT * FROM context_entries WHERE id = $1{lock}", entry_id)
    if row is None:
        return None
    return EntryRow(
        id=row["id"],
        seq=row["seq"],
        workspace_id=row["workspace_id"],
        project_id=row["project_id"],
        term=row["term"],
        term_key=row["term_key"],
        summary=row["summary"],
        contribution_type=row["contribution_type"],
        classification=row["classification"],
        authority=row["authority"],
        status=row["status"],
        provider_id=row["provider_id"],
        promoter_identity=row["promoter_identity"],
        generated_at=row["generated_at"],
        as_of=row["as_of"],
        evidence_count=row["evidence_count"],
        provider_ids=row["provider_ids"],
        supersedes=row["supersedes"],
        superseded_by=row["superseded_by"],
        created_at=row["created_at"],
        updated_at=row["updated_at"],
        superseded_at=row["superseded_at"],
    )


async def entry_project_id(entry_id: str) -> str | None:
    """The project an entry belongs to (the notifications service finds its leads by it)."""
    row = await db.fetchrow("SELECT project_id FROM context_entries WHERE id = $1", entry_id)
    return row["project_id"] if row else None


async def insert_entry(
    *,
    entry_id: str,
    workspace_id: str,
    contribution: ContributionInput,
    term_key: str,
    classification: str,
    authority: str,
    promoter_identity: str,
    supersedes: str | None,
) -> None:
    """A new `pending` entry (it serves once the decision is applied)."""
    await db.execute(
        """
        INSERT INTO context_entries (id, workspace_id, project_id, term, term_key, summary, contribution_type,
            classification, authority, status, provider_id, promoter_identity, generated_at, as_of, supersedes)
        VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, 'pending', $10, $11, $12, $13, $14)
        ON CONFLICT (id) DO NOTHING
        """,
        entry_id,
        workspace_id,
        contribution.project_id,
        contribution.term,
        term_key,
        contribution.summary,
        contribution.contribution_type,
        classification,
        authority,
        contribution.provider_id,
        promoter_identity,
        contribution.generated_at,
        max(e.as_of for e in contribution.evidence),
        supersedes,
    )


async def add_evidence(
    entry_id: str, contribution_id: str, provider_id: str, evidence: tuple[EvidenceInput, ...]
) -> None:
    """Attach a contribution's evidence to an entry and refresh the entry's counts and `as_of`."""
    await db.execute(
        """
        INSERT INTO context_evidence (id, entry_id, contribution_id, provider_id, capability, reference_kind,
            reference_id, reference_class, as_of)
        SELECT u.id, $2, $3, $4, u.capability, u.kind, u.ref_id, u.ref_class, u.as_of
        FROM unnest($1::text[], $5::text[], $6::text[], $7::text[], $8::text[], $9::timestamptz[])
            AS u(id, capability, kind, ref_id, ref_class, as_of)
        ON CONFLICT (entry_id, contribution_id, capability, reference_kind, reference_id) DO NOTHING
        """,
        [new_id("ev") for _ in evidence],
        entry_id,
        contribution_id,
        provider_id,
        [e.capability for e in evidence],
        [e.kind for e in evidence],
        [e.reference_id for e in evidence],
        [e.reference_class for e in evidence],
        [e.as_of for e in evidence],
    )
    await db.execute(
        """
        UPDATE context_entries e SET evidence_count = s.n, provider_ids = s.providers, as_of = s.as_of,
            updated_at = clock_timestamp()
        FROM (SELECT count(*) AS n, array_agg(DISTINCT provider_id ORDER BY provider_id) AS providers,
                     max(as_of) AS as_of FROM context_evidence WHERE entry_id = $1) s
        WHERE e.id = $1
        """,
        entry_id,
    )


async def set_entry_ready(entry_id: str) -> bool:
    """A pending entry starts serving; False if it was not pending (already ready, or superseded meanwhile)."""
    row = await db.fetchrow(
        "UPDATE context_entries SET status = 'ready', updated_at = clock_timestamp()"
        " WHERE id = $1 AND status = 'pending' RETURNING id",
        entry_id,
    )
    return row is not None


async def supersede_entry(old_id: str, successor_id: str) -> bool:
    """Mark a current entry superseded by its successor; False if it was no longer current."""
    row = await db.fetchrow(
        "UPDATE context_entries SET status = 'superseded', superseded_by = $2, superseded_at = clock_timestamp(),"
        " updated_at = clock_timestamp() WHERE id = $1 AND status IN ('pending', 'ready') RETURNING id",
        old_id,
        successor_id,
    )
    return row is not None
