"""REST: evidence search over the corpus."""

from __future__ import annotations

from typing import Annotated, Any

import msgspec
from litestar import Controller, Request, Response, post
from litestar.serialization import encode_json

from groundwork.api.documented import NOT_BLANK, SEARCHABLE, documented
from groundwork.api.encoded_json import EncodedJSON
from groundwork.api.resources.evidence_search import search_answer
from groundwork.domain.evidence_search.corpus import MAX_QUERY_CHARS, SOURCE_KINDS, SUBJECT_TYPES
from groundwork.domain.pagination import MAX_LIMIT
from groundwork.domain.tenancy.principals import Principal
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
    async def search(self, request: Request[Principal, Any, Any], data: ContextSearchBody) -> Response[dict[str, Any]]:
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
        return EncodedJSON(encode_json(search_answer(result)))
