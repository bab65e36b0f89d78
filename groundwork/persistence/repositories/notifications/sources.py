"""What the notification sources read to decide who is told about an event, and what the summary reads."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from groundwork.persistence import db


@dataclass(frozen=True, slots=True)
class RunTargetRow:
    """An enhancement run with its requester and project, and its target work item's key, title and watchers."""

    id: str
    workspace_id: str
    project_id: str
    requested_by: str
    state: str
    work_item_id: str
    work_item_key: str
    work_item_title: str
    watchers: list[str]


@dataclass(frozen=True, slots=True)
class PostedMessageRow:
    """A message with its thread, its sender's display name and every participant's id."""

    id: str
    body: str
    sender_id: str
    thread_id: str
    thread_title: str
    workspace_id: str
    sender_name: str
    participant_ids: list[str]


@dataclass(frozen=True, slots=True)
class SupersededEntryRow:
    """A context entry with its project (id, key, workspace), term, type, class and successor."""

    id: str
    workspace_id: str
    project_id: str
    term: str
    contribution_type: str
    classification: str
    superseded_by: str | None
    project_key: str


@dataclass(frozen=True, slots=True)
class FinishedRunRow:
    """A run that finished, with its work item's key and title."""

    id: str
    state: str
    completed_at: datetime
    updated_at: datetime
    error_code: str | None
    key: str
    title: str


@dataclass(frozen=True, slots=True)
class WatchedApplyRow:
    """An apply to a watched work item: its run, when, how many drafts, and the work item."""

    id: str
    run_id: str
    applied_at: datetime
    draft_count: int | None
    work_item_id: str
    key: str
    title: str


@dataclass(frozen=True, slots=True)
class ReceivedMessageRow:
    """A message someone else posted in a thread, with the thread's title and the sender's display name."""

    id: str
    created_at: datetime
    thread_id: str
    thread_title: str
    sender_name: str


@dataclass(frozen=True, slots=True)
class SupersessionRow:
    """A context entry superseded, with its project's key."""

    id: str
    term: str
    contribution_type: str
    superseded_at: datetime
    project_key: str


async def run_with_target(run_id: str) -> RunTargetRow | None:
    """An enhancement run with its requester, project, counts and target work item (key, title, watchers)."""
    row = await db.fetchrow(
        """
        SELECT r.id, r.workspace_id, r.project_id, r.requested_by, r.state,
               w.id AS work_item_id, w.key AS work_item_key, w.title AS work_item_title, w.watchers
        FROM enhancement_runs r JOIN work_items w ON w.id = r.target_id
        WHERE r.id = $1
        """,
        run_id,
    )
    if row is None:
        return None
    return RunTargetRow(
        id=row["id"],
        workspace_id=row["workspace_id"],
        project_id=row["project_id"],
        requested_by=row["requested_by"],
        state=row["state"],
        work_item_id=row["work_item_id"],
        work_item_key=row["work_item_key"],
        work_item_title=row["work_item_title"],
        watchers=row["watchers"],
    )


async def holding(principal_ids: list[str], project_id: str, permission: str) -> set[str]:
    """The principals among `principal_ids` that hold `permission` on the project (admins always do)."""
    if not principal_ids:
        return set()
    rows = await db.fetch(
        """
        SELECT p.id FROM principals p JOIN projects j ON j.workspace_id = p.workspace_id AND j.id = $2
        WHERE p.id = ANY($1::text[]) AND (p.is_admin OR EXISTS (
            SELECT 1 FROM memberships m JOIN roles r ON r.name = m.role
            WHERE m.principal_id = p.id AND m.project_id = j.id AND $3 = ANY(r.permissions)))
        """,
        principal_ids,
        project_id,
        permission,
    )
    return {r["id"] for r in rows}


async def workspace_admins(workspace_id: str) -> list[str]:
    """Ids of the workspace's admins."""
    rows = await db.fetch("SELECT id FROM principals WHERE workspace_id = $1 AND is_admin ORDER BY id", workspace_id)
    return [r["id"] for r in rows]


async def message_with_thread(message_id: str) -> PostedMessageRow | None:
    """A message with its thread, its sender's display name and every participant's id."""
    row = await db.fetchrow(
        """
        SELECT m.id, m.body, m.sender_id, t.id AS thread_id, t.title AS thread_title, t.workspace_id,
               s.display_name AS sender_name,
               (SELECT array_agg(p.principal_id ORDER BY p.principal_id) FROM message_thread_participants p
                WHERE p.thread_id = t.id) AS participant_ids
        FROM messages m JOIN message_threads t ON t.id = m.thread_id JOIN principals s ON s.id = m.sender_id
        WHERE m.id = $1
        """,
        message_id,
    )
    if row is None:
        return None
    return PostedMessageRow(
        id=row["id"],
        body=row["body"],
        sender_id=row["sender_id"],
        thread_id=row["thread_id"],
        thread_title=row["thread_title"],
        workspace_id=row["workspace_id"],
        sender_name=row["sender_name"],
        participant_ids=row["participant_ids"] or [],
    )


async def superseded_entry(entry_id: str) -> SupersededEntryRow | None:
    """A context entry with its project (id, key, workspace), term, type and class."""
    row = await db.fetchrow(
        """
        SELECT e.id, e.workspace_id, e.project_id, e.term, e.contribution_type, e.classification,
               e.superseded_by, j.key AS project_key
        FROM context_entries e JOIN projects j ON j.id = e.project_id
        WHERE e.id = $1
        """,
        entry_id,
    )
    if row is None:
        return None
    return SupersededEntryRow(
        id=row["id"],
        workspace_id=row["workspace_id"],
        project_id=row["project_id"],
        term=row["term"],
        contribution_type=row["contribution_type"],
        classification=row["classification"],
        superseded_by=row["superseded_by"],
        project_key=row["project_key"],
    )


async def project_leads(project_id: str) -> list[str]:
    """Ids of the principals who lead the project (membership role `lead`)."""
    rows = await db.fetch(
        "SELECT principal_id FROM memberships WHERE project_id = $1 AND role = 'lead' ORDER BY principal_id",
        project_id,
    )
    return [r["principal_id"] for r in rows]


# ---------------------------------------------------------------------------------------------- summaries


async def runs_finished(principal_id: str, project_ids: list[str], since: datetime) -> list[FinishedRunRow]:
    """Runs the principal requested that finished (ready for review, or failed) since a time, in visible projects."""
    rows = await db.fetch(
        """
        SELECT r.id, r.state, r.completed_at, r.updated_at, r.error_code, w.key, w.title
        FROM enhancement_runs r JOIN work_items w ON w.id = r.target_id
        WHERE r.requested_by = $1 AND r.project_id = ANY($2::text[]) AND r.completed_at >= $3
          AND r.state IN ('ready_for_review', 'applied', 'failed', 'expired')
        """,
        principal_id,
        project_ids,
        since,
    )
    return [
        FinishedRunRow(
            id=r["id"],
            state=r["state"],
            completed_at=r["completed_at"],
            updated_at=r["updated_at"],
            error_code=r["error_code"],
            key=r["key"],
            title=r["title"],
        )
        for r in rows
    ]


async def applies_to_watched(principal_id: str, project_ids: list[str], since: datetime) -> list[WatchedApplyRow]:
    """Applies since a time to work items the principal watches, in visible projects."""
    rows = await db.fetch(
        """
        SELECT a.id, a.run_id, a.applied_at, array_length(a.draft_ids, 1) AS draft_count,
               w.id AS work_item_id, w.key, w.title
        FROM enhancement_applies a JOIN work_items w ON w.id = a.work_item_id
        WHERE $1 = ANY(w.watchers) AND w.project_id = ANY($2::text[]) AND a.applied_at >= $3
        """,
        principal_id,
        project_ids,
        since,
    )
    return [
        WatchedApplyRow(
            id=r["id"],
            run_id=r["run_id"],
            applied_at=r["applied_at"],
            draft_count=r["draft_count"],
            work_item_id=r["work_item_id"],
            key=r["key"],
            title=r["title"],
        )
        for r in rows
    ]


async def messages_to(principal_id: str, since: datetime) -> list[ReceivedMessageRow]:
    """Messages since a time by others in threads the principal takes part in."""
    rows = await db.fetch(
        """
        SELECT m.id, m.created_at, m.thread_id, t.title AS thread_title, s.display_name AS sender_name
        FROM message_thread_participants p
        JOIN messages m ON m.thread_id = p.thread_id
        JOIN message_threads t ON t.id = p.thread_id
        JOIN principals s ON s.id = m.sender_id
        WHERE p.principal_id = $1 AND m.sender_id <> $1 AND m.created_at >= $2
        """,
        principal_id,
        since,
    )
    return [
        ReceivedMessageRow(
            id=r["id"],
            created_at=r["created_at"],
            thread_id=r["thread_id"],
            thread_title=r["thread_title"],
            sender_name=r["sender_name"],
        )
        for r in rows
    ]


async def entries_superseded(project_ids: list[str], classes: list[str], since: datetime) -> list[SupersessionRow]:
    """Context entries of the given classes superseded since a time in the given projects."""
    rows = await db.fetch(
        """
        SELECT e.id, e.term, e.contribution_type, e.superseded_at, j.key AS project_key
        FROM context_entries e JOIN projects j ON j.id = e.project_id
        WHERE e.project_id = ANY($1::text[]) AND e.classification = ANY($2::text[])
          AND e.status = 'superseded' AND e.superseded_at >= $3
        """,
        project_ids,
        classes,
        since,
    )
    return [
        SupersessionRow(
            id=r["id"],
            term=r["term"],
            contribution_type=r["contribution_type"],
            superseded_at=r["superseded_at"],
            project_key=r["project_key"],
        )
        for r in rows
    ]
