"""REST: evidence search over the corpus."""

from __future__ import annotations

from typing import Annotated, Any

import msgspec
from litestar import Controller, Request, post

from groundwork.api.corpus_resources import search_answer
from groundwork.api.documented import documented
from groundwork.domain.corpus import SUBJECT_TYPES
from groundwork.domain.principals import Principal
from groundwork.services import corpus_search

READ = {"scope": "context-engine:read"}


class SubjectRefBody(msgspec.Struct, forbid_unknown_fields=True):
    type: Annotated[str, documented(enum=list(SUBJECT_TYPES))]
    id: str


class ContextSearchBody(msgspec.Struct, forbid_unknown_fields=True):
    subject_ref: SubjectRefBody
    query: str
    limit: int | None = None
    cursor: str | None = None
    source_id: str | None = None
    kind: str | None = None


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
    async def search(self, request: Request[Principal, Any, Any], data: ContextSearchBody) -> dict[str, Any]:
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
        return search_answer(result)
