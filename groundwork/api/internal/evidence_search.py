"""Internal API: providers contribute corpus sources (served on the internal listener only)."""

from __future__ import annotations

import base64
import binascii
from typing import Any

import msgspec
from litestar import Controller, Request, Response, post
from litestar.params import Parameter

from groundwork.api.resources.evidence_search import source_resource, version_resource
from groundwork.api.rest.documents.common import typed
from groundwork.api.rest.documents.internal import SourceContributionDocument
from groundwork.domain.errors import FieldError, InvalidRequest
from groundwork.domain.tenancy.principals import Principal
from groundwork.services.evidence_search import sources as corpus_sources

# Only provider principals reach it (customer keys get 404), with the contribute scope.
CONTRIBUTE = {"scope": "context-engine:contribute", "idempotent": True, "internal": True}


class CorpusSourceBody(msgspec.Struct, forbid_unknown_fields=True):
    project_id: str
    uri: str
    kind: str
    content: str | None = None
    content_base64: str | None = None
    title: str | None = None
    owner: str | None = None
    provenance_quality: str | None = None
    classification: str | None = None


def _content(data: CorpusSourceBody) -> bytes:
    if (data.content is None) == (data.content_base64 is None):
        raise InvalidRequest(
            "Send the source's content.", [FieldError("content", "give exactly one of content, content_base64")]
        )
    if data.content is not None:
        if data.kind == "pdf":
            raise InvalidRequest("A PDF is binary.", [FieldError("content_base64", "send a PDF base64-encoded")])
        return data.content.encode("utf-8")
    try:
        return base64.b64decode(data.content_base64 or "", validate=True)
    except (binascii.Error, ValueError):
        raise InvalidRequest("Invalid base64.", [FieldError("content_base64", "is not valid base64")]) from None


class CorpusSourceController(Controller):
    path = "/internal/v1/corpus"
    tags = ["internal: corpus providers"]

    @post(
        "/sources",
        opt=CONTRIBUTE,
        summary="Contribute a source to a project's corpus (internal provider API)",
        description=(
            "The source is identified by `uri` within the project: new content makes a new version, identical "
            "content changes nothing. Answers 201 once the version serves; 202 when the version is stored but not "
            "serving yet (still ingesting after `wait` seconds, or its ingest failed: the body shows the version's "
            "status, and sending the source again retries it); 200 when unchanged (or only `classification` changed: "
            "`general`, `financial` or `staffing`; omitted keeps a known source's classification)."
        ),
    )
    async def contribute(
        self,
        request: Request[Principal, Any, Any],
        data: CorpusSourceBody,
        wait: int = Parameter(default=10, ge=0, le=30),
    ) -> Response[SourceContributionDocument]:
        upload = corpus_sources.SourceUpload(
            project_id=data.project_id,
            uri=data.uri,
            kind=data.kind,
            content=_content(data),
            title=data.title,
            owner=data.owner,
            provenance_quality=data.provenance_quality,
            classification=data.classification,
        )
        contribution = await corpus_sources.contribute_source(
            request.user,
            upload,
            temporal=request.app.state.temporal,
            task_queue=request.app.state.settings.temporal_task_queue,
            wait_seconds=wait,
        )
        body = {
            "data": {
                "outcome": contribution.outcome,
                "source": source_resource(contribution.version),
                "version": version_resource(contribution.version),
            }
        }
        document = typed(SourceContributionDocument, body)
        if contribution.status_code in (201, 202):
            # The internal API reads no source back: `Location` is the public list that shows it.
            location = f"/api/v1/context/sources?project_id={contribution.version.project_id}"
            return Response(document, status_code=contribution.status_code, headers={"Location": location})
        return Response(document, status_code=contribution.status_code)
