"""Piccolo table definitions, mirroring the SQL migrations (a test checks that they agree)."""

from __future__ import annotations

from piccolo.columns import (
    JSONB,
    Array,
    BigSerial,
    Boolean,
    Bytea,
    ForeignKey,
    Integer,
    Text,
    Timestamptz,
)
from piccolo.columns.base import OnDelete
from piccolo.table import Table


class Workspace(Table, tablename="workspaces"):
    id = Text(primary_key=True)
    slug = Text(unique=True)
    name = Text()
    created_at = Timestamptz()


class Principal(Table, tablename="principals"):
    id = Text(primary_key=True)
    workspace_id = ForeignKey(Workspace, on_delete=OnDelete.cascade, null=False)
    name = Text()
    display_name = Text()
    kind = Text()
    is_admin = Boolean(default=False)
    created_at = Timestamptz()


class Portfolio(Table, tablename="portfolios"):
    id = Text(primary_key=True)
    workspace_id = ForeignKey(Workspace, on_delete=OnDelete.cascade, null=False)
    name = Text()
    created_at = Timestamptz()


class Engagement(Table, tablename="engagements"):
    id = Text(primary_key=True)
    workspace_id = ForeignKey(Workspace, on_delete=OnDelete.cascade, null=False)
    portfolio_id = ForeignKey(Portfolio, on_delete=OnDelete.cascade, null=False)
    name = Text()
    created_at = Timestamptz()


class Project(Table, tablename="projects"):
    id = Text(primary_key=True)
    workspace_id = ForeignKey(Workspace, on_delete=OnDelete.cascade, null=False)
    engagement_id = ForeignKey(Engagement, on_delete=OnDelete.cascade, null=False)
    key = Text()
    name = Text()
    next_item_number = Integer(default=1)
    created_at = Timestamptz()


class Role(Table, tablename="roles"):
    name = Text(primary_key=True)
    permissions = Array(base_column=Text())


class Membership(Table, tablename="memberships"):
    id = BigSerial(primary_key=True)
    principal_id = ForeignKey(Principal, on_delete=OnDelete.cascade, null=False)
    project_id = ForeignKey(Project, on_delete=OnDelete.cascade, null=False)
    role = Text()
    created_at = Timestamptz()


class ApiKey(Table, tablename="api_keys"):
    id = Text(primary_key=True)
    workspace_id = ForeignKey(Workspace, on_delete=OnDelete.cascade, null=False)
    principal_id = ForeignKey(Principal, on_delete=OnDelete.cascade, null=False)
    key_hash = Text(unique=True)
    key_prefix = Text()
    scopes = Array(base_column=Text())
    created_at = Timestamptz()
    revoked_at = Timestamptz(null=True, default=None)
    last_used_at = Timestamptz(null=True, default=None)


class WorkItem(Table, tablename="work_items"):
    id = Text(primary_key=True)
    workspace_id = ForeignKey(Workspace, on_delete=OnDelete.cascade, null=False)
    project_id = ForeignKey(Project, on_delete=OnDelete.cascade, null=False)
    key = Text()
    title = Text()
    status = Text()
    sprint = Text(null=True, default=None)
    watchers = Array(base_column=Text())
    fields = JSONB()
    version = Timestamptz()
    created_at = Timestamptz()


class WorkItemChange(Table, tablename="work_item_changes"):
    id = BigSerial(primary_key=True)
    work_item_id = ForeignKey(WorkItem, on_delete=OnDelete.cascade, null=False)
    actor_id = Text()
    source = Text()
    changes = JSONB()
    version_before = Timestamptz(null=True, default=None)
    version_after = Timestamptz()
    changed_at = Timestamptz()


class IdempotencyKey(Table, tablename="idempotency_keys"):
    id = BigSerial(primary_key=True)
    api_key_id = ForeignKey(ApiKey, on_delete=OnDelete.cascade, null=False)
    key = Text()
    fingerprint = Text()
    locked_at = Timestamptz()
    response_status = Integer(null=True, default=None)
    response_headers = JSONB(null=True, default=None)
    response_body = Bytea(null=True, default=None)
    created_at = Timestamptz()
    expires_at = Timestamptz()


class OutboxEvent(Table, tablename="outbox"):
    id = BigSerial(primary_key=True)
    event_id = Text(unique=True)
    type = Text()
    event_version = Integer(default=1)
    workspace_id = ForeignKey(Workspace, on_delete=OnDelete.cascade, null=False)
    resource_type = Text()
    resource_id = Text()
    actor_id = Text(null=True, default=None)
    payload = JSONB()
    source = JSONB(null=True, default=None)
    occurred_at = Timestamptz()
    dispatched_at = Timestamptz(null=True, default=None)


ALL_TABLES: tuple[type[Table], ...] = (
    Workspace,
    Principal,
    Portfolio,
    Engagement,
    Project,
    Role,
    Membership,
    ApiKey,
    WorkItem,
    WorkItemChange,
    IdempotencyKey,
    OutboxEvent,
)
