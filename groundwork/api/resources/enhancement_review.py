"""Typed shapes of a run's review history (its applies), shared by REST, GraphQL and MCP."""

from __future__ import annotations

from typing import Any

import msgspec

from groundwork.domain.times import format_timestamp
from groundwork.persistence.repositories.enhancement.applies import ApplyRow


class FieldChangeResource(msgspec.Struct, frozen=True, rename="camel"):
    """One field an apply wrote: the draft that proposed it and the value before and after."""

    field: str
    draft_id: str | None
    before: Any
    after: Any


class ApplyResource(msgspec.Struct, frozen=True, rename="camel"):
    """One apply of a run: the operation (the apply's Update id), who, when, which drafts, versions and values."""

    operation_id: str
    actor_id: str
    applied_at: str
    draft_ids: list[str]
    target_version_before: str
    target_version_after: str
    changes: list[FieldChangeResource]


def apply_resource(row: ApplyRow) -> ApplyResource:
    """An apply as the API shows it."""
    return ApplyResource(
        operation_id=row.id,
        actor_id=row.actor_id,
        applied_at=format_timestamp(row.applied_at),
        draft_ids=list(row.draft_ids),
        target_version_before=format_timestamp(row.expected_target_version),
        target_version_after=format_timestamp(row.target_version),
        changes=[FieldChangeResource(c.field, c.draft_id, c.before, c.after) for c in row.changes],
    )
