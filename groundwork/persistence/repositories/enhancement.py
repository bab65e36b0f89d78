"""Enhancement runs, their actions, drafts, artifacts and apply history."""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from groundwork.domain.enhancement.enhancer import Evidence, ReferenceItem
from groundwork.domain.enhancement.model import ActionOutput, DraftState, EvidenceRef, draft_value_problem
from groundwork.domain.ids import new_id
from groundwork.domain.work_items import WorkItem
from groundwork.persistence import db
from groundwork.persistence.repositories.platform import outbox
from groundwork.persistence.repositories.work_items import work_item_of


@dataclass(frozen=True)
class RunRow:
    """A run with its target's live key, title and version."""

    id: str
    workspace_id: str
    project_id: str
    target_id: str
    target_key: str
    target_title: str
    target_version: datetime
    requested_actions: list[str]
    instructions: str
    state: str
    requested_by: str
    code_context: bool
    generator: str
    error_code: str | None
    error_message: str | None
    review_expires_at: datetime | None
    created_at: datetime
    updated_at: datetime
    completed_at: datetime | None


@dataclass(frozen=True)
class DraftRow:
    id: str
    run_id: str
    action: str
    field: str
    proposed_value: Any
    confidence: float
    evidence_refs: list[dict[str, str]]
    apply_id: str | None
    applied_at: datetime | None
    created_at: datetime

    def state(self) -> DraftState:
        """What eligibility rules need, including whether a PATCH would accept the proposed value."""
        return DraftState(
            self.id, self.field, self.applied_at is not None, draft_value_problem(self.field, self.proposed_value)
        )


@dataclass(frozen=True)
class ArtifactRow:
    id: str
    run_id: str
    action: str
    type: str
    title: str
    summary: str
    body: str
    evidence_refs: list[dict[str, str]]
    created_at: datetime


@dataclass(frozen=True)
class RunActionRow:
    id: int
    run_id: str
    request_id: str
    action: str
    instructions: str
    state: str
    error_code: str | None
    created_at: datetime
    completed_at: datetime | None


_RUN_SELECT = """
    SELECT r.*, w.key AS target_key, w.title AS target_title, w.version AS target_version
    FROM enhancement_runs r JOIN work_items w ON w.id = r.target_id
"""


def _run(row: Any) -> RunRow:
    return RunRow(**{name: row[name] for name in RunRow.__dataclass_fields__})


def _draft(row: Any) -> DraftRow:
    values = {name: row[name] for name in DraftRow.__dataclass_fields__}
    values["proposed_value"] = json.loads(row["proposed_value"])
    values["evidence_refs"] = json.loads(row["evidence_refs"])
    return DraftRow(**values)


def _artifact(row: Any) -> ArtifactRow:
    values = {name: row[name] for name in ArtifactRow.__dataclass_fields__}
    values["evidence_refs"] = json.loads(row["evidence_refs"])
    return ArtifactRow(**values)


def _refs(refs: tuple[EvidenceRef, ...]) -> str:
    return json.dumps([r.as_dict() for r in refs])


async def insert_run(
    *,
    run_id: str,
    workspace_id: str,
    project_id: str,
    target_id: str,
    actions: list[str],
    instructions: str,
    requested_by: str,
    code_context: bool,
    generator: str,
    request_key: str | None = None,
) -> None:
    """Insert a queued run and one pending action row per requested action (call in a transaction)."""
    await db.execute(
        "INSERT INTO enhancement_runs (id, workspace_id, project_id, target_id, requested_actions, instructions,"
        " state, requested_by, code_context, generator, request_key)"
        " VALUES ($1, $2, $3, $4, $5, $6, 'queued', $7, $8, $9, $10)",
        run_id,
        workspace_id,
        project_id,
        target_id,
        actions,
        instructions,
        requested_by,
        code_context,
        generator,
        request_key,
    )
    for index, action in enumerate(actions):
        await insert_run_action(run_id, f"create-{index}", action, instructions)


async def insert_run_action(run_id: str, request_id: str, action: str, instructions: str) -> RunActionRow:
    """Record a requested action once per request id; a retry returns the same row."""
    row = await db.fetchrow(
        "INSERT INTO enhancement_run_actions (run_id, request_id, action, instructions, state)"
        " VALUES ($1, $2, $3, $4, 'pending') ON CONFLICT (run_id, request_id) DO UPDATE SET run_id = EXCLUDED.run_id"
        " RETURNING *",
        run_id,
        request_id,
        action,
        instructions,
    )
    assert row is not None
    return RunActionRow(**dict(row))


async def lock_run_actions(run_id: str, request_ids: list[str]) -> dict[str, str]:
    """Lock action requests of a run until commit (in id order); their states by request id."""
    rows = await db.fetch(
        "SELECT request_id, state FROM enhancement_run_actions WHERE run_id = $1 AND request_id = ANY($2::text[])"
        " ORDER BY id FOR UPDATE",
        run_id,
        request_ids,
    )
    return {r["request_id"]: r["state"] for r in rows}


async def list_run_actions(run_id: str) -> list[RunActionRow]:
    """Every action request of a run, in order."""
    rows = await db.fetch("SELECT * FROM enhancement_run_actions WHERE run_id = $1 ORDER BY id", run_id)
    return [RunActionRow(**dict(r)) for r in rows]


async def run_contents(
    run_ids: list[str],
) -> tuple[dict[str, list[RunActionRow]], dict[str, list[DraftRow]], dict[str, list[ArtifactRow]]]:
    """The actions, drafts and artifacts of many runs in three queries (drafts and artifacts newest first)."""
    actions: dict[str, list[RunActionRow]] = {r: [] for r in run_ids}
    drafts: dict[str, list[DraftRow]] = {r: [] for r in run_ids}
    artifacts: dict[str, list[ArtifactRow]] = {r: [] for r in run_ids}
    if not run_ids:
        return actions, drafts, artifacts
    for row in await db.fetch(
        "SELECT * FROM enhancement_run_actions WHERE run_id = ANY($1) ORDER BY run_id, id", run_ids
    ):
        actions[row["run_id"]].append(RunActionRow(**dict(row)))
    for row in await db.fetch(
        "SELECT * FROM enhancement_drafts WHERE run_id = ANY($1) ORDER BY run_id, id DESC", run_ids
    ):
        drafts[row["run_id"]].append(_draft(row))
    for row in await db.fetch(
        "SELECT * FROM enhancement_artifacts WHERE run_id = ANY($1) ORDER BY run_id, id DESC", run_ids
    ):
        artifacts[row["run_id"]].append(_artifact(row))
    return actions, drafts, artifacts


def _when(value: str | None) -> datetime | None:
    return datetime.fromisoformat(value) if value is not None else None


def _action_of(item: dict[str, Any]) -> RunActionRow:
    return RunActionRow(
        **{**item, "created_at": _when(item["created_at"]), "completed_at": _when(item["completed_at"])}
    )


def _draft_of(item: dict[str, Any]) -> DraftRow:
    values = {name: item[name] for name in DraftRow.__dataclass_fields__}
    values["applied_at"], values["created_at"] = _when(item["applied_at"]), _when(item["created_at"])
    return DraftRow(**values)


def _artifact_of(item: dict[str, Any]) -> ArtifactRow:
    values = {name: item[name] for name in ArtifactRow.__dataclass_fields__}
    values["created_at"] = _when(item["created_at"])
    return ArtifactRow(**values)


async def get_run_with_contents(
    workspace_id: str, run_id: str
) -> tuple[RunRow, list[RunActionRow], list[DraftRow], list[ArtifactRow]] | None:
    """A run of the workspace with its actions (in order), drafts and artifacts (newest first): one round trip."""
    row = await db.fetchrow(
        """SELECT r.*, w.key AS target_key, w.title AS target_title, w.version AS target_version,
            (SELECT coalesce(json_agg(a ORDER BY a.id), '[]') FROM enhancement_run_actions a
             WHERE a.run_id = r.id)::text AS actions_json,
            (SELECT coalesce(json_agg(d ORDER BY d.id DESC), '[]') FROM enhancement_drafts d
             WHERE d.run_id = r.id)::text AS drafts_json,
            (SELECT coalesce(json_agg(t ORDER BY t.id DESC), '[]') FROM enhancement_artifacts t
             WHERE t.run_id = r.id)::text AS artifacts_json
        FROM enhancement_runs r JOIN work_items w ON w.id = r.target_id
        WHERE r.id = $1 AND r.workspace_id = $2""",
        run_id,
        workspace_id,
    )
    if row is None:
        return None
    return (
        _run(row),
        [_action_of(a) for a in json.loads(row["actions_json"])],
        [_draft_of(d) for d in json.loads(row["drafts_json"])],
        [_artifact_of(t) for t in json.loads(row["artifacts_json"])],
    )


@dataclass(frozen=True)
class CompletionFacts:
    """What finishing a run needs to know, in one round trip."""

    pending: int
    has_applies: bool
    drafts: int
    artifacts: int


async def completion_facts(run_id: str) -> CompletionFacts:
    """Pending actions, whether anything was applied, and the draft and artifact counts of a run."""
    row = await db.fetchrow(
        """SELECT
            (SELECT count(*) FROM enhancement_run_actions WHERE run_id = $1 AND state = 'pending') AS pending,
            EXISTS (SELECT 1 FROM enhancement_applies WHERE run_id = $1) AS has_applies,
            (SELECT count(*) FROM enhancement_drafts WHERE run_id = $1) AS drafts,
            (SELECT count(*) FROM enhancement_artifacts WHERE run_id = $1) AS artifacts""",
        run_id,
    )
    assert row is not None
    return CompletionFacts(int(row["pending"]), bool(row["has_applies"]), int(row["drafts"]), int(row["artifacts"]))


async def pending_actions(run_id: str) -> list[RunActionRow]:
    """The action requests of a run not yet completed or failed."""
    rows = await db.fetch(
        "SELECT * FROM enhancement_run_actions WHERE run_id = $1 AND state = 'pending' ORDER BY id", run_id
    )
    return [RunActionRow(**dict(r)) for r in rows]


async def store_run_evidence(
    run_id: str, evidence: list[Evidence], references: list[ReferenceItem]
) -> tuple[list[Evidence], list[ReferenceItem]] | None:
    """Keep what a run's actions draw on; the first gathering wins (a retry or a racing one changes nothing).

    Returns the stored copy, exactly as `get_run_evidence` will read it, when this call stored it; None when
    another had already.
    """
    items = [
        {"kind": e.ref.kind, "id": e.ref.id, "text": e.text, "label": e.label, "section": e.section} for e in evidence
    ]
    refs = [{"id": r.id, "key": r.key, "title": r.title, "estimate": r.estimate, "text": r.text} for r in references]
    stored = await db.fetchrow(
        "INSERT INTO enhancement_run_evidence (run_id, items, reference_items) VALUES ($1, $2::jsonb, $3::jsonb)"
        " ON CONFLICT (run_id) DO NOTHING RETURNING true AS stored",
        run_id,
        json.dumps(items),
        json.dumps(refs),
    )
    return _run_evidence(items, refs) if stored is not None else None


async def get_run_evidence(run_id: str) -> tuple[list[Evidence], list[ReferenceItem]] | None:
    """The evidence stored for a run, or None when it was never gathered."""
    row = await db.fetchrow("SELECT items, reference_items FROM enhancement_run_evidence WHERE run_id = $1", run_id)
    if row is None:
        return None
    return _run_evidence(json.loads(row["items"]), json.loads(row["reference_items"]))


def _run_evidence(
    items: list[dict[str, Any]], refs: list[dict[str, Any]]
) -> tuple[list[Evidence], list[ReferenceItem]]:
    evidence = [Evidence(EvidenceRef(i["kind"], i["id"]), i["text"], i["label"], i.get("section")) for i in items]
    references = [ReferenceItem(r["id"], r["key"], r["title"], float(r["estimate"]), r["text"]) for r in refs]
    return evidence, references


async def reference_items(project_id: str, exclude_id: str, limit: int = 20) -> list[ReferenceItem]:
    """Done work items of a project with a numeric estimate, newest first: an estimate's reference class."""
    rows = await db.fetch(
        """SELECT id, key, title, fields FROM work_items
        WHERE project_id = $1 AND id <> $2 AND status = 'done' AND jsonb_typeof(fields->'estimate') = 'number'
        ORDER BY id DESC LIMIT $3""",
        project_id,
        exclude_id,
        limit,
    )
    result = []
    for row in rows:
        fields = json.loads(row["fields"]) if isinstance(row["fields"], str) else dict(row["fields"])
        text = "\n\n".join(f"## {k}\n\n{v}" for k, v in fields.items() if isinstance(v, str) and v.strip())
        result.append(ReferenceItem(row["id"], row["key"], row["title"], float(fields["estimate"]), text))
    return result


async def get_run(workspace_id: str, run_id: str, *, for_update: bool = False) -> RunRow | None:
    """A run of the workspace (with its target's live version); `for_update` locks the run row."""
    lock = " FOR UPDATE OF r" if for_update else ""
    row = await db.fetchrow(f"{_RUN_SELECT} WHERE r.id = $1 AND r.workspace_id = $2{lock}", run_id, workspace_id)
    return _run(row) if row else None


async def touch_run(run_id: str) -> None:
    """Mark a run changed (its `updated_at`) when its actions, drafts or artifacts change without its state."""
    await db.execute("UPDATE enhancement_runs SET updated_at = clock_timestamp() WHERE id = $1", run_id)


async def touch_and_lock_run(run_id: str) -> RunRow | None:
    """Mark a run changed and hold its row until the transaction ends; returns it as changed (one round trip).

    An UPDATE of a non-key column locks the row FOR NO KEY UPDATE, not FOR UPDATE: inserting a draft takes
    a KEY SHARE lock on its run, and a FOR UPDATE taken after such inserts by two concurrent actions of
    one run would deadlock.
    """
    row = await db.fetchrow(
        "UPDATE enhancement_runs r SET updated_at = clock_timestamp() FROM work_items w"
        " WHERE r.id = $1 AND w.id = r.target_id"
        " RETURNING r.*, w.key AS target_key, w.title AS target_title, w.version AS target_version",
        run_id,
    )
    return _run(row) if row else None


async def run_for_request(workspace_id: str, request_key: str) -> RunRow | None:
    """The run an earlier attempt of the same idempotent create request committed, if any."""
    row = await db.fetchrow(
        f"{_RUN_SELECT} WHERE r.workspace_id = $1 AND r.request_key = $2", workspace_id, request_key
    )
    return _run(row) if row else None


@dataclass(frozen=True)
class RunInputs:
    """What an activity performing a run's actions reads first: the run, its actions, its work item now."""

    run: RunRow
    actions: list[RunActionRow]
    item: WorkItem


# The run's target in full (the `work_items` columns, prefixed) and its actions as JSON, beside `r.*`.
_INPUT_COLUMNS = """
    w.key AS target_key, w.title AS target_title, w.version AS target_version, w.status AS target_status,
    w.sprint AS target_sprint, w.watchers AS target_watchers, w.fields AS target_fields,
    (SELECT coalesce(json_agg(a ORDER BY a.id), '[]') FROM enhancement_run_actions a
     WHERE a.run_id = {run}.id)::text AS actions_json
"""


def _run_inputs(row: Any) -> RunInputs:
    run = _run(row)
    item = work_item_of(
        {
            "id": run.target_id,
            "key": row["target_key"],
            "title": row["target_title"],
            "status": row["target_status"],
            "sprint": row["target_sprint"],
            "project_id": run.project_id,
            "workspace_id": run.workspace_id,
            "version": row["target_version"],
            "watchers": row["target_watchers"],
            "fields": row["target_fields"],
        }
    )
    return RunInputs(run, [_action_of(a) for a in json.loads(row["actions_json"])], item)


async def start_run(run_id: str) -> RunInputs | None:
    """queued -> running if the run is queued, and the run as it then is with its actions and work item
    (one round trip); None if unknown."""
    row = await db.fetchrow(
        f"""
        WITH started AS (
            UPDATE enhancement_runs SET state = 'running', updated_at = clock_timestamp()
            WHERE id = $1 AND state = 'queued' RETURNING *
        )
        SELECT s.*, {_INPUT_COLUMNS.format(run="s")}
        FROM started s JOIN work_items w ON w.id = s.target_id
        UNION ALL
        SELECT r.*, {_INPUT_COLUMNS.format(run="r")}
        FROM enhancement_runs r JOIN work_items w ON w.id = r.target_id
        WHERE r.id = $1 AND NOT EXISTS (SELECT 1 FROM started)
        """,
        run_id,
    )
    return _run_inputs(row) if row else None


async def run_inputs(run_id: str) -> RunInputs | None:
    """A run with its actions (in order) and its work item as it is now (one round trip); None if unknown."""
    row = await db.fetchrow(
        f"""SELECT r.*, {_INPUT_COLUMNS.format(run="r")}
        FROM enhancement_runs r JOIN work_items w ON w.id = r.target_id WHERE r.id = $1""",
        run_id,
    )
    return _run_inputs(row) if row else None


async def get_run_by_id(run_id: str, *, for_update: bool = False) -> RunRow | None:
    """A run by id alone (for activities, which act for the workflow, not for a caller)."""
    lock = " FOR UPDATE OF r" if for_update else ""
    row = await db.fetchrow(f"{_RUN_SELECT} WHERE r.id = $1{lock}", run_id)
    return _run(row) if row else None


async def list_runs(
    workspace_id: str,
    project_ids: list[str],
    *,
    state: str | None,
    target_id: str | None,
    action: str | None,
    after_id: str | None,
    limit: int,
) -> list[RunRow]:
    """Runs of the given projects, newest first, after the keyset cursor."""
    rows = await db.fetch(
        f"""{_RUN_SELECT}
        WHERE r.workspace_id = $1 AND r.project_id = ANY($2)
          AND ($3::text IS NULL OR r.state = $3) AND ($4::text IS NULL OR r.target_id = $4)
          AND ($5::text IS NULL OR $5 = ANY(r.requested_actions)
               OR EXISTS (SELECT 1 FROM enhancement_run_actions a WHERE a.run_id = r.id AND a.action = $5))
          AND ($6::text IS NULL OR r.id < $6)
        ORDER BY r.id DESC LIMIT $7""",
        workspace_id,
        project_ids,
        state,
        target_id,
        action,
        after_id,
        limit,
    )
    return [_run(r) for r in rows]


async def set_run_state(
    run_id: str,
    state: str,
    *,
    from_states: tuple[str, ...],
    error_code: str | None = None,
    error_message: str | None = None,
    review_expires_at: datetime | None = None,
    completed: bool = False,
) -> bool:
    """Move a run to `state` if it is in one of `from_states`; False when it was not (a retry, or a race)."""
    status = await db.execute(
        """
        UPDATE enhancement_runs SET state = $2, updated_at = clock_timestamp(),
            error_code = coalesce($4, error_code), error_message = coalesce($5, error_message),
            review_expires_at = coalesce($6, review_expires_at),
            completed_at = CASE WHEN $7 THEN coalesce(completed_at, clock_timestamp()) ELSE completed_at END
        WHERE id = $1 AND state = ANY($3)
        """,
        run_id,
        state,
        list(from_states),
        error_code,
        error_message,
        review_expires_at,
        completed,
    )
    return status.endswith(" 1")


@dataclass(frozen=True)
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
                evidence_refs)
            SELECT d.id, $1, d.action_id, d.action, d.field, d.value::jsonb, d.confidence, d.refs::jsonb
            FROM unnest($2::text[], $3::bigint[], $4::text[], $5::text[], $6::text[], $7::float8[], $8::text[])
                WITH ORDINALITY AS d(id, action_id, action, field, value, confidence, refs, position)
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


async def fail_run_action(run_action_id: int, error_code: str) -> None:
    """Mark an action request failed."""
    await db.execute(
        "UPDATE enhancement_run_actions SET state = 'failed', error_code = $2, completed_at = clock_timestamp()"
        " WHERE id = $1 AND state = 'pending'",
        run_action_id,
        error_code,
    )


async def outputs_of_action(run_action_id: int) -> tuple[list[DraftRow], list[ArtifactRow]]:
    """What a completed action request produced (for idempotent retries)."""
    drafts = await db.fetch("SELECT * FROM enhancement_drafts WHERE run_action_id = $1 ORDER BY id", run_action_id)
    artifacts = await db.fetch(
        "SELECT * FROM enhancement_artifacts WHERE run_action_id = $1 ORDER BY id", run_action_id
    )
    return [_draft(r) for r in drafts], [_artifact(r) for r in artifacts]


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
    return [_draft(r) for r in rows]


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
    return [_artifact(r) for r in rows]


async def mark_drafts_applied(draft_ids: list[str], apply_id: str) -> None:
    """Mark drafts applied by one apply."""
    await db.execute(
        "UPDATE enhancement_drafts SET apply_id = $2, applied_at = clock_timestamp() WHERE id = ANY($1)",
        draft_ids,
        apply_id,
    )


async def insert_apply(
    *,
    apply_id: str,
    run_id: str,
    work_item_id: str,
    draft_ids: list[str],
    expected_target_version: datetime,
    target_version: datetime,
    actor_id: str,
) -> None:
    """Record an apply in the run's history."""
    await db.execute(
        "INSERT INTO enhancement_applies (id, run_id, work_item_id, draft_ids, expected_target_version,"
        " target_version, actor_id) VALUES ($1, $2, $3, $4, $5, $6, $7)",
        apply_id,
        run_id,
        work_item_id,
        draft_ids,
        expected_target_version,
        target_version,
        actor_id,
    )


async def get_apply(apply_id: str) -> dict[str, Any] | None:
    """An earlier apply, for idempotent retries."""
    row = await db.fetchrow("SELECT * FROM enhancement_applies WHERE id = $1", apply_id)
    return dict(row) if row else None


async def list_applies(run_id: str) -> list[dict[str, Any]]:
    """A run's apply history, oldest first."""
    rows = await db.fetch("SELECT * FROM enhancement_applies WHERE run_id = $1 ORDER BY applied_at, id", run_id)
    return [dict(r) for r in rows]


async def queued_runs_older_than(seconds: float, limit: int = 100) -> list[str]:
    """Ids of runs still queued after `seconds` (their workflow may never have started)."""
    rows = await db.fetch(
        "SELECT id FROM enhancement_runs WHERE state = 'queued'"
        " AND created_at < clock_timestamp() - make_interval(secs => $1) ORDER BY created_at LIMIT $2",
        seconds,
        limit,
    )
    return [r["id"] for r in rows]


async def append_run_events(
    run: RunRow, events: list[tuple[str, dict[str, Any]]], occurred_at: datetime, *, actor_id: str
) -> None:
    """Append several `work_item_enhancement.<event>` for the run in one statement, in order (in the change's
    transaction)."""
    await outbox.append_events(
        [
            {
                "type": f"work_item_enhancement.{event}",
                "workspace_id": run.workspace_id,
                "resource_type": "work_item_enhancement_run",
                "resource_id": run.id,
                "actor_id": actor_id,
                "payload": {"run_id": run.id, **payload},
                "occurred_at": occurred_at,
                "project_id": run.project_id,
            }
            for event, payload in events
        ]
    )


async def append_run_event(
    run: RunRow, event: str, payload: dict[str, Any], occurred_at: datetime, *, actor_id: str
) -> None:
    """Append `work_item_enhancement.<event>` for the run (call in the change's transaction)."""
    await append_run_events(run, [(event, payload)], occurred_at, actor_id=actor_id)
