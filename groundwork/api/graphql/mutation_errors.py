"""What every mutation answers when it did not do what was asked: `ok: false` and coded `errors[]`, for a
refusal before it ran (no key, no scope, an idempotency key in use) as for one of the service."""

from __future__ import annotations

from typing import Any

import strawberry
from strawberry.scalars import JSON

from groundwork.api.graphql.field_names import graphql_path
from groundwork.domain.errors import GroundworkError


@strawberry.type
class MutationError:
    code: str
    message: str
    path: list[str] | None = None
    # Extra members of the error, as REST's problem body carries them (e.g. the apply diff, current_version).
    details: JSON | None = None


def mutation_errors(outcome: dict[str, Any]) -> list[MutationError]:
    """One entry per invalid field (with its input path, in GraphQL's names), else one for the whole call."""
    error = outcome.get("error")
    if not error:
        return []
    details: Any = {k: v for k, v in error.items() if k not in ("code", "message", "errors")} or None
    fields = error.get("errors") or []
    if fields:
        return [
            MutationError(
                code=error["code"],
                message=f["message"],
                path=["input", *graphql_path(f["path"]).split(".")],
                details=details,
            )
            for f in fields
        ]
    return [MutationError(code=error["code"], message=error["message"], path=None, details=details)]


def refused(error: GroundworkError) -> list[MutationError]:
    """The errors of a call refused with `error`."""
    return mutation_errors({"error": {"code": error.code, "message": error.detail, **error.extra}})
