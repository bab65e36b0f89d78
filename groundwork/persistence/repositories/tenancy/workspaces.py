"""Workspaces, principals, portfolios, engagements, projects and memberships."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from asyncpg import Record

from groundwork.domain.ids import new_id
from groundwork.domain.tenancy.principals import Principal
from groundwork.persistence import db

_VISIBLE = """
    p.workspace_id = $1
    AND ($2::boolean OR EXISTS (
        SELECT 1 FROM memberships m JOIN roles r ON r.name = m.role
        WHERE m.project_id = p.id AND m.principal_id = $3 AND $4 = ANY(r.permissions)))
"""


@dataclass(frozen=True, slots=True)
class WorkspaceRow:
    """A workspace: its unique slug and its name."""

    id: str
    slug: str
    name: str
    created_at: datetime


@dataclass(frozen=True, slots=True)
class PrincipalRow:
    """A principal of a workspace (a user, service, agent or provider), and whether it is a workspace admin."""

    id: str
    workspace_id: str
    name: str
    display_name: str
    kind: str
    is_admin: bool
    created_at: datetime


@dataclass(frozen=True, slots=True)
class PortfolioRow:
    """A portfolio of a workspace."""

    id: str
    workspace_id: str
    name: str
    created_at: datetime


@dataclass(frozen=True, slots=True)
class EngagementRow:
    """An engagement under a portfolio."""

    id: str
    workspace_id: str
    portfolio_id: str
    name: str
    created_at: datetime


@dataclass(frozen=True, slots=True)
class ProjectRow:
    """A project under an engagement; its key prefixes its work items' keys."""

    id: str
    workspace_id: str
    engagement_id: str
    key: str
    name: str
    created_at: datetime


@dataclass(frozen=True, slots=True)
class VisibleProjectRow:
    """A project the caller sees, with its engagement and portfolio."""

    id: str
    key: str
    name: str
    created_at: datetime
    engagement_id: str
    engagement_name: str
    portfolio_id: str
    portfolio_name: str


def _workspace(row: Record) -> WorkspaceRow:
    return WorkspaceRow(id=row["id"], slug=row["slug"], name=row["name"], created_at=row["created_at"])


def _principal(row: Record) -> PrincipalRow:
    return PrincipalRow(
        id=row["id"],
        workspace_id=row["workspace_id"],
        name=row["name"],
        display_name=row["display_name"],
        kind=row["kind"],
        is_admin=row["is_admin"],
        created_at=row["created_at"],
    )


async def create_workspace(slug: str, name: str) -> WorkspaceRow:
    """Insert a workspace; the slug is unique."""
    row = await db.fetchrow(
        "INSERT INTO workspaces (id, slug, name) VALUES ($1, $2, $3) RETURNING *", new_id("ws"), slug, name
    )
    assert row is not None
    return _workspace(row)


async def get_workspace_by_slug(slug: str) -> WorkspaceRow | None:
    """The workspace with this slug, if any."""
    row = await db.fetchrow("SELECT * FROM workspaces WHERE slug = $1", slug)
    return _workspace(row) if row else None


async def all_workspaces() -> list[WorkspaceRow]:
    """Every workspace, by slug."""
    return [_workspace(r) for r in await db.fetch("SELECT * FROM workspaces ORDER BY slug")]


async def create_principal(
    workspace_id: str,
    name: str,
    *,
    kind: str = "user",
    display_name: str | None = None,
    is_admin: bool = False,
) -> PrincipalRow:
    """Insert a principal of the workspace."""
    row = await db.fetchrow(
        "INSERT INTO principals (id, workspace_id, name, display_name, kind, is_admin)"
        " VALUES ($1, $2, $3, $4, $5, $6) RETURNING *",
        new_id("prn"),
        workspace_id,
        name,
        display_name or name,
        kind,
        is_admin,
    )
    assert row is not None
    return _principal(row)


async def get_principal_by_name(workspace_id: str, name: str) -> PrincipalRow | None:
    """The principal with this name in the workspace, if any."""
    row = await db.fetchrow("SELECT * FROM principals WHERE workspace_id = $1 AND name = $2", workspace_id, name)
    return _principal(row) if row else None


async def get_principal(principal_id: str) -> PrincipalRow | None:
    """The principal with this id, if any."""
    row = await db.fetchrow("SELECT * FROM principals WHERE id = $1", principal_id)
    return _principal(row) if row else None


async def set_principal_admin(principal_id: str, is_admin: bool) -> None:
    """Make a principal a workspace admin, or not."""
    await db.execute("UPDATE principals SET is_admin = $2 WHERE id = $1", principal_id, is_admin)


async def principal_ids_in_workspace(workspace_id: str, ids: list[str]) -> set[str]:
    """The subset of `ids` that are principals of the workspace."""
    rows = await db.fetch("SELECT id FROM principals WHERE workspace_id = $1 AND id = ANY($2)", workspace_id, ids)
    return {r["id"] for r in rows}


async def create_portfolio(workspace_id: str, name: str) -> PortfolioRow:
    """Insert a portfolio."""
    row = await db.fetchrow(
        "INSERT INTO portfolios (id, workspace_id, name) VALUES ($1, $2, $3) RETURNING *",
        new_id("pf"),
        workspace_id,
        name,
    )
    assert row is not None
    return PortfolioRow(id=row["id"], workspace_id=row["workspace_id"], name=row["name"], created_at=row["created_at"])


async def create_engagement(workspace_id: str, portfolio_id: str, name: str) -> EngagementRow:
    """Insert an engagement under a portfolio."""
    row = await db.fetchrow(
        "INSERT INTO engagements (id, workspace_id, portfolio_id, name) VALUES ($1, $2, $3, $4) RETURNING *",
        new_id("eng"),
        workspace_id,
        portfolio_id,
        name,
    )
    assert row is not None
    return EngagementRow(
        id=row["id"],
        workspace_id=row["workspace_id"],
        portfolio_id=row["portfolio_id"],
        name=row["name"],
        created_at=row["created_at"],
    )


async def create_project(workspace_id: str, engagement_id: str, key: str, name: str) -> ProjectRow:
    """Insert a project under an engagement; its key prefixes its work items' keys."""
    row = await db.fetchrow(
        "INSERT INTO projects (id, workspace_id, engagement_id, key, name) VALUES ($1, $2, $3, $4, $5) RETURNING *",
        new_id("prj"),
        workspace_id,
        engagement_id,
        key,
        name,
    )
    assert row is not None
    return _project(row)


def _project(row: Record) -> ProjectRow:
    return ProjectRow(
        id=row["id"],
        workspace_id=row["workspace_id"],
        engagement_id=row["engagement_id"],
        key=row["key"],
        name=row["name"],
        created_at=row["created_at"],
    )


async def project_by_id(project_id: str) -> ProjectRow | None:
    """A project by id."""
    row = await db.fetchrow("SELECT * FROM projects WHERE id = $1", project_id)
    return _project(row) if row else None


async def project_by_key(workspace_slug: str, key: str) -> ProjectRow | None:
    """A project by its key within the workspace with this slug."""
    row = await db.fetchrow(
        "SELECT p.* FROM projects p JOIN workspaces w ON w.id = p.workspace_id WHERE w.slug = $1 AND p.key = $2",
        workspace_slug,
        key,
    )
    return _project(row) if row else None


async def projects_by_id(project_ids: list[str]) -> list[ProjectRow]:
    """Projects by id, by key."""
    rows = await db.fetch("SELECT * FROM projects WHERE id = ANY($1::text[]) ORDER BY key", project_ids)
    return [_project(r) for r in rows]


async def projects_of_workspace(workspace_id: str) -> list[ProjectRow]:
    """Every project of a workspace, by key."""
    rows = await db.fetch("SELECT * FROM projects WHERE workspace_id = $1 ORDER BY key", workspace_id)
    return [_project(r) for r in rows]


async def add_membership(principal_id: str, project_id: str, role: str) -> None:
    """Bind a principal to a project with a role (replacing an earlier role)."""
    await db.execute(
        "INSERT INTO memberships (principal_id, project_id, role) VALUES ($1, $2, $3)"
        " ON CONFLICT (principal_id, project_id) DO UPDATE SET role = EXCLUDED.role",
        principal_id,
        project_id,
        role,
    )


async def visible_projects(principal: Principal, permission: str = "project:read") -> list[VisibleProjectRow]:
    """The caller's projects holding `permission`, with their engagement and portfolio, by key."""
    rows = await db.fetch(
        f"""
        SELECT p.id, p.key, p.name, p.created_at,
               e.id AS engagement_id, e.name AS engagement_name,
               f.id AS portfolio_id, f.name AS portfolio_name
        FROM projects p
        JOIN engagements e ON e.id = p.engagement_id
        JOIN portfolios f ON f.id = e.portfolio_id
        WHERE {_VISIBLE}
        ORDER BY p.key
        """,
        principal.workspace_id,
        principal.is_admin,
        principal.id,
        permission,
    )
    return [
        VisibleProjectRow(
            id=r["id"],
            key=r["key"],
            name=r["name"],
            created_at=r["created_at"],
            engagement_id=r["engagement_id"],
            engagement_name=r["engagement_name"],
            portfolio_id=r["portfolio_id"],
            portfolio_name=r["portfolio_name"],
        )
        for r in rows
    ]


async def visible_project_ids(principal: Principal, permission: str = "project:read") -> list[str]:
    """Ids of the caller's projects holding `permission`."""
    rows = await db.fetch(
        f"SELECT p.id FROM projects p WHERE {_VISIBLE}",
        principal.workspace_id,
        principal.is_admin,
        principal.id,
        permission,
    )
    return [r["id"] for r in rows]


async def project_permissions(principal: Principal, project_id: str) -> set[str] | None:
    """The caller's permissions on a project of its workspace; None when it cannot see the project."""
    # A workspace admin holds every permission any role grants, so a new permission needs no code change.
    row = await db.fetchrow(
        """
        SELECT CASE WHEN $4 THEN (SELECT array_agg(DISTINCT granted) FROM roles, unnest(roles.permissions) granted)
                    ELSE r.permissions END AS permissions
        FROM projects p
        LEFT JOIN memberships m ON m.project_id = p.id AND m.principal_id = $3
        LEFT JOIN roles r ON r.name = m.role
        WHERE p.id = $2 AND p.workspace_id = $1
        """,
        principal.workspace_id,
        project_id,
        principal.id,
        principal.is_admin,
    )
    if row is None or row["permissions"] is None:
        return None
    return set(row["permissions"])


async def principal_holds(principal_id: str, project_id: str, permission: str) -> bool:
    """Whether a principal (a workspace admin, or a member whose role grants it) holds `permission` on a project."""
    row = await db.fetchrow(
        """
        SELECT 1 FROM principals p JOIN projects j ON j.workspace_id = p.workspace_id AND j.id = $2
        WHERE p.id = $1 AND (p.is_admin OR EXISTS (
            SELECT 1 FROM memberships m JOIN roles r ON r.name = m.role
            WHERE m.principal_id = p.id AND m.project_id = j.id AND $3 = ANY(r.permissions)))
        """,
        principal_id,
        project_id,
        permission,
    )
    return row is not None


async def role_names() -> set[str]:
    """The names of the roles a membership may carry."""
    return {r["name"] for r in await db.fetch("SELECT name FROM roles")}
