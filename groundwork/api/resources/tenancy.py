"""Resources of a workspace's administration: portfolios, engagements, projects, principals, members, keys, me."""

from __future__ import annotations

from typing import Any

from groundwork.domain.times import timestamp
from groundwork.persistence.repositories.tenancy.administration import AdminProjectRow, DirectoryRow, MemberRow
from groundwork.persistence.repositories.tenancy.api_keys import ApiKeyRow
from groundwork.persistence.repositories.tenancy.workspaces import EngagementRow, PortfolioRow, PrincipalRow
from groundwork.services.tenancy.people import Me


def portfolio_resource(row: PortfolioRow) -> dict[str, Any]:
    """A portfolio."""
    return {"id": row.id, "name": row.name, "createdAt": timestamp(row.created_at)}


def engagement_resource(row: EngagementRow) -> dict[str, Any]:
    """An engagement and the portfolio it belongs to."""
    return {"id": row.id, "name": row.name, "portfolioId": row.portfolio_id, "createdAt": timestamp(row.created_at)}


def admin_project_resource(row: AdminProjectRow) -> dict[str, Any]:
    """A project with its engagement and portfolio, and when it was archived (null: active)."""
    return {
        "id": row.id,
        "key": row.key,
        "name": row.name,
        "engagement": {"id": row.engagement_id, "name": row.engagement_name},
        "portfolio": {"id": row.portfolio_id, "name": row.portfolio_name},
        "archivedAt": timestamp(row.archived_at),
        "createdAt": timestamp(row.created_at),
    }


def principal_resource(row: PrincipalRow) -> dict[str, Any]:
    """A principal as its workspace's admins see it."""
    return {
        "id": row.id,
        "name": row.name,
        "kind": row.kind,
        "isAdmin": row.is_admin,
        "createdAt": timestamp(row.created_at),
    }


def directory_resource(row: DirectoryRow) -> dict[str, Any]:
    """A principal as another may address it: id, name and kind only."""
    return {"id": row.id, "name": row.name, "kind": row.kind}


def member_resource(row: MemberRow) -> dict[str, Any]:
    """A principal's role on a project."""
    return {
        "principal": {"id": row.principal_id, "name": row.name, "kind": row.kind},
        "role": row.role,
        "since": timestamp(row.created_at),
    }


def api_key_resource(row: ApiKeyRow, secret: str | None = None) -> dict[str, Any]:
    """A key's record; `secret` only in the answer that creates it."""
    resource = {
        "id": row.id,
        "prefix": row.key_prefix,
        "principalId": row.principal_id,
        "scopes": list(row.scopes),
        "appId": row.app_id,
        "createdAt": timestamp(row.created_at),
        "expiresAt": timestamp(row.expires_at),
        "revokedAt": timestamp(row.revoked_at),
        "lastUsedAt": timestamp(row.last_used_at),
    }
    if secret is not None:
        resource["secret"] = secret
    return resource


def me_resource(me: Me) -> dict[str, Any]:
    """The caller: its principal, workspace, its key's scopes and its roles on projects."""
    principal = me.principal
    return {
        "principal": {
            "id": principal.id,
            "name": principal.name,
            "kind": principal.kind,
            "isAdmin": principal.is_admin,
        },
        "workspace": {"id": me.workspace.id, "slug": me.workspace.slug, "name": me.workspace.name},
        "apiKeyId": principal.api_key_id,
        "app": {"id": principal.app.id, "name": principal.app.name} if principal.app else None,
        "scopes": sorted(principal.scopes),
        "projectRoles": [
            {"projectId": r.project_id, "projectKey": r.project_key, "role": r.role} for r in me.project_roles
        ],
    }
