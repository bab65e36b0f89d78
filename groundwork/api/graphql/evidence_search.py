"""GraphQL evidence search: `contextPassages` (formerly `contextCorpusSearch`), and opening evidence
(`contextPassage`, `contextSources`), with the same services and visibility as REST and MCP."""

from __future__ import annotations

from typing import Any

import strawberry
from strawberry.types import Info

from groundwork.api.graphql.connections import Edge, PageInfo, connection_fields
from groundwork.api.graphql.context import GraphQLContext, as_graphql_error, require
from groundwork.api.graphql.enums import (
    ContentClass,
    ContextSubjectType,
    CorpusSourceKind,
    DateTime,
    DocumentDateSource,
    ProvenanceQuality,
)
from groundwork.api.resources.evidence_search import listed_source_resource, stored_passage_resource
from groundwork.domain.errors import GroundworkError
from groundwork.services.evidence_search import corpus_reads
from groundwork.services.evidence_search import search as service


@strawberry.input(description="A project, engagement or portfolio; its type is `project`, `engagement` or `portfolio`.")
class ContextEngineSubjectInput:
    type: ContextSubjectType
    id: strawberry.ID


@strawberry.type
class CorpusSourceRef:
    id: strawberry.ID
    title: str
    uri: str
    kind: CorpusSourceKind
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
    provenance_quality: ProvenanceQuality
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
    edges: list[Edge[CorpusPassage]]
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
    kind: CorpusSourceKind | None = None,
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
        **connection_fields([CorpusPassage.of(p) for p in result.passages], result.page, cursors=result.cursors),
        truncated=result.truncated,
        total_count=result.total_count,
    )


@strawberry.type(description="A passage's source, with the date its document states (else its ingestion) and which.")
class ContextPassageSource:
    id: strawberry.ID
    title: str
    uri: str
    kind: CorpusSourceKind
    classification: ContentClass
    version_id: strawberry.ID
    document_date: DateTime | None
    document_date_source: DocumentDateSource
    ingested_at: DateTime | None


@strawberry.type(description="An opened passage: exactly as stored, with its source, position and neighbours.")
class ContextPassage:
    id: strawberry.ID
    project_id: strawberry.ID
    source: ContextPassageSource
    page: int | None
    paragraph: int | None
    section: str | None
    span: TextRange
    text: str
    provenance_quality: ProvenanceQuality
    segmenter_version: str
    previous_passage_id: strawberry.ID | None
    next_passage_id: strawberry.ID | None

    @classmethod
    def of(cls, d: dict[str, Any]) -> ContextPassage:
        source = d["source"]
        return cls(
            id=strawberry.ID(d["id"]),
            project_id=strawberry.ID(d["projectId"]),
            source=ContextPassageSource(
                id=strawberry.ID(source["id"]),
                title=source["title"],
                uri=source["uri"],
                kind=source["kind"],
                classification=source["classification"],
                version_id=strawberry.ID(source["versionId"]),
                document_date=source["documentDate"],
                document_date_source=source["documentDateSource"],
                ingested_at=source["ingestedAt"],
            ),
            page=d["page"],
            paragraph=d["paragraph"],
            section=d["section"],
            span=TextRange(start=d["span"]["start"], end=d["span"]["end"]),
            text=d["text"],
            provenance_quality=d["provenanceQuality"],
            segmenter_version=d["segmenterVersion"],
            previous_passage_id=d["previousPassageId"],
            next_passage_id=d["nextPassageId"],
        )


@strawberry.type(description="A corpus source with its serving version, document date and passage count.")
class ContextSource:
    id: strawberry.ID
    project_id: strawberry.ID
    uri: str
    title: str
    kind: CorpusSourceKind
    classification: ContentClass
    active_version_id: strawberry.ID | None
    document_date: DateTime | None
    document_date_source: DocumentDateSource | None
    ingested_at: DateTime | None
    passage_count: int | None
    created_at: DateTime
    updated_at: DateTime

    @classmethod
    def of(cls, d: dict[str, Any]) -> ContextSource:
        return cls(
            id=strawberry.ID(d["id"]),
            project_id=strawberry.ID(d["projectId"]),
            uri=d["uri"],
            title=d["title"],
            kind=d["kind"],
            classification=d["classification"],
            active_version_id=d["activeVersionId"],
            document_date=d["documentDate"],
            document_date_source=d["documentDateSource"],
            ingested_at=d["ingestedAt"],
            passage_count=d["passageCount"],
            created_at=d["createdAt"],
            updated_at=d["updatedAt"],
        )


@strawberry.type
class ContextSourceConnection:
    edges: list[Edge[ContextSource]]
    nodes: list[ContextSource]
    page_info: PageInfo


async def context_passage(info: Info[GraphQLContext, Any], id: strawberry.ID) -> ContextPassage | None:
    """One passage by id, or null when unseen; a passage that no longer serves is the error `passage_superseded`."""
    principal = require(info, "context-engine:read")
    try:
        return ContextPassage.of(stored_passage_resource(await corpus_reads.get_passage(principal, str(id))))
    except GroundworkError as error:
        if error.code == "not_found":
            return None
        raise as_graphql_error(error) from None


async def context_sources(
    info: Info[GraphQLContext, Any],
    project_id: strawberry.ID | None = None,
    engagement_id: strawberry.ID | None = None,
    first: int | None = None,
    after: str | None = None,
) -> ContextSourceConnection:
    """Corpus sources of a project, an engagement's visible projects, or every project you read; newest first."""
    principal = require(info, "context-engine:read")
    filters = corpus_reads.SourceFilters(
        str(project_id) if project_id is not None else None,
        str(engagement_id) if engagement_id is not None else None,
        first,
        after,
    )
    try:
        rows, page = await corpus_reads.list_sources(principal, filters)
    except GroundworkError as error:
        raise as_graphql_error(error) from None
    return ContextSourceConnection(
        **connection_fields([ContextSource.of(listed_source_resource(r)) for r in rows], page)
    )
