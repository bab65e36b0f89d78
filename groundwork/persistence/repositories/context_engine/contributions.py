"""Context contributions: persisted once, decided (merged, created, superseding), applied; and the references
a contribution cites, checked against the project."""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from asyncpg import Record

from groundwork.domain.context_engine.contribution import ContributionInput
from groundwork.persistence import db


@dataclass(frozen=True, slots=True)
class ContributionRow:
    """A contribution with its canonical body (decoded), its class and where its decision stands."""

    id: str
    workspace_id: str
    provider_id: str
    project_id: str
    fingerprint: str
    content_fingerprint: str
    body: dict[str, Any]
    term_key: str
    contribution_type: str
    classification: str
    promoter_identity: str
    generated_at: datetime
    state: str
    decision: str | None
    entry_id: str | None
    related_entry_id: str | None
    received_by: str | None
    created_at: datetime
    decided_at: datetime | None
    applied_at: datetime | None


@dataclass(frozen=True, slots=True)
class LatestContributionRow:
    """A provider's newest contribution on one (term, type, class), with the status of the entry it concerns."""

    id: str
    term_key: str
    contribution_type: str
    classification: str
    content_fingerprint: str
    entry_id: str | None
    entry_status: str | None


async def insert_contribution(
    *,
    contribution_id: str,
    workspace_id: str,
    contribution: ContributionInput,
    fingerprint: str,
    content_fingerprint: str,
    term_key: str,
    classification: str,
    promoter_identity: str,
    received_by: str | None,
) -> bool:
    """Persist a contribution once; False when it was already persisted."""
    row = await db.fetchrow(
        """
        INSERT INTO context_contributions (id, workspace_id, provider_id, project_id, fingerprint, content_fingerprint,
            body, term_key, contribution_type, classification, promoter_identity, generated_at, state, received_by)
        VALUES ($1, $2, $3, $4, $5, $6, $7::jsonb, $8, $9, $10, $11, $12, 'persisted', $13)
        ON CONFLICT (provider_id, fingerprint) DO NOTHING RETURNING id
        """,
        contribution_id,
        workspace_id,
        contribution.provider_id,
        contribution.project_id,
        fingerprint,
        content_fingerprint,
        json.dumps(contribution.as_dict()),
        term_key,
        contribution.contribution_type,
        classification,
        promoter_identity,
        contribution.generated_at,
        received_by,
    )
    return row is not None


def _contribution(row: Record) -> ContributionRow:
    return ContributionRow(
        id=row["id"],
        workspace_id=row["workspace_id"],
        provider_id=row["provider_id"],
        project_id=row["project_id"],
        fingerprint=row["fingerprint"],
        content_fingerprint=row["content_fingerprint"],
        body=json.loads(row["body"]),
        term_key=row["term_key"],
        contribution_type=row["contribution_type"],
        classification=row["classification"],
        promoter_identity=row["promoter_identity"],
        generated_at=row["generated_at"],
        state=row["state"],
        decision=row["decision"],
        entry_id=row["entry_id"],
        related_entry_id=row["related_entry_id"],
        received_by=row["received_by"],
        created_at=row["created_at"],
        decided_at=row["decided_at"],
        applied_at=row["applied_at"],
    )


async def get_contribution(contribution_id: str, *, for_update: bool = False) -> ContributionRow | None:
    """A contribution by id; `for_update` locks it until commit."""
    lock = " FOR UPDATE" if for_update else ""
    row = await db.fetchrow(f"SELECT * FROM context_contributions WHERE id = $1{lock}", contribution_id)
    return _contribution(row) if row else None


async def existing_contribution_ids(ids: list[str]) -> set[str]:
    """The subset of `ids` already persisted."""
    rows = await db.fetch("SELECT id FROM context_contributions WHERE id = ANY($1::text[])", ids)
    return {r["id"] for r in rows}


async def latest_contributions_by_key(
    provider_id: str, project_id: str
) -> dict[tuple[str, str, str], LatestContributionRow]:
    """A provider's newest contribution in a project per (normalised term, type, class), with its entry's status."""
    rows = await db.fetch(
        """
        SELECT DISTINCT ON (c.term_key, c.contribution_type, c.classification)
               c.id, c.term_key, c.contribution_type, c.classification, c.content_fingerprint, c.entry_id,
               e.status AS entry_status
        FROM context_contributions c LEFT JOIN context_entries e ON e.id = c.entry_id
        WHERE c.provider_id = $1 AND c.project_id = $2
        ORDER BY c.term_key, c.contribution_type, c.classification, c.created_at DESC, c.id DESC
        """,
        provider_id,
        project_id,
    )
    return {
        (r["term_key"], r["contribution_type"], r["classification"]): LatestContributionRow(
            id=r["id"],
            term_key=r["term_key"],
            contribution_type=r["contribution_type"],
            classification=r["classification"],
            content_fingerprint=r["content_fingerprint"],
            entry_id=r["entry_id"],
            entry_status=r["entry_status"],
        )
        for r in rows
    }


async def set_contribution_decided(
    contribution_id: str, decision: str, entry_id: str, related_entry_id: str | None
) -> None:
    """Record the merge decision and the entry it concerns."""
    await db.execute(
        "UPDATE context_contributions SET state = 'decided', decision = $2, entry_id = $3, related_entry_id = $4,"
        " decided_at = clock_timestamp() WHERE id = $1",
        contribution_id,
        decision,
        entry_id,
        related_entry_id,
    )


async def set_contribution_applied(contribution_id: str) -> None:
    """The decision is applied: the entry serves (or the merge is in)."""
    await db.execute(
        "UPDATE context_contributions SET state = 'applied', applied_at = clock_timestamp() WHERE id = $1",
        contribution_id,
    )


# -- references a contribution cites --------------------------------------------------------------------------


async def passage_classes(project_id: str, passage_ids: list[str]) -> dict[str, str]:
    """The class (its source's classification) of each given passage of the project."""
    rows = await db.fetch(
        "SELECT p.id, s.classification FROM corpus_passages p JOIN corpus_sources s ON s.id = p.source_id"
        " WHERE p.project_id = $1 AND p.id = ANY($2::text[])",
        project_id,
        passage_ids,
    )
    return {r["id"]: r["classification"] for r in rows}


async def work_item_ids_in_project(project_id: str, ids: list[str]) -> set[str]:
    """The subset of `ids` that are work items of the project."""
    rows = await db.fetch("SELECT id FROM work_items WHERE project_id = $1 AND id = ANY($2::text[])", project_id, ids)
    return {r["id"] for r in rows}


async def work_item_history_ids(project_id: str, refs: list[tuple[str, datetime]]) -> set[tuple[str, datetime]]:
    """The subset of (work item, version after) pairs that are history entries of the project's items."""
    rows = await db.fetch(
        """
        SELECT c.work_item_id, c.version_after FROM work_item_changes c JOIN work_items w ON w.id = c.work_item_id
        WHERE w.project_id = $1 AND (c.work_item_id, c.version_after) IN (
            SELECT * FROM unnest($2::text[], $3::timestamptz[]))
        """,
        project_id,
        [r[0] for r in refs],
        [r[1] for r in refs],
    )
    return {(r["work_item_id"], r["version_after"]) for r in rows}
