"""What enhancement actions produce: drafts and artifacts, stored with the actions' completion."""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import msgspec
from asyncpg import Record

from groundwork.domain.enhancement.model import ActionOutput, DraftState, EvidenceRef, draft_value_problem
from groundwork.domain.ids import new_id
from groundwork.persistence import db
from groundwork.persistence.repositories.enhancement.run_actions import RunActionRow


class DraftRow(msgspec.Struct, frozen=True, gc=False):
    """A draft an action proposed: the field, its value and evidence (decoded), and whether it was applied."""

    id: str
    run_id: str
    action: str
    field: str
    proposed_value: Any
    confidence: float
    evidence_refs: list[dict[str, str]]
    # Each statement of the proposed value: `{text, relevance, evidenceRefs}`.
    statements: list[dict[str, Any]]
    apply_id: str | None
    applied_at: datetime | None
    created_at: datetime
    # Set when a reviewer rejected the draft: when, by whom (principal id) and why.
    rejected_at: datetime | None = None
    rejected_by: str | None = None
    rejection_reason: str | None = None

    def state(self) -> DraftState:
        """What eligibility rules need, including whether a PATCH would accept the proposed value."""
        return DraftState(
            self.id,
            self.field,
            self.applied_at is not None,
            draft_value_problem(self.field, self.proposed_value),
            self.rejection_reason,
        )


class ArtifactRow(msgspec.Struct, frozen=True, gc=False):
    """An artifact an action produced, its evidence references decoded."""

    id: str
    run_id: str
    action: str
    type: str
    title: str
    summary: str
    body: str
    evidence_refs: list[dict[str, str]]
    created_at: datetime


def draft_row(row: Record) -> DraftRow:
    """A draft from a row with the `enhancement_drafts` columns (its JSON members decoded here)."""
    return DraftRow(
        id=row["id"],
        run_id=row["run_id"],
        action=row["action"],
        field=row["field"],
        proposed_value=json.loads(row["proposed_value"]),
        confidence=row["confidence"],
        evidence_refs=json.loads(row["evidence_refs"]),
        statements=json.loads(row["statements"]),
        apply_id=row["apply_id"],
        applied_at=row["applied_at"],
        created_at=row["created_at"],
        rejected_at=row["rejected_at"],
        rejected_by=row["rejected_by"],
        rejection_reason=row["rejection_reason"],
    )


def artifact_row(row: Record) -> ArtifactRow:
    """An artifact from a row with the `enhancement_artifacts` columns (its evidence decoded here)."""
    return ArtifactRow(
        id=row["id"],
        run_id=row["run_id"],
        action=row["action"],
        type=row["type"],
        title=row["title"],
        summary=row["summary"],
        body=row["body"],
        evidence_refs=json.loads(row["evidence_refs"]),
        created_at=row["created_at"],
    )


def draft_from_json(item: dict[str, Any]) -> DraftRow:
    """A draft from its `json_agg` form (its JSON members already decoded with it)."""
    applied_at = item["applied_at"]
    rejected_at = item.get("rejected_at")
    return DraftRow(
        id=item["id"],
        run_id=item["run_id"],
        action=item["action"],
        field=item["field"],
        proposed_value=item["proposed_value"],
        confidence=item["confidence"],
        evidence_refs=item["evidence_refs"],
        statements=item.get("statements", []),
        apply_id=item["apply_id"],
        applied_at=datetime.fromisoformat(applied_at) if applied_at is not None else None,
        created_at=datetime.fromisoformat(item["created_at"]),
        rejected_at=datetime.fromisoformat(rejected_at) if rejected_at is not None else None,
        rejected_by=item.get("rejected_by"),
        rejection_reason=item.get("rejection_reason"),
    )


def artifact_from_json(item: dict[str, Any]) -> ArtifactRow:
    """An artifact from its `json_agg` form (its JSON members already decoded with it)."""
    return ArtifactRow(
        id=item["id"],
        run_id=item["run_id"],
        action=item["action"],
        type=item["type"],
        title=item["title"],
        summary=item["summary"],
        body=item["body"],
        evidence_refs=item["evidence_refs"],
        created_at=datetime.fromisoformat(item["created_at"]),
    )


def _refs(refs: tuple[EvidenceRef, ...]) -> str:
    return json.dumps([r.as_dict() for r in refs])


@dataclass(frozen=True, slots=True)
class RecordedDraft:
    """A draft just stored: what its `draft_created` event names."""

    id: str
    field: str
    created_at: datetime


async def record_actions_output(
    outputs: list[tuple[RunActionRow, ActionOutput]],
) -> list[tuple[list[RecordedDraft], list[str]]]:
    """Store actions' drafts and artifacts and mark the actions completed (call in a transaction): one round
    trip for all of them. Per action, in order: its drafts and its artifact ids."""
    draft_ids = [[new_id("draft") for _ in output.drafts] for _, output in outputs]
    artifact_ids = [[new_id("art") for _ in output.artifacts] for _, output in outputs]
    drafts = [(a, d) for a, output in outputs for d in output.drafts]
    artifacts = [(a, m) for a, output in outputs for m in output.artifacts]
    row = await db.fetchrow(
        """
        WITH drafts AS (
            INSERT INTO enhancement_drafts (id, run_id, run_action_id, action, field, proposed_value, confidence,
                evidence_refs, statements)
            SELECT d.id, $1, d.action_id, d.action, d.field, d.value::jsonb, d.confidence, d.refs::jsonb,
                d.statements::jsonb
            FROM unnest($2::text[], $3::bigint[], $4::text[], $5::text[], $6::text[], $7::float8[], $8::text[],
                $18::text[])
                WITH ORDINALITY AS d(id, action_id, action, field, value, confidence, refs, statements, position)
            ORDER BY d.position
            RETURNING id, created_at
        ), artifacts AS (
            INSERT INTO enhancement_artifacts (id, run_id, run_action_id, action, type, title, summary, body,
                evidence_refs)
            SELECT a.id, $1, a.action_id, a.action, a.type, a.title, a.summary, a.body, a.refs::jsonb
            FROM unnest($9::text[], $10::bigint[], $11::text[], $12::text[], $13::text[], $14::text[],
                $15::text[], $16::text[])
                WITH ORDINALITY AS a(id, action_id, action, type, title, summary, body, refs, position)
            ORDER BY a.position
            RETURNING id
        ), completed AS (
            UPDATE enhancement_run_actions SET state = 'completed', completed_at = clock_timestamp()
            WHERE id = ANY($17::bigint[]) RETURNING id
        )
        SELECT (SELECT coalesce(json_object_agg(id, created_at), '{}') FROM drafts)::text AS created,
               (SELECT count(*) FROM artifacts) AS artifacts,
               (SELECT count(*) FROM completed) AS completed
        """,
        outputs[0][0].run_id,
        [i for ids in draft_ids for i in ids],
        [a.id for a, _ in drafts],
        [a.action for a, _ in drafts],
        [d.field for _, d in drafts],
        [json.dumps(d.proposed_value) for _, d in drafts],
        [d.confidence for _, d in drafts],
        [_refs(d.evidence_refs) for _, d in drafts],
        [i for ids in artifact_ids for i in ids],
        [a.id for a, _ in artifacts],
        [a.action for a, _ in artifacts],
        [m.type for _, m in artifacts],
        [m.title for _, m in artifacts],
        [m.summary for _, m in artifacts],
        [m.body for _, m in artifacts],
        [_refs(m.evidence_refs) for _, m in artifacts],
        [a.id for a, _ in outputs],
        [json.dumps([s.as_dict() for s in d.statements]) for _, d in drafts],
    )
    assert row is not None and row["completed"] == len(outputs) and row["artifacts"] == len(artifacts)
    created = json.loads(row["created"])
    return [
        (
            [
                RecordedDraft(i, d.field, datetime.fromisoformat(created[i]))
                for i, d in zip(ids, output.drafts, strict=True)
            ],
            artifacts_of,
        )
        for (_, output), ids, artifacts_of in zip(outputs, draft_ids, artifact_ids, strict=True)
    ]


async def outputs_of_action(run_action_id: int) -> tuple[list[DraftRow], list[ArtifactRow]]:
    """What a completed action request produced (for idempotent retries)."""
    drafts = await db.fetch("SELECT * FROM enhancement_drafts WHERE run_action_id = $1 ORDER BY id", run_action_id)
    artifacts = await db.fetch(
        "SELECT * FROM enhancement_artifacts WHERE run_action_id = $1 ORDER BY id", run_action_id
    )
    return [draft_row(r) for r in drafts], [artifact_row(r) for r in artifacts]


async def list_drafts(
    run_id: str,
    *,
    field: str | None = None,
    action: str | None = None,
    ids: list[str] | None = None,
    after_id: str | None = None,
    limit: int | None = None,
    for_update: bool = False,
) -> list[DraftRow]:
    """Drafts of a run, newest first, optionally filtered and paginated."""
    lock = " FOR UPDATE" if for_update else ""
    rows = await db.fetch(
        f"""SELECT * FROM enhancement_drafts
        WHERE run_id = $1 AND ($2::text IS NULL OR field = $2) AND ($3::text IS NULL OR action = $3)
          AND ($4::text[] IS NULL OR id = ANY($4)) AND ($5::text IS NULL OR id < $5)
        ORDER BY id DESC LIMIT $6{lock}""",
        run_id,
        field,
        action,
        ids,
        after_id,
        limit,
    )
    return [draft_row(r) for r in rows]


async def list_artifacts(
    run_id: str, *, type: str | None = None, after_id: str | None = None, limit: int | None = None
) -> list[ArtifactRow]:
    """Artifacts of a run, newest first, optionally filtered by type and paginated."""
    rows = await db.fetch(
        """SELECT * FROM enhancement_artifacts
        WHERE run_id = $1 AND ($2::text IS NULL OR type = $2) AND ($3::text IS NULL OR id < $3)
        ORDER BY id DESC LIMIT $4""",
        run_id,
        type,
        after_id,
        limit,
    )
    return [artifact_row(r) for r in rows]


async def mark_drafts_applied(draft_ids: list[str], apply_id: str) -> None:
    """Mark drafts applied by one apply."""
    await db.execute(
        "UPDATE enhancement_drafts SET apply_id = $2, applied_at = clock_timestamp() WHERE id = ANY($1)",
        draft_ids,
        apply_id,
    )


async def reject_draft(run_id: str, draft_id: str, actor_id: str, reason: str) -> DraftRow | None:
    """Mark an unapplied, unrejected draft of the run rejected (call in a transaction); None when it was not."""
    row = await db.fetchrow(
        "UPDATE enhancement_drafts SET rejected_at = clock_timestamp(), rejected_by = $3, rejection_reason = $4"
        " WHERE run_id = $1 AND id = $2 AND applied_at IS NULL AND rejected_at IS NULL RETURNING *",
        run_id,
        draft_id,
        actor_id,
        reason,
    )
    return draft_row(row) if row else None


async def get_draft(run_id: str, draft_id: str, *, for_update: bool = False) -> DraftRow | None:
    """One draft of a run."""
    lock = " FOR UPDATE" if for_update else ""
    row = await db.fetchrow(f"SELECT * FROM enhancement_drafts WHERE run_id = $1 AND id = $2{lock}", run_id, draft_id)
    return draft_row(row) if row else None
