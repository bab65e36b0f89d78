"""Issuing, resolving and revoking API keys (`gw_<random>`, stored as SHA-256 only)."""

from __future__ import annotations

import hashlib
import secrets
import time
from dataclasses import dataclass

from groundwork.domain.errors import GroundworkError
from groundwork.domain.tenancy.connected_apps import AppNotActive, effective_scopes
from groundwork.domain.tenancy.principals import PRINCIPAL_KINDS, AppGrant, Principal
from groundwork.domain.tenancy.scopes import ALL_SCOPES, unknown_scopes
from groundwork.persistence import change_feed, db
from groundwork.persistence.repositories.tenancy import api_keys, connected_apps
from groundwork.persistence.repositories.tenancy import workspaces as tenancy
from groundwork.persistence.repositories.tenancy.api_keys import ActiveKeyRow, ApiKeyListingRow
from groundwork.platform.caches.invalidated_cache import InvalidatedCache
from groundwork.platform.caches.serving import forget_on

# last_used_at is bookkeeping: writing it on every request would serialise hot keys on one row.
_TOUCH_EVERY_SECONDS = 60.0
_last_touched: dict[str, float] = {}
# Resolved keys, and keys that resolved to nothing, by hash. A revoke (or any change to a key, its
# principal or its app) clears both in every listening process at once; the TTLs are a safety net.
_known_keys: InvalidatedCache[str, _KnownKey] = InvalidatedCache(ttl_seconds=60.0)
_unknown_keys: InvalidatedCache[str, bool] = InvalidatedCache(ttl_seconds=10.0, max_entries=50_000)


def forget_cached_keys() -> None:
    """Drop every cached key resolution (the change feed calls this when keys, principals or apps change)."""
    _known_keys.invalidate()
    _unknown_keys.invalidate()


forget_on(("auth",), lambda _topic: forget_cached_keys())


def cached_keys_generation() -> int:
    """How many times this process's key caches were dropped (moves when an invalidation lands)."""
    return _known_keys.generation


@dataclass(frozen=True)
class IssuedKey:
    """A new key: the secret shown once, and its record id."""

    key: str
    api_key_id: str
    principal_id: str
    created_principal: bool


def hash_key(key: str) -> str:
    """The stored form of a key."""
    return hashlib.sha256(key.encode()).hexdigest()


async def issue_key(
    workspace_slug: str,
    principal_name: str,
    scopes: list[str] | None,
    *,
    admin: bool = False,
    kind: str = "user",
    app_id: str | None = None,
) -> IssuedKey:
    """Create a key for a principal (creating the principal, with no memberships, if it is new).

    With `app_id` the key is bound to that connected app of the same workspace: it works only while
    the app is active, and only within the app's declared direction.
    """
    chosen = list(ALL_SCOPES) if scopes is None else list(dict.fromkeys(scopes))
    if not chosen:
        raise GroundworkError("Name at least one scope, or every scope.")
    if bad := unknown_scopes(chosen):
        raise GroundworkError(f"Unknown scope(s): {', '.join(bad)}. Known: {', '.join(ALL_SCOPES)}")
    if kind not in PRINCIPAL_KINDS:
        raise GroundworkError(f"Unknown principal kind {kind!r}.")
    async with db.transaction():
        workspace = await tenancy.get_workspace_by_slug(workspace_slug)
        if workspace is None:
            raise GroundworkError(f"No workspace with the slug {workspace_slug!r}.")
        if app_id is not None and await connected_apps.get_app(app_id, workspace.id) is None:
            raise GroundworkError(f"No connected app {app_id!r} in the workspace {workspace_slug!r}.")
        principal = await tenancy.get_principal_by_name(workspace.id, principal_name)
        created = principal is None
        if principal is None:
            principal = await tenancy.create_principal(workspace.id, principal_name, kind=kind, is_admin=admin)
        elif admin and not principal.is_admin:
            await tenancy.set_principal_admin(principal.id, True)
        key = "gw_" + secrets.token_urlsafe(32)
        record = await api_keys.create_api_key(workspace.id, principal.id, hash_key(key), key[:10], chosen, app_id)
    await change_feed.caught_up()  # a key this process had cached as unknown works from its next request on
    return IssuedKey(key, record.id, principal.id, created)


@dataclass(frozen=True)
class _KnownKey:
    """An unrevoked key as resolved: its principal is built once and handed to every request it makes."""

    principal: Principal
    app_status: str | None  # of the key's connected app (None without one): checked on every request


def _known_key(row: ActiveKeyRow) -> _KnownKey:
    app = None
    if row.app_id is not None:
        app = AppGrant(
            id=row.app_id,
            name=str(row.app_name),
            kind=str(row.app_kind),
            direction=str(row.app_direction),
            field_authority=frozenset(row.app_field_authority or ()),
            provenance=str(row.app_provenance),
        )
    principal = Principal(
        id=row.principal_id,
        workspace_id=row.workspace_id,
        name=row.name,
        kind=row.kind,
        is_admin=row.is_admin,
        api_key_id=row.api_key_id,
        scopes=effective_scopes(frozenset(row.scopes), app.direction if app else None),
        app=app,
    )
    return _KnownKey(principal, row.app_status if app is not None else None)


async def _resolved(key_hash: str) -> _KnownKey | None:
    """The key as resolved: from memory while the change feed is live, else from PostgreSQL."""
    found, known = _known_keys.get(key_hash)
    if found:
        return known
    unknown, _ = _unknown_keys.get(key_hash)
    if unknown:
        return None
    known_generation, unknown_generation = _known_keys.generation, _unknown_keys.generation
    row = await api_keys.find_active_by_hash(key_hash)
    if row is None:
        _unknown_keys.put(key_hash, True, unknown_generation)
        return None
    known = _known_key(row)
    _known_keys.put(key_hash, known, known_generation)
    return known


async def resolve_key(key: str) -> Principal | None:
    """The principal behind an unrevoked key, or None; a key of an app that is not active is refused (403)."""
    known = await _resolved(hash_key(key))
    if known is None:
        return None
    principal = known.principal
    if principal.app is not None and known.app_status != "active":
        raise AppNotActive(principal.app.id, str(known.app_status))
    now = time.monotonic()
    if now - _last_touched.get(principal.api_key_id, -_TOUCH_EVERY_SECONDS) >= _TOUCH_EVERY_SECONDS:
        _last_touched[principal.api_key_id] = now
        await api_keys.touch_last_used(principal.api_key_id)
    return principal


async def list_keys(workspace_slug: str | None = None) -> list[ApiKeyListingRow]:
    """Every key's record (never the key), newest first."""
    return await api_keys.list_api_keys(workspace_slug)


async def revoke_key(api_key_id: str) -> bool:
    """Revoke a key at once; False when there is no such unrevoked key."""
    revoked = await api_keys.revoke_api_key(api_key_id)
    await change_feed.caught_up()  # this process refuses the key from its next request on
    return revoked
