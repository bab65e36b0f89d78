"""API key scopes: the one set every transport checks."""

from __future__ import annotations

ALL_SCOPES: tuple[str, ...] = (
    "work-items:read",
    "work-items:write",
    "work-item-enhance:run",
    "work-item-enhance:read",
    "work-item-enhance:apply",
    "work-item-enhance:code-context",
    "context-engine:read",
    "context-engine:financial",
    "context-engine:staffing",
    "context-engine:contribute",
    "agent:read",
    "webhooks:manage",
    # Notifications and messaging, contract v0.2 (preview): grantable since it is implemented.
    "notifications:read",
    "notifications:write",
    "notifications:operate",
    # Registering and activating connected apps (workspace admins only).
    "connected-apps:manage",
    # Administration of the workspace (portfolios, engagements, projects, principals, memberships, keys):
    # held only by workspace admins, and never by a key bound to a connected app.
    "workspace:admin",
)

WORKSPACE_ADMIN = "workspace:admin"


def unknown_scopes(scopes: list[str] | tuple[str, ...]) -> list[str]:
    """Return the scopes in `scopes` that Groundwork does not define."""
    return [s for s in scopes if s not in ALL_SCOPES]


def grantable_scopes(scopes: frozenset[str], is_admin: bool) -> frozenset[str]:
    """The scopes a principal may use: `workspace:admin` only while it is a workspace admin."""
    return scopes if is_admin else scopes - {WORKSPACE_ADMIN}
