"""Enhancement runs: their rows (with their target's live key, title and version), their state, the inputs an
activity reads, and their lifecycle events."""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import msgspec
from asyncpg import Record

from groundwork.domain.work_items import WorkItem
from groundwork.persistence import db
from groundwork.persistence.repositories.enhancement.run_actions import (
    RunActionRow,
    insert_run_action,
    run_action_from_json,
)
from groundwork.persistence.repositories.platform import outbox
from groundwork.persistence.repositories.work_items import work_item_of


# Structs rather than dataclasses for a run and its contents, as on every hot path: every read of a run builds
# them, and a frozen dataclass costs several times as much to build.
class RunRow(msgspec.Struct, frozen=True, gc=False):
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


_RUN_SELECT = """
    SELECT r.*, w.key AS target_key, w.title AS target_title, w.version AS target_version
    FROM enhancement_runs r JOIN work_items w ON w.id = r.target_id
"""


def run_row(row: Record) -> RunRow:
    """A run from a row with the `enhancement_runs` columns and its target's key, title and version."""
    return RunRow(
        id=row["id"],
        workspace_id=row["workspace_id"],
        project_id=row["project_id"],
        target_id=row["target_id"],
        target_key=row["target_key"],
        target_title=row["target_title"],
        target_version=row["target_version"],
        requested_actions=row["requested_actions"],
        instructions=row["instructions"],
        state=row["state"],
        requested_by=row["requested_by"],
        code_context=row["code_context"],
        generator=row["generator"],
        error_code=row["error_code"],
        error_message=row["error_message"],
        review_expires_at=row["review_expires_at"],
        created_at=row["created_at"],
        updated_at=row["updated_at"],
        completed_at=row["completed_at"],
    )


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


async def get_run(workspace_id: str, run_id: str, *, for_update: bool = False) -> RunRow | None:
    """A run of the workspace (with its target's live version); `for_update` locks the run row."""
    lock = " FOR UPDATE OF r" if for_update else ""
    row = await db.fetchrow(f"{_RUN_SELECT} WHERE r.id = $1 AND r.workspace_id = $2{lock}", run_id, workspace_id)
    return run_row(row) if row else None


async def get_run_by_id(run_id: str, *, for_update: bool = False) -> RunRow | None:
    """A run by id alone (for activities, which act for the workflow, not for a caller)."""
    lock = " FOR UPDATE OF r" if for_update else ""
    row = await db.fetchrow(f"{_RUN_SELECT} WHERE r.id = $1{lock}", run_id)
    return run_row(row) if row else None


async def run_for_request(workspace_id: str, request_key: str) -> RunRow | None:
    """The run an earlier attempt of the same idempotent create request committed, if any."""
    row = await db.fetchrow(
        f"{_RUN_SELECT} WHERE r.workspace_id = $1 AND r.request_key = $2", workspace_id, request_key
    )
    return run_row(row) if row else None


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
    return [run_row(r) for r in rows]


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
    return run_row(row) if row else None


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


async def open_runs_among(run_ids: list[str]) -> list[str]:
    """Which of these runs are still open (queued, running or reviewable)."""
    rows = await db.fetch(
        "SELECT id FROM enhancement_runs WHERE id = ANY($1::text[])"
        " AND state IN ('queued', 'running', 'ready_for_review', 'applied') ORDER BY id",
        run_ids,
    )
    return [r["id"] for r in rows]


async def queued_runs_older_than(seconds: float, limit: int = 100) -> list[str]:
    """Ids of runs still queued after `seconds` (their workflow may never have started)."""
    rows = await db.fetch(
        "SELECT id FROM enhancement_runs WHERE state = 'queued'"
        " AND created_at < clock_timestamp() - make_interval(secs => $1) ORDER BY created_at LIMIT $2",
        seconds,
        limit,
    )
    return [r["id"] for r in rows]


@dataclass(frozen=True, slots=True)
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


@dataclass(frozen=True, slots=True)
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


def _run_inputs(row: Record) -> RunInputs:
    run = run_row(row)
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
    return RunInputs(run, [run_action_from_json(a) for a in json.loads(row["actions_json"])], item)


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
