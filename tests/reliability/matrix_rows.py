"""The kinds of rows of the authorization matrix (`authorization_matrix.py`) and what an unseeing caller gets."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

PUBLIC = "public"
# The endpoint of a transport whose every field or tool has its own row below (GRAPHQL, MCP).
TRANSPORT = "transport"
NOT_FOUND = "not_found"
LISTED = "listed"
PERMISSION_DENIED = "permission_denied"
# A body naming a project or principal the caller cannot see: 422 on that field, the same answer as for an
# id that does not exist (so it tells nothing about the existence of the other workspace's resource).
VALIDATION_FAILED = "validation_failed"
# 403 `insufficient_scope` naming `workspace:admin`: a principal who is not a workspace admin never holds it.
INSUFFICIENT_SCOPE = "insufficient_scope"

Ids = dict[str, str]
Build = Callable[[Ids], dict[str, Any]]


def _none(ids: Ids) -> dict[str, Any]:
    return {}


def _key() -> str:
    return uuid.uuid4().hex


@dataclass(frozen=True)
class Rest:
    """One REST route: its scope, the target its path names, its body/query, and what an unseeing caller gets."""

    scope: str | None
    body: Build | None = None
    query: Build = _none
    unseen_other: str = NOT_FOUND
    unseen_invisible: str | None = None  # None: as `unseen_other`
    # Route parameters are filled from `Targets` ids of the same name without `_id` (`run_id` → ids["run"]);
    # `params` overrides that (e.g. the operation route is called with a run id).
    params: dict[str, str] = field(default_factory=dict)
    why: str = ""

    @property
    def invisible(self) -> str:
        return self.unseen_invisible or self.unseen_other


@dataclass(frozen=True)
class Field:
    """One GraphQL query or mutation field: scope, arguments, and what an unseeing caller gets."""

    scope: str | None
    args: Build = _none
    unseen_other: str = NOT_FOUND
    unseen_invisible: str | None = None

    @property
    def invisible(self) -> str:
        return self.unseen_invisible or self.unseen_other


@dataclass(frozen=True)
class Tool:
    """One MCP tool: scope, arguments, and what an unseeing caller gets."""

    scope: str | None
    args: Build = _none
    unseen_other: str = NOT_FOUND
    unseen_invisible: str | None = None

    @property
    def invisible(self) -> str:
        return self.unseen_invisible or self.unseen_other
