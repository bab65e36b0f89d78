"""Rules of a workspace's administration: who may administer, and what names, keys, kinds and roles are valid."""

from __future__ import annotations

import re

from groundwork.domain.errors import FieldError, InsufficientScope, ValidationFailed
from groundwork.domain.tenancy.principals import Principal
from groundwork.domain.tenancy.scopes import WORKSPACE_ADMIN

MAX_NAME = 200
PROJECT_KEY = re.compile(r"^[A-Z][A-Z0-9]{1,9}$")
# Kinds a workspace admin may create; `provider` principals stay the operator's (`keys create --kind provider`).
ADMINISTERED_KINDS = ("user", "service", "agent")
ROLES = ("lead", "contributor", "viewer", "guest")
MAX_QUERY = 200


def require_workspace_admin(principal: Principal) -> None:
    """Refuse anyone but a workspace admin acting with its own key (never a connected app's) holding the scope."""
    if not principal.is_admin or principal.app is not None or not principal.has_scope(WORKSPACE_ADMIN):
        raise InsufficientScope(WORKSPACE_ADMIN)


def checked_name(value: str | None, path: str = "name") -> str:
    """A name of 1 to 200 characters, not only blanks."""
    if value is None or not value.strip() or len(value) > MAX_NAME:
        raise ValidationFailed("Invalid name.", [FieldError(path, f"must be 1 to {MAX_NAME} characters")])
    return value.strip()


def checked_project_key(value: str | None) -> str:
    """A project key: 2 to 10 capital letters or digits, starting with a letter."""
    if value is None or not PROJECT_KEY.match(value):
        raise ValidationFailed(
            "Invalid project key.",
            [FieldError("key", "must be 2 to 10 capital letters or digits, starting with a letter (e.g. PAY)")],
        )
    return value


def checked_choice(value: str | None, choices: tuple[str, ...], path: str) -> str:
    """One of `choices`, else 422 naming them."""
    if value not in choices:
        raise ValidationFailed(f"Invalid {path}.", [FieldError(path, f"must be one of {', '.join(choices)}")])
    return value
