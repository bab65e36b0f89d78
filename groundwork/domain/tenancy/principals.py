"""The resolved caller: a principal of one workspace acting through one API key with its scopes."""

from __future__ import annotations

from dataclasses import dataclass

# `provider` principals are internal: the context engine's providers, the only callers of /internal/v1.
PRINCIPAL_KINDS = ("user", "service", "agent", "provider")


@dataclass(frozen=True)
class AppGrant:
    """The connected app a key is bound to, as its declaration bounds that key."""

    id: str
    name: str
    kind: str
    direction: str
    field_authority: frozenset[str]
    provenance: str


@dataclass(frozen=True)
class Principal:
    """Who is calling, in which workspace, with what scopes."""

    id: str
    workspace_id: str
    name: str
    kind: str
    is_admin: bool
    api_key_id: str
    scopes: frozenset[str]
    # Set when the key belongs to a connected app: its direction and field authority bound the key.
    app: AppGrant | None = None

    def has_scope(self, scope: str) -> bool:
        """Whether the caller's key carries `scope`."""
        return scope in self.scopes
