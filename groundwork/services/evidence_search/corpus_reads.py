"""Evidence a reviewer can open: a stored passage by id, and the sources of a project or engagement.

REST (`GET /api/v1/context/passages/{passage_id}`, `GET /api/v1/context/sources`), GraphQL (`contextPassage`,
`contextSources`) and MCP (`get_passage`, `list_sources`) call these. They apply evidence search's rules: the
caller holds `context:read` in the passage's project (engagement subjects reach only such child projects), and
a `financial` or `staffing` source and its passages exist only for keys with that class's scope; anything else
is 404, never 403. A passage whose source version (or segmenter version) no longer serves answers 410
`passage_superseded`, naming the serving passage that holds its text when there is one.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from groundwork.domain.context_engine.model import allowed_classes
from groundwork.domain.errors import FieldError, NotFound, PassageSuperseded, ValidationFailed
from groundwork.domain.ids import SUBJECT_PREFIXES, cannot_be_an_id, id_like
from groundwork.domain.pagination import page_info, page_request
from groundwork.domain.tenancy.principals import Principal
from groundwork.persistence.repositories.evidence_search import corpus_reads
from groundwork.persistence.repositories.evidence_search.corpus_reads import SourceListRow, StoredPassageRow
from groundwork.persistence.repositories.tenancy import workspaces as tenancy
from groundwork.services.evidence_search.search import CONTEXT_READ, search_scope

MAX_ID_CHARS = 200


async def get_passage(principal: Principal, passage_id: str) -> StoredPassageRow:
    """The exact stored passage with its source, position and neighbours; 404 unseen, 410 no longer serving."""
    if not passage_id.startswith("psg_") or "\x00" in passage_id or len(passage_id) > MAX_ID_CHARS:
        raise NotFound("No such passage.")
    passage = await corpus_reads.stored_passage(principal.workspace_id, passage_id)
    if passage is None or passage.classification not in allowed_classes(principal.scopes):
        raise NotFound("No such passage.")
    await search_scope(principal, "project", passage.project_id)  # 404 without context:read there
    if passage.version_status == "active" and passage.segmenter_active:
        return passage
    if passage.version_status == "inactive" or passage.segmenter_retired:
        raise PassageSuperseded(
            "This passage's source has changed (or was cut again) since it was cited; the body names what serves now.",
            active_passage_id=await corpus_reads.serving_counterpart(passage),
            active_version_id=passage.active_version_id,
        )
    raise NotFound("No such passage.")  # a version still being ingested, or a segmenter version being staged


@dataclass(frozen=True)
class SourceFilters:
    """The source list's filters as a caller gives them."""

    project_id: str | None = None
    engagement_id: str | None = None
    limit: int | None = None
    cursor: str | None = None


async def _project_ids(principal: Principal, filters: SourceFilters) -> list[str]:
    errors = []
    if cannot_be_an_id(filters.project_id):
        errors.append(FieldError("project_id", f"must be {id_like(SUBJECT_PREFIXES['project'])}"))
    if cannot_be_an_id(filters.engagement_id):
        errors.append(FieldError("engagement_id", f"must be {id_like(SUBJECT_PREFIXES['engagement'])}"))
    if filters.project_id is not None and filters.engagement_id is not None:
        errors.append(FieldError("engagement_id", "give project_id or engagement_id, not both"))
    if errors:
        raise ValidationFailed("The request is not valid.", errors)
    if filters.project_id is not None:
        return (await search_scope(principal, "project", filters.project_id)).readable_project_ids
    if filters.engagement_id is not None:
        return (await search_scope(principal, "engagement", filters.engagement_id)).readable_project_ids
    return sorted(await tenancy.visible_project_ids(principal, CONTEXT_READ))


async def list_sources(principal: Principal, filters: SourceFilters) -> tuple[list[SourceListRow], dict[str, Any]]:
    """The visible sources of a project, an engagement's visible projects, or every project the caller reads,
    newest first, each with its serving version, document date, ingestion time and passage count."""
    page = page_request(filters.limit, filters.cursor)
    project_ids = await _project_ids(principal, filters)
    rows = await corpus_reads.sources_page(
        principal.workspace_id,
        project_ids,
        list(allowed_classes(principal.scopes)),
        after_id=page.after_text(),
        limit=page.limit + 1,
    )
    return page_info(rows, page.limit, lambda r: {"id": r.id})
