"""Notification change proposals: drafted with their validation and conflicts, applied at most once."""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from asyncpg import Record

from groundwork.domain.ids import new_id
from groundwork.persistence import db


@dataclass(frozen=True, slots=True)
class ProposalRow:
    """A proposal as drafted (its JSON members decoded), whether it was applied, and whether it has expired."""

    id: str
    workspace_id: str
    principal_id: str
    notification_id: str
    requested_outcome: str
    command: str | None
    from_status: str
    to_status: str | None
    expected_version: int | None
    reason: str | None
    evidence_refs: list[dict[str, str]]
    validation_errors: list[dict[str, Any]]
    conflicts: list[dict[str, Any]]
    app_id: str | None
    provenance: str | None
    created_at: datetime
    expires_at: datetime
    applied_at: datetime | None
    operation_id: str | None
    expired: bool  # by the database clock, when the row was read


async def insert_proposal(values: dict[str, Any]) -> ProposalRow:
    """Persist a change proposal."""
    row = await db.fetchrow(
        """
        INSERT INTO notification_proposals (id, workspace_id, principal_id, notification_id, requested_outcome,
            command, from_status, to_status, expected_version, reason, evidence_refs, validation_errors, conflicts,
            app_id, provenance, expires_at)
        VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11::jsonb, $12::jsonb, $13::jsonb, $14, $15,
                clock_timestamp() + make_interval(secs => $16))
        RETURNING *, expires_at <= clock_timestamp() AS expired
        """,
        new_id("ncp"),
        values["workspace_id"],
        values["principal_id"],
        values["notification_id"],
        values["requested_outcome"],
        values["command"],
        values["from_status"],
        values["to_status"],
        values["expected_version"],
        values["reason"],
        json.dumps(values["evidence_refs"]),
        json.dumps(values["validation_errors"]),
        json.dumps(values["conflicts"]),
        values["app_id"],
        values["provenance"],
        values["ttl_seconds"],
    )
    assert row is not None
    return _proposal(row)


def _proposal(row: Record) -> ProposalRow:
    return ProposalRow(
        id=row["id"],
        workspace_id=row["workspace_id"],
        principal_id=row["principal_id"],
        notification_id=row["notification_id"],
        requested_outcome=row["requested_outcome"],
        command=row["command"],
        from_status=row["from_status"],
        to_status=row["to_status"],
        expected_version=row["expected_version"],
        reason=row["reason"],
        evidence_refs=json.loads(row["evidence_refs"]),
        validation_errors=json.loads(row["validation_errors"]),
        conflicts=json.loads(row["conflicts"]),
        app_id=row["app_id"],
        provenance=row["provenance"],
        created_at=row["created_at"],
        expires_at=row["expires_at"],
        applied_at=row["applied_at"],
        operation_id=row["operation_id"],
        expired=row["expired"],
    )


async def get_proposal(principal_id: str, proposal_id: str, *, for_update: bool = False) -> ProposalRow | None:
    """The principal's proposal with this id, with `expired` computed by the database clock."""
    lock = " FOR UPDATE" if for_update else ""
    row = await db.fetchrow(
        f"SELECT *, expires_at <= clock_timestamp() AS expired FROM notification_proposals"
        f" WHERE id = $1 AND principal_id = $2{lock}",
        proposal_id,
        principal_id,
    )
    return _proposal(row) if row else None


async def mark_proposal_applied(proposal_id: str, operation_id: str) -> None:
    """Record that a proposal was applied as an operation."""
    await db.execute(
        "UPDATE notification_proposals SET applied_at = clock_timestamp(), operation_id = $2 WHERE id = $1",
        proposal_id,
        operation_id,
    )
