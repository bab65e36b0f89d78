"""GraphQL evidence search: `contextCorpusSearch`, the same service and visibility as REST and MCP."""

from __future__ import annotations

from typing import Any

import strawberry
from strawberry.types import Info

from groundwork.api.graphql.context import GraphQLContext, as_graphql_error, require
from groundwork.api.graphql.work_items import PageInfo
from groundwork.domain.errors import GroundworkError
from groundwork.services.evidence_search import search as service


@strawberry.input(description="A project, engagement or portfolio; its type is `project`, `engagement` or `portfolio`.")
class ContextEngineSubjectInput:
    type: str
    id: strawberry.ID


@strawberry.type
class CorpusSourceRef:
    id: strawberry.ID
    title: str
    uri: str
    kind: str
    version_id: strawberry.ID


@strawberry.type
class TextRange:
    start: int
    end: int


@strawberry.type(description="An exact stored passage: text is characters of the source, never a rewrite.")
class CorpusPassage:
    id: strawberry.ID
    project_id: strawberry.ID
    source: CorpusSourceRef
    page: int | None
    paragraph: int | None
    section: str | None
    span: TextRange
    text: str
    score: float
    highlights: list[TextRange]
    provenance_quality: str
    segmenter_version: str

    @classmethod
    def of(cls, hit: service.PassageHit) -> CorpusPassage:
        return cls(
            id=strawberry.ID(hit.id),
            project_id=strawberry.ID(hit.project_id),
            source=CorpusSourceRef(
                id=strawberry.ID(hit.source_id),
                title=hit.source_title,
                uri=hit.source_uri,
                kind=hit.source_kind,
                version_id=strawberry.ID(hit.version_id),
            ),
            page=hit.page,
            paragraph=hit.paragraph,
            section=hit.section,
            span=TextRange(start=hit.char_start, end=hit.char_end),
            text=hit.text,
            score=round(hit.score, 6),
            highlights=[TextRange(start=s, end=e) for s, e in hit.highlights],
            provenance_quality=hit.provenance_quality,
            segmenter_version=hit.segmenter_version,
        )


@strawberry.type
class CorpusPassageConnection:
    nodes: list[CorpusPassage]
    page_info: PageInfo
    truncated: bool
    total_count: int


async def context_corpus_search(
    info: Info[GraphQLContext, Any],
    subject_ref: ContextEngineSubjectInput,
    query: str,
    first: int | None = None,
    after: str | None = None,
    source_id: strawberry.ID | None = None,
    kind: str | None = None,
) -> CorpusPassageConnection:
    """Evidence search: ranked exact passages of the subject's projects the caller may read."""
    principal = require(info, "context-engine:read")
    try:
        result = await service.search_corpus(
            principal,
            service.CorpusSearch(
                subject_type=subject_ref.type,
                subject_id=str(subject_ref.id),
                query=query,
                limit=first,
                cursor=after,
                source_id=str(source_id) if source_id is not None else None,
                kind=kind,
            ),
        )
    except GroundworkError as error:
        raise as_graphql_error(error) from None
    return CorpusPassageConnection(
        nodes=[CorpusPassage.of(p) for p in result.passages],
        page_info=PageInfo(next_cursor=result.page["next_cursor"], has_more=result.page["has_more"]),
        truncated=result.truncated,
        total_count=result.total_count,
    )
