"""What an evidence search may reach, read in one round trip before it touches the index."""

from __future__ import annotations

from dataclasses import dataclass

from groundwork.persistence import db


@dataclass(frozen=True, slots=True)
class SearchScope:
    """What a search may reach: whether the subject exists, its child projects, those the caller may read
    (`permission`), and every project of the workspace (so a filter can name the smaller side)."""

    subject_exists: bool
    child_project_ids: list[str]
    readable_project_ids: list[str]
    workspace_project_ids: list[str]


_SUBJECT_CHILDREN = {
    "project": "SELECT p.id FROM projects p WHERE p.workspace_id = $1 AND p.id = $2",
    "engagement": "SELECT p.id FROM projects p WHERE p.workspace_id = $1 AND p.engagement_id = $2",
    "portfolio": (
        "SELECT p.id FROM projects p JOIN engagements e ON e.id = p.engagement_id"
        " WHERE p.workspace_id = $1 AND e.portfolio_id = $2"
    ),
}
_SUBJECT_EXISTS = {
    "project": "SELECT 1 FROM projects WHERE workspace_id = $1 AND id = $2",
    "engagement": "SELECT 1 FROM engagements WHERE workspace_id = $1 AND id = $2",
    "portfolio": "SELECT 1 FROM portfolios WHERE workspace_id = $1 AND id = $2",
}


async def search_scope(
    workspace_id: str, principal_id: str, is_admin: bool, subject_type: str, subject_id: str, permission: str
) -> SearchScope:
    """One round trip for everything a search needs to know before it touches the index."""
    if subject_type not in _SUBJECT_CHILDREN:
        raise ValueError(f"unknown subject type {subject_type!r}")
    # Same visibility rule as tenancy.visible_project_ids: admins see all, others by a role's permission.
    row = await db.fetchrow(
        f"""
        WITH children AS ({_SUBJECT_CHILDREN[subject_type]})
        SELECT EXISTS ({_SUBJECT_EXISTS[subject_type]}) AS subject_exists,
               ARRAY(SELECT id FROM children ORDER BY id) AS child_ids,
               ARRAY(SELECT c.id FROM children c WHERE $4::boolean OR EXISTS (
                   SELECT 1 FROM memberships m JOIN roles r ON r.name = m.role
                   WHERE m.project_id = c.id AND m.principal_id = $3 AND $5 = ANY(r.permissions)) ORDER BY c.id)
                 AS readable_ids,
               ARRAY(SELECT id FROM projects WHERE workspace_id = $1 ORDER BY id) AS workspace_ids
        """,
        workspace_id,
        subject_id,
        principal_id,
        is_admin,
        permission,
    )
    assert row is not None
    return SearchScope(
        bool(row["subject_exists"]), list(row["child_ids"]), list(row["readable_ids"]), list(row["workspace_ids"])
    )
