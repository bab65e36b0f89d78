"""GraphQL connections over a run's drafts and artifacts.

The spec fixes `workItemEnhancementDrafts` as a plain list, so the paged form of each is its own root field,
`workItemEnhancementDraftConnection` and `workItemEnhancementArtifactConnection`.
"""

from __future__ import annotations

from typing import Any

import strawberry
from strawberry.types import Info

from groundwork.api.graphql.connections import Edge, PageInfo, connection_fields
from groundwork.api.graphql.context import GraphQLContext, as_graphql_error, require
from groundwork.api.graphql.enhancement import (
    WorkItemEnhancementArtifact,
    WorkItemEnhancementDraft,
    artifact_of,
    draft_of,
)
from groundwork.api.graphql.enums import WorkItemEnhancementArtifactType, WorkItemEnhancementDraftField
from groundwork.api.resources.enhancement import artifact_resource, run_resource
from groundwork.domain.enhancement.model import SCOPE_READ
from groundwork.domain.errors import GroundworkError
from groundwork.services.enhancement import outputs


@strawberry.type(description="A page of a run's drafts, newest first.")
class WorkItemEnhancementDraftConnection:
    edges: list[Edge[WorkItemEnhancementDraft]]
    nodes: list[WorkItemEnhancementDraft]
    page_info: PageInfo


@strawberry.type(description="A page of a run's artifacts, newest first.")
class WorkItemEnhancementArtifactConnection:
    edges: list[Edge[WorkItemEnhancementArtifact]]
    nodes: list[WorkItemEnhancementArtifact]
    page_info: PageInfo


async def work_item_enhancement_draft_connection(
    info: Info[GraphQLContext, Any],
    run_id: strawberry.ID,
    field: WorkItemEnhancementDraftField | None = None,
    apply_eligible: bool | None = None,
    first: int | None = None,
    after: str | None = None,
) -> WorkItemEnhancementDraftConnection:
    """Drafts of a run, newest first, filtered by field and eligibility, paged with `first` and `after`."""
    try:
        view, drafts, page = await outputs.list_drafts(
            require(info, SCOPE_READ),
            str(run_id),
            field=field,
            apply_eligible=apply_eligible,
            limit=first,
            cursor=after,
        )
    except GroundworkError as error:
        raise as_graphql_error(error) from None
    data = {d["id"]: d for d in run_resource(view)["drafts"]}
    return WorkItemEnhancementDraftConnection(**connection_fields([draft_of(data[d.id]) for d in drafts], page))


async def work_item_enhancement_artifact_connection(
    info: Info[GraphQLContext, Any],
    run_id: strawberry.ID,
    type: WorkItemEnhancementArtifactType | None = None,
    first: int | None = None,
    after: str | None = None,
) -> WorkItemEnhancementArtifactConnection:
    """Artifacts of a run, newest first, filtered by type, paged with `first` and `after`."""
    try:
        rows, page = await outputs.list_artifacts(
            require(info, SCOPE_READ), str(run_id), type=type, limit=first, cursor=after
        )
    except GroundworkError as error:
        raise as_graphql_error(error) from None
    artifacts = [artifact_of(artifact_resource(a)) for a in rows]
    return WorkItemEnhancementArtifactConnection(**connection_fields(artifacts, page))
