"""A workspace's structure as its admins manage it: portfolios, engagements, projects, members and the directory."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from asyncpg import Record

from groundwork.persistence import db
from groundwork.persistence.repositories.tenancy.workspaces import (
    EngagementRow,
    PortfolioRow,
    PrincipalRow,
    WorkspaceRow,
)


@dataclass(frozen=True, slots=True)
class AdminProjectRow:
    """A project with its engagement and portfolio, and when it was archived (None: active)."""

    id: str
    key: str
    name: str
    created_at: datetime
    archived_at: datetime | None
    engagement_id: str
    engagement_name: str
    portfolio_id: str
    portfolio_name: str


@dataclass(frozen=True, slots=True)
class MemberRow:
    """A principal's role on a project."""

    principal_id: str
    name: str
    kind: str
    role: str
    created_at: datetime


@dataclass(frozen=True, slots=True)
class DirectoryRow:
    """A principal as others may address it: id, name and kind, nothing of its activity."""

    id: str
    name: str
    kind: str


@dataclass(frozen=True, slots=True)
class ProjectRoleRow:
    """The caller's role on one project."""

    project_id: str
    project_key: str
    role: str


async def list_portfolios(workspace_id: str, *, after_id: str | None, limit: int) -> list[PortfolioRow]:
    """A workspace's portfolios, newest first."""
    rows = await db.fetch(
        "SELECT * FROM portfolios WHERE workspace_id = $1 AND ($2::text IS NULL OR id < $2) ORDER BY id DESC LIMIT $3",
        workspace_id,
        after_id,
        limit,
    )
    return [PortfolioRow(r["id"], r["workspace_id"], r["name"], r["created_at"]) for r in rows]


async def portfolio(workspace_id: str, portfolio_id: str) -> PortfolioRow | None:
    """A portfolio of the workspace."""
    r = await db.fetchrow("SELECT * FROM portfolios WHERE id = $1 AND workspace_id = $2", portfolio_id, workspace_id)
    return PortfolioRow(r["id"], r["workspace_id"], r["name"], r["created_at"]) if r else None


async def engagement(workspace_id: str, engagement_id: str) -> EngagementRow | None:
    """An engagement of the workspace."""
    r = await db.fetchrow("SELECT * FROM engagements WHERE id = $1 AND workspace_id = $2", engagement_id, workspace_id)
    return EngagementRow(r["id"], r["workspace_id"], r["portfolio_id"], r["name"], r["created_at"]) if r else None


async def portfolio_in(workspace_id: str, portfolio_id: str) -> bool:
    """Whether the portfolio belongs to the workspace."""
    found = await db.fetchrow(
        "SELECT 1 FROM portfolios WHERE id = $1 AND workspace_id = $2", portfolio_id, workspace_id
    )
    return found is not None


async def engagement_in(workspace_id: str, engagement_id: str) -> bool:
    """Whether the engagement belongs to the workspace."""
    found = await db.fetchrow(
        "SELECT 1 FROM engagements WHERE id = $1 AND workspace_id = $2", engagement_id, workspace_id
    )
    return found is not None


async def list_engagements(
    workspace_id: str, portfolio_id: str | None, *, after_id: str | None, limit: int
) -> list[EngagementRow]:
    """A workspace's engagements (of one portfolio when given), newest first."""
    rows = await db.fetch(
        """
        SELECT * FROM engagements
        WHERE workspace_id = $1 AND ($2::text IS NULL OR portfolio_id = $2) AND ($3::text IS NULL OR id < $3)
        ORDER BY id DESC LIMIT $4
        """,
        workspace_id,
        portfolio_id,
        after_id,
        limit,
    )
    return [EngagementRow(r["id"], r["workspace_id"], r["portfolio_id"], r["name"], r["created_at"]) for r in rows]


def _admin_project(row: Record) -> AdminProjectRow:
    return AdminProjectRow(
        id=row["id"],
        key=row["key"],
        name=row["name"],
        created_at=row["created_at"],
        archived_at=row["archived_at"],
        engagement_id=row["engagement_id"],
        engagement_name=row["engagement_name"],
        portfolio_id=row["portfolio_id"],
        portfolio_name=row["portfolio_name"],
    )


async def admin_project(workspace_id: str, project_id: str) -> AdminProjectRow | None:
    """A project of the workspace with its engagement and portfolio."""
    row = await db.fetchrow(
        """
        SELECT p.id, p.key, p.name, p.created_at, p.archived_at,
               e.id AS engagement_id, e.name AS engagement_name, f.id AS portfolio_id, f.name AS portfolio_name
        FROM projects p JOIN engagements e ON e.id = p.engagement_id JOIN portfolios f ON f.id = e.portfolio_id
        WHERE p.id = $1 AND p.workspace_id = $2
        """,
        project_id,
        workspace_id,
    )
    return _admin_project(row) if row else None


async def project_key_taken(workspace_id: str, key: str) -> bool:
    """Whether a project of the workspace already has this key."""
    found = await db.fetchrow("SELECT 1 FROM projects WHERE workspace_id = $1 AND key = $2", workspace_id, key)
    return found is not None


async def update_project(project_id: str, name: str | None, archived: bool | None) -> None:
    """Rename a project and/or archive (or restore) it; an archived project keeps its first archive time."""
    await db.execute(
        """
        UPDATE projects SET name = coalesce($2, name),
            archived_at = CASE WHEN $3::boolean IS NULL THEN archived_at
                               WHEN $3 THEN coalesce(archived_at, clock_timestamp()) ELSE NULL END
        WHERE id = $1
        """,
        project_id,
        name,
        archived,
    )


async def project_archived(project_id: str) -> bool:
    """Whether the project is archived."""
    row = await db.fetchrow("SELECT archived_at FROM projects WHERE id = $1", project_id)
    return row is not None and row["archived_at"] is not None


async def members(project_id: str) -> list[MemberRow]:
    """A project's members with their roles, by name."""
    rows = await db.fetch(
        """
        SELECT p.id, p.name, p.kind, m.role, m.created_at FROM memberships m JOIN principals p ON p.id = m.principal_id
        WHERE m.project_id = $1 ORDER BY p.name
        """,
        project_id,
    )
    return [MemberRow(r["id"], r["name"], r["kind"], r["role"], r["created_at"]) for r in rows]


async def remove_membership(principal_id: str, project_id: str) -> bool:
    """Take a principal's role on a project away; False when it had none."""
    status = await db.execute(
        "DELETE FROM memberships WHERE principal_id = $1 AND project_id = $2", principal_id, project_id
    )
    return status != "DELETE 0"


async def project_roles(principal_id: str) -> list[ProjectRoleRow]:
    """The principal's roles, by project key."""
    rows = await db.fetch(
        """
        SELECT j.id, j.key, m.role FROM memberships m JOIN projects j ON j.id = m.project_id
        WHERE m.principal_id = $1 ORDER BY j.key
        """,
        principal_id,
    )
    return [ProjectRoleRow(r["id"], r["key"], r["role"]) for r in rows]


async def directory(
    workspace_id: str,
    caller_id: str,
    *,
    everyone: bool,
    query: str | None,
    project_id: str | None,
    after_name: str | None,
    limit: int,
) -> list[DirectoryRow]:
    """Principals (not internal providers) who share a project with the caller (`everyone`: all of the
    workspace), optionally members of one project and whose name contains `query`, by name."""
    rows = await db.fetch(
        """
        SELECT p.id, p.name, p.kind FROM principals p
        WHERE p.workspace_id = $1 AND p.kind <> 'provider'
          AND ($3::boolean OR p.id = $2 OR EXISTS (
              SELECT 1 FROM memberships theirs JOIN memberships mine
                ON mine.project_id = theirs.project_id AND mine.principal_id = $2
              WHERE theirs.principal_id = p.id))
          AND ($4::text IS NULL OR strpos(lower(p.name), lower($4)) > 0)
          AND ($5::text IS NULL OR EXISTS (
              SELECT 1 FROM memberships m WHERE m.principal_id = p.id AND m.project_id = $5))
          AND ($6::text IS NULL OR p.name > $6)
        ORDER BY p.name LIMIT $7
        """,
        workspace_id,
        caller_id,
        everyone,
        query,
        project_id,
        after_name,
        limit,
    )
    return [DirectoryRow(r["id"], r["name"], r["kind"]) for r in rows]


async def workspace_by_id(workspace_id: str) -> WorkspaceRow | None:
    """The workspace with this id."""
    r = await db.fetchrow("SELECT * FROM workspaces WHERE id = $1", workspace_id)
    return WorkspaceRow(r["id"], r["slug"], r["name"], r["created_at"]) if r else None


async def admins_of(workspace_id: str) -> list[PrincipalRow]:
    """The workspace's admins, oldest first."""
    rows = await db.fetch(
        "SELECT * FROM principals WHERE workspace_id = $1 AND is_admin ORDER BY created_at, id", workspace_id
    )
    return [
        PrincipalRow(
            r["id"], r["workspace_id"], r["name"], r["display_name"], r["kind"], r["is_admin"], r["created_at"]
        )
        for r in rows
    ]
