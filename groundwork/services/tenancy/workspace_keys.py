"""API keys over the API: a key for yourself with scopes you hold, or, as a workspace admin, for any principal.

Key management is never reachable with a key bound to a connected app. A secret is shown once, in the
answer that creates it (replayed sealed under the key ring for a retried request); listings never show it.
A revoke stops the key at once in every API process, exactly as `groundwork keys revoke` does.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from groundwork.domain.errors import FieldError, NotFound, PermissionDenied, ValidationFailed
from groundwork.domain.pagination import page_info, page_request
from groundwork.domain.tenancy.principals import Principal
from groundwork.domain.tenancy.scopes import WORKSPACE_ADMIN, unknown_scopes
from groundwork.domain.work_items import parse_version
from groundwork.persistence import change_feed, db
from groundwork.persistence.repositories.tenancy import api_keys as keys_repo
from groundwork.persistence.repositories.tenancy import workspace_keys as repo
from groundwork.persistence.repositories.tenancy import workspaces as tenancy
from groundwork.persistence.repositories.tenancy.api_keys import ApiKeyRow
from groundwork.services.tenancy.api_keys import hash_key


@dataclass(frozen=True)
class NewKey:
    """A key just made: its record and its secret (shown once)."""

    record: ApiKeyRow
    secret: str


def _not_an_app(principal: Principal) -> None:
    if principal.app is not None:
        raise PermissionDenied("Keys are never managed with a connected app's key.", WORKSPACE_ADMIN)


def _acts_as_admin(principal: Principal) -> bool:
    return principal.is_admin and principal.has_scope(WORKSPACE_ADMIN)


def _expiry(expires_at: str | None) -> datetime | None:
    if expires_at is None:
        return None
    try:
        moment = parse_version(expires_at)
    except ValueError as exc:
        raise ValidationFailed("Invalid expiry.", [FieldError("expires_at", str(exc))]) from None
    if moment <= datetime.now(UTC):
        raise ValidationFailed("Invalid expiry.", [FieldError("expires_at", "must be in the future")])
    return moment


async def create_key(
    principal: Principal, principal_id: str | None, scopes: list[str] | None, expires_at: str | None
) -> NewKey:
    """Issue a key for the caller (scopes it holds) or, as an admin, for any principal of its workspace."""
    _not_an_app(principal)
    if principal_id is None:
        raise ValidationFailed("Invalid key.", [FieldError("principal_id", "is required")])
    chosen = list(dict.fromkeys(scopes or []))
    if not chosen:
        raise ValidationFailed("Invalid key.", [FieldError("scopes", "must name at least one scope")])
    if bad := unknown_scopes(chosen):
        raise ValidationFailed("Invalid key.", [FieldError("scopes", f"unknown scope(s): {', '.join(bad)}")])
    if not_held := [s for s in chosen if not principal.has_scope(s)]:
        raise ValidationFailed("Invalid key.", [FieldError("scopes", f"not held by your key: {', '.join(not_held)}")])
    expiry = _expiry(expires_at)
    target = await tenancy.get_principal(principal_id)
    if principal_id != principal.id and not _acts_as_admin(principal):
        raise ValidationFailed(
            "Invalid key.",
            [FieldError("principal_id", "must be your own (only a workspace admin issues keys for others)")],
        )
    if target is None or target.workspace_id != principal.workspace_id or target.kind == "provider":
        raise ValidationFailed("Invalid key.", [FieldError("principal_id", "is not a principal of this workspace")])
    if WORKSPACE_ADMIN in chosen and not target.is_admin:
        raise ValidationFailed(
            "Invalid key.", [FieldError("scopes", f"{WORKSPACE_ADMIN} is only for workspace admins")]
        )
    secret = "gw_" + secrets.token_urlsafe(32)
    async with db.transaction():
        record = await keys_repo.create_api_key(
            principal.workspace_id, target.id, hash_key(secret), secret[:10], chosen, expires_at=expiry
        )
    await change_feed.caught_up()  # a key this process had cached as unknown works from its next request on
    return NewKey(record, secret)


async def list_keys(
    principal: Principal, *, limit: int | None, cursor: str | None
) -> tuple[list[ApiKeyRow], dict[str, Any]]:
    """The workspace's keys for an admin, else the caller's own; never a secret; newest first."""
    _not_an_app(principal)
    page = page_request(limit, cursor)
    owner = None if _acts_as_admin(principal) else principal.id
    rows = await repo.keys_of(principal.workspace_id, owner, after_id=page.after_text(), limit=page.limit + 1)
    return page_info(rows, page.limit, lambda k: {"id": k.id})


async def revoke(principal: Principal, api_key_id: str) -> None:
    """Revoke a key (an admin: any of the workspace; else only the caller's own) at once in every API process."""
    _not_an_app(principal)
    row = await repo.key_of(principal.workspace_id, api_key_id)
    if row is None or (row.principal_id != principal.id and not _acts_as_admin(principal)):
        raise NotFound("No such API key.")
    await keys_repo.revoke_api_key(api_key_id)  # revoking a revoked key changes nothing
    await change_feed.caught_up()  # this process refuses the key from its next request on
