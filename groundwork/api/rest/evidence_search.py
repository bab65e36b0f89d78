"""REST: evidence search over the corpus, and opening its evidence (a passage by id, the list of sources)."""

from __future__ import annotations

from typing import Annotated, Any

import msgspec
from litestar import Controller, Request, Response, get, post
from litestar.params import Parameter
from litestar.serialization import encode_json

from groundwork.api.documented import NOT_BLANK, SEARCHABLE, documented
from groundwork.api.encoded_json import EncodedJSON
from groundwork.api.resources.evidence_search import listed_source_resource, search_answer, stored_passage_resource
from groundwork.api.rest.documents.common import typed
from groundwork.api.rest.documents.evidence_search import CorpusSourceList, PassageSearchList, StoredPassageDocument
from groundwork.domain.evidence_search.corpus import MAX_QUERY_CHARS, SOURCE_KINDS, SUBJECT_TYPES
from groundwork.domain.pagination import MAX_LIMIT
from groundwork.domain.tenancy.principals import Principal
from groundwork.services.evidence_search import corpus_reads
from groundwork.services.evidence_search import search as corpus_search

READ = {"scope": "context-engine:read"}


# An id: not blank (the services refuse blank ids and NUL before looking anything up).
Id = Annotated[str, documented(minLength=1, pattern=NOT_BLANK)]


class SubjectRefBody(msgspec.Struct, forbid_unknown_fields=True):
    type: Annotated[str, documented(enum=list(SUBJECT_TYPES))]
    id: Id


class ContextSearchBody(msgspec.Struct, forbid_unknown_fields=True):
    subject_ref: SubjectRefBody
    # At least one searchable word (letters or digits); the query language is in the description.
    query: Annotated[str, documented(minLength=1, maxLength=MAX_QUERY_CHARS, pattern=SEARCHABLE)]
    limit: Annotated[int, documented(minimum=1, maximum=MAX_LIMIT)] | None = None
    cursor: str | None = None
    source_id: Id | None = None
    kind: Annotated[str, documented(enum=list(SOURCE_KINDS))] | None = None


class ContextSearchController(Controller):
    path = "/api/v1/context"
    tags = ["context engine"]

    @post(
        "/search",
        opt=READ,
        status_code=200,
        summary="Evidence search: ranked exact passages of the corpus, keyset-paginated",
        description=(
            "Full-text (BM25, English stemming) search over the active passages of the projects of a "
            '`project`, `engagement` or `portfolio` subject that the caller may read. Query language: words, "exact '
            'phrases", +required and -excluded. Returns stored passages only, never a synthesized answer.'
        ),
    )
    async def search(
        self, request: Request[Principal, Any, Any], data: ContextSearchBody
    ) -> Response[PassageSearchList]:
        result = await corpus_search.search_corpus(
            request.user,
            corpus_search.CorpusSearch(
                subject_type=data.subject_ref.type,
                subject_id=data.subject_ref.id,
                query=data.query,
                limit=data.limit,
                cursor=data.cursor,
                source_id=data.source_id,
                kind=data.kind,
            ),
        )
        # Encoded here and sent as it is: Litestar's own response would rebuild headers for every search.
        return EncodedJSON(encode_json(typed(PassageSearchList, search_answer(result))))

    @get(
        "/passages/{passage_id:str}",
        opt={**READ, "problems": (410,)},
        summary="Open a passage: exactly as stored, with its source, position and neighbours",
        description=(
            "The passage an evidence reference (`reference.kind: passage`) or a search hit names, with its source "
            "(and the source's document date), page, paragraph, section, span, provenance quality and the ids of the "
            "passages before and after it. Same visibility as evidence search: 404 for a passage the caller may not "
            "see. A passage of a source version that no longer serves is 410 `passage_superseded`, whose body names "
            "`active_passage_id` (the serving passage with its text, or null) and `active_version_id`."
        ),
    )
    async def passage(self, request: Request[Principal, Any, Any], passage_id: str) -> StoredPassageDocument:
        passage = await corpus_reads.get_passage(request.user, passage_id)
        return typed(StoredPassageDocument, {"data": stored_passage_resource(passage)})

    @get(
        "/sources",
        opt=READ,
        summary="List corpus sources, newest first: serving version, document date, passage count",
        description=(
            "`project_id` or `engagement_id` (neither: every project you may read). `documentDate` is the date the "
            "document states about itself, else when its serving version was ingested; `documentDateSource` says "
            "which (`date_line`, `html_meta`, `html_time`, `pdf_metadata`, `title`, `file_name` or `ingestion`)."
        ),
    )
    async def sources(
        self,
        request: Request[Principal, Any, Any],
        project_id: str | None = None,
        engagement_id: str | None = None,
        limit: int | None = Parameter(default=None, schema_extra={"minimum": 1, "maximum": MAX_LIMIT}),
        cursor: str | None = None,
    ) -> CorpusSourceList:
        rows, page = await corpus_reads.list_sources(
            request.user, corpus_reads.SourceFilters(project_id, engagement_id, limit, cursor)
        )
        return typed(CorpusSourceList, {"data": [listed_source_resource(r) for r in rows], "page": page})
