"""REST answers of a workspace's administration: portfolios, engagements, projects, principals, members, keys,
connected apps and the caller itself."""

from __future__ import annotations

import msgspec
from msgspec import UNSET, UnsetType

from groundwork.api.rest.documents.common import Named, Page, Resource, Timestamp


class Portfolio(Resource, kw_only=True):
    """A portfolio."""

    id: str
    name: str
    created_at: Timestamp | None


class Engagement(Resource, kw_only=True):
    """An engagement and the portfolio it belongs to."""

    id: str
    name: str
    portfolio_id: str
    created_at: Timestamp | None


class AdminProject(Resource, kw_only=True):
    """A project with its engagement and portfolio, and when it was archived (null: active)."""

    id: str
    key: str
    name: str
    engagement: Named
    portfolio: Named
    archived_at: Timestamp | None
    created_at: Timestamp | None


class WorkspacePrincipal(Resource, kw_only=True):
    """A principal as its workspace's admins see it."""

    id: str
    name: str
    kind: str
    is_admin: bool
    created_at: Timestamp | None


class DirectoryEntry(Resource, kw_only=True):
    """A principal as another may address it: id, name and kind only."""

    id: str
    name: str
    kind: str


class Member(Resource, kw_only=True):
    """A principal's role on a project."""

    principal: DirectoryEntry
    role: str
    since: Timestamp | None


class ApiKey(Resource, kw_only=True):
    """A key's record; `secret` only in the answer that creates it."""

    id: str
    prefix: str
    principal_id: str
    scopes: list[str]
    app_id: str | None
    created_at: Timestamp | None
    expires_at: Timestamp | None
    revoked_at: Timestamp | None
    last_used_at: Timestamp | None
    secret: str | UnsetType = UNSET


class ConnectedApp(Resource, kw_only=True):
    """A connected app with its declaration and lifecycle."""

    id: str
    name: str
    kind: str
    direction: str
    field_authority: list[str]
    provenance: str | None
    conflict: str | None
    status: str
    key_count: int
    activated_at: Timestamp | None
    created_at: Timestamp | None
    updated_at: Timestamp | None


class MePrincipal(Resource, kw_only=True):
    """The caller's principal."""

    id: str
    name: str
    kind: str
    is_admin: bool


class Workspace(Resource, kw_only=True):
    """The caller's workspace."""

    id: str
    slug: str
    name: str


class ProjectRole(Resource, kw_only=True):
    """The caller's role on one project."""

    project_id: str
    project_key: str
    role: str


class Me(Resource, kw_only=True):
    """The caller: its principal, workspace, its key's scopes and its roles on projects."""

    principal: MePrincipal
    workspace: Workspace
    api_key_id: str | None
    app: Named | None
    scopes: list[str]
    project_roles: list[ProjectRole]


class PortfolioDocument(msgspec.Struct):
    """One portfolio."""

    data: Portfolio


class PortfolioList(msgspec.Struct):
    """A page of portfolios, newest first."""

    data: list[Portfolio]
    page: Page


class EngagementDocument(msgspec.Struct):
    """One engagement."""

    data: Engagement


class EngagementList(msgspec.Struct):
    """A page of engagements, newest first."""

    data: list[Engagement]
    page: Page


class AdminProjectDocument(msgspec.Struct):
    """One project as its administrators see it."""

    data: AdminProject


class PrincipalDocument(msgspec.Struct):
    """One principal."""

    data: WorkspacePrincipal


class DirectoryList(msgspec.Struct):
    """A page of the workspace's principals."""

    data: list[DirectoryEntry]
    page: Page


class MemberDocument(msgspec.Struct):
    """One member of a project."""

    data: Member


class MemberList(msgspec.Struct):
    """A project's members."""

    data: list[Member]


class ApiKeyDocument(msgspec.Struct):
    """One API key."""

    data: ApiKey


class ApiKeyList(msgspec.Struct):
    """A page of API keys, newest first."""

    data: list[ApiKey]
    page: Page


class ConnectedAppDocument(msgspec.Struct):
    """One connected app."""

    data: ConnectedApp


class ConnectedAppList(msgspec.Struct):
    """A page of connected apps."""

    data: list[ConnectedApp]
    page: Page


class MeDocument(msgspec.Struct):
    """The caller."""

    data: Me
