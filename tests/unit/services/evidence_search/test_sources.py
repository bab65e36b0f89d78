"""A provider's contribution answers 202, not 500, when its ingest fails or Temporal fails while it waits."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest
from temporalio.client import WorkflowFailureError
from temporalio.exceptions import ApplicationError
from temporalio.service import RPCError, RPCStatusCode

from groundwork.domain.tenancy.principals import Principal
from groundwork.persistence.repositories.evidence_search.sources import VersionSummaryRow
from groundwork.services.evidence_search import sources as corpus_sources

_AT = datetime(2026, 11, 1, tzinfo=UTC)
VERSION = VersionSummaryRow(
    id="ver_1",
    seq=1,
    kind="markdown",
    content_hash="sha256:0",
    byte_size=3,
    status="pending",
    created_at=_AT,
    ingested_at=None,
    source_id="src_1",
    project_id="prj_1",
    uri="a.md",
    title="A",
    owner="provider",
    classification="general",
    source_created_at=_AT,
    source_updated_at=_AT,
    passage_count=None,
    active_version_id=None,
)


class _Handle:
    def __init__(self, error: BaseException) -> None:
        self.error = error

    async def result(self) -> Any:
        raise self.error


class _Temporal:
    async def get(self) -> object:
        return object()


@pytest.mark.parametrize(
    "error",
    [
        WorkflowFailureError(cause=ApplicationError("segmenter versions kept changing; ingest again")),
        RPCError("connection reset", RPCStatusCode.UNAVAILABLE, b""),
    ],
)
async def test_an_ingest_that_fails_while_waiting_is_accepted_not_a_server_error(
    monkeypatch: pytest.MonkeyPatch, error: BaseException
) -> None:
    async def writable(*_: Any) -> None:
        return None  # the provider may write the project

    async def receive(*_: Any, **__: Any) -> corpus_sources.Received:
        return corpus_sources.Received("added", "src_1", "ver_1")

    async def start(*_: Any) -> _Handle:
        return _Handle(error)

    async def summary(version_id: str) -> VersionSummaryRow:
        assert version_id == "ver_1"
        return VERSION

    monkeypatch.setattr(corpus_sources, "require_project_permission", writable)
    monkeypatch.setattr(corpus_sources, "receive_source", receive)
    monkeypatch.setattr(corpus_sources, "start_ingest", start)
    monkeypatch.setattr(corpus_sources.source_rows, "version_summary", summary)
    upload = corpus_sources.SourceUpload(project_id="prj_1", uri="a.md", kind="markdown", content=b"# A")

    principal = Principal("key_1", "wsp_1", "provider", "provider", False, "key_1", frozenset())
    temporal: Any = _Temporal()

    contribution = await corpus_sources.contribute_source(
        principal, upload, temporal=temporal, task_queue="q", wait_seconds=5
    )

    assert (contribution.status_code, contribution.outcome, contribution.version) == (202, "added", VERSION)
