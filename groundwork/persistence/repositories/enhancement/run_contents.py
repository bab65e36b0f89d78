"""A run's contents (actions, drafts, artifacts) read together: for one run with its row, or for a page of runs."""

from __future__ import annotations

import json

from groundwork.persistence import db
from groundwork.persistence.repositories.enhancement.outputs import (
    ArtifactRow,
    DraftRow,
    artifact_from_json,
    artifact_row,
    draft_from_json,
    draft_row,
)
from groundwork.persistence.repositories.enhancement.run_actions import (
    RunActionRow,
    run_action_from_json,
    run_action_row,
)
from groundwork.persistence.repositories.enhancement.runs import RunRow, run_row


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
        actions[row["run_id"]].append(run_action_row(row))
    for row in await db.fetch(
        "SELECT * FROM enhancement_drafts WHERE run_id = ANY($1) ORDER BY run_id, id DESC", run_ids
    ):
        drafts[row["run_id"]].append(draft_row(row))
    for row in await db.fetch(
        "SELECT * FROM enhancement_artifacts WHERE run_id = ANY($1) ORDER BY run_id, id DESC", run_ids
    ):
        artifacts[row["run_id"]].append(artifact_row(row))
    return actions, drafts, artifacts


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
        run_row(row),
        [run_action_from_json(a) for a in json.loads(row["actions_json"])],
        [draft_from_json(d) for d in json.loads(row["drafts_json"])],
        [artifact_from_json(t) for t in json.loads(row["artifacts_json"])],
    )
