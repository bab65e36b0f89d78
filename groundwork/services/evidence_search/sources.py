"""Corpus sources: receive content (extract, hash, version), then ingest it through `CorpusIngestWorkflow`.

The internal provider API (`POST /internal/v1/corpus/sources`), `groundwork ingest` and the demo
seeder all receive through `receive_source`. A source's identity is its uri within its project;
content identical to the latest version is a no-op, anything else is a new pending version.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import time
from dataclasses import dataclass
from datetime import timedelta
from pathlib import PurePosixPath
from typing import Any

from temporalio.client import Client, WorkflowFailureError, WorkflowHandle
from temporalio.common import WorkflowIDConflictPolicy
from temporalio.service import RPCError

from groundwork.domain.context_engine.model import CONTENT_CLASSES
from groundwork.domain.errors import FieldError, ServiceUnavailable, ValidationFailed
from groundwork.domain.evidence_search.corpus import (
    MAX_INGEST_ROUNDS,
    SOURCE_KINDS,
    default_provenance_quality,
    provenance_quality_problem,
)
from groundwork.domain.tenancy.principals import Principal
from groundwork.persistence import db
from groundwork.persistence.repositories.evidence_search import index_log
from groundwork.persistence.repositories.evidence_search import sources as source_rows
from groundwork.persistence.repositories.evidence_search.index_log import IndexChange
from groundwork.persistence.repositories.evidence_search.sources import VersionSummaryRow
from groundwork.platform.search_replica.corpus_projection import catch_up_index
from groundwork.platform.temporal.client import TemporalConnection
from groundwork.search.corpus_index import CorpusIndex, IndexBusy, corpus_index
from groundwork.search.extraction import ExtractionError, extract
from groundwork.services.evidence_search.ingest import activate_version, publish_version, segment_version
from groundwork.services.tenancy.project_access import CONTEXT_WRITE, require_project_permission
from groundwork.workflows.evidence_search import (
    CorpusIngestInput,
    CorpusIngestResult,
    CorpusIngestWorkflow,
    ingest_workflow_id,
)
from groundwork.workflows.search_attributes import workspace_attributes

log = logging.getLogger(__name__)

MAX_SOURCE_BYTES = 50 * 1024 * 1024
MAX_URI_CHARS = 2048
MAX_TITLE_CHARS = 500
MAX_OWNER_CHARS = 200


class IngestUnavailable(ServiceUnavailable):
    """Temporal cannot be reached: the version is stored and will be ingested when it is sent again."""


@dataclass(frozen=True)
class SourceUpload:
    """Content a contributor sends for a source of a project."""

    project_id: str
    uri: str
    kind: str
    content: bytes
    title: str | None = None
    owner: str | None = None
    provenance_quality: str | None = None
    # None keeps a known source's classification (a new source is `general`).
    classification: str | None = None


@dataclass(frozen=True)
class Received:
    """`added`: a new version is pending; `unchanged`: identical to the version that serves;
    `pending`: identical to a version still being ingested; `reclassified`: identical content, and the
    source's classification changed (its passages are indexed again with it)."""

    outcome: str
    source_id: str
    version_id: str


def _upload_errors(upload: SourceUpload) -> list[FieldError]:
    errors = []
    if upload.kind not in SOURCE_KINDS:
        errors.append(FieldError("kind", f"must be one of {', '.join(SOURCE_KINDS)}"))
    uri = upload.uri
    if not uri.strip() or len(uri) > MAX_URI_CHARS or any(ord(c) < 32 for c in uri):
        errors.append(FieldError("uri", f"must be 1 to {MAX_URI_CHARS} printable characters"))
    if upload.title is not None and not (
        0 < len(upload.title.strip()) <= MAX_TITLE_CHARS and "\x00" not in upload.title
    ):
        errors.append(FieldError("title", f"must be 1 to {MAX_TITLE_CHARS} characters (no NUL)"))
    if upload.owner is not None and not (
        0 < len(upload.owner.strip()) <= MAX_OWNER_CHARS and "\x00" not in upload.owner
    ):
        errors.append(FieldError("owner", f"must be 1 to {MAX_OWNER_CHARS} characters (no NUL)"))
    if upload.provenance_quality is not None and upload.kind in SOURCE_KINDS:
        problem = provenance_quality_problem(upload.kind, upload.provenance_quality)
        if problem:
            errors.append(FieldError("provenance_quality", problem))
    if upload.classification is not None and upload.classification not in CONTENT_CLASSES:
        errors.append(FieldError("classification", f"must be one of {', '.join(CONTENT_CLASSES)}"))
    if not upload.content:
        errors.append(FieldError("content", "must not be empty"))
    elif len(upload.content) > MAX_SOURCE_BYTES:
        errors.append(FieldError("content", f"must be at most {MAX_SOURCE_BYTES} bytes"))
    return errors


async def receive_source(upload: SourceUpload, *, workspace_id: str, received_by: str) -> Received:
    """Validate and extract `upload`, and store it as a new pending version unless it is unchanged."""
    if errors := _upload_errors(upload):
        raise ValidationFailed("The source is not valid.", errors)
    try:
        extracted = await asyncio.to_thread(extract, upload.kind, upload.content)
    except ExtractionError as exc:
        raise ValidationFailed("The content cannot be read.", [FieldError("content", str(exc))]) from None
    content_hash = hashlib.sha256(upload.content).hexdigest()
    title = (upload.title or extracted.title or PurePosixPath(upload.uri).name or upload.uri).strip()[:MAX_TITLE_CHARS]
    owner = (upload.owner or received_by).strip()
    async with db.transaction():
        source = await source_rows.upsert_source_for_update(
            workspace_id=workspace_id,
            project_id=upload.project_id,
            uri=upload.uri,
            title=title,
            kind=upload.kind,
            owner=owner,
            classification=upload.classification or "general",
        )
        reclassified = upload.classification is not None and upload.classification != source.classification
        if reclassified:
            units = await source_rows.set_source_classification(source.id, upload.classification or "general")
            if units:
                # Until an index snapshot holds this change set, readers apply the stricter of both classes.
                seq = await index_log.append_index_changes([IndexChange("add", v, g) for v, g in units])
                await source_rows.set_classification_seq(source.id, seq)
        latest = await source_rows.latest_version(source.id)
        if (
            latest is not None
            and latest.content_hash == content_hash
            and latest.kind == upload.kind
            and latest.status in ("active", "pending")
        ):
            outcome = "unchanged" if latest.status == "active" else "pending"
            if reclassified and outcome == "unchanged":
                outcome = "reclassified"
            return Received(outcome, source.id, latest.id)
        version = await source_rows.insert_version(
            source_id=source.id,
            kind=upload.kind,
            content_hash=content_hash,
            byte_size=len(upload.content),
            title=title,
            text=extracted.text,
            provenance_quality=upload.provenance_quality or default_provenance_quality(upload.kind),
            received_by=received_by,
        )
        await source_rows.update_source_owner(source.id, owner)
    return Received("added", source.id, version.id)


async def start_ingest(client: Client, task_queue: str, version_id: str, workspace_id: str) -> WorkflowHandle[Any, Any]:
    """Start (or join) the version's ingest workflow."""
    return await client.start_workflow(
        CorpusIngestWorkflow.run,
        CorpusIngestInput(version_id),
        id=ingest_workflow_id(version_id),
        task_queue=task_queue,
        search_attributes=workspace_attributes(workspace_id),
        id_conflict_policy=WorkflowIDConflictPolicy.USE_EXISTING,
        execution_timeout=timedelta(hours=1),
    )


async def ingest_without_index(version_id: str) -> CorpusIngestResult:
    """Segment, publish and activate a version in PostgreSQL only, for writers that leave the index to the
    process following its change log (the demo seeder): that process indexes the change set later."""
    published = await publish_in_process(version_id)
    if published.status != "published":
        return published
    return await activate_in_process(published)


async def publish_in_process(version_id: str) -> CorpusIngestResult:
    """Segment and publish a version (again if a segmenter version appeared meanwhile): `published` with its
    change-log position, or `inactive` when a newer version of the source won."""
    passages, seq = 0, 0
    status = "resegment"
    for _ in range(MAX_INGEST_ROUNDS):
        passages += (await segment_version(version_id)).passages
        publication = await publish_version(version_id)
        status, seq = publication.status, publication.index_seq
        if status != "resegment":
            break
    return CorpusIngestResult(version_id, status, passages, seq)


async def index_in_process(seq: int) -> None:
    """Bring the corpus index up to change-log position `seq` here, or wait for the worker that holds it."""
    target = corpus_index()
    try:
        await catch_up_index(target)
    except IndexBusy:
        log.info("the corpus index is held by a worker; waiting for it to reach position %s", seq)
        await wait_until_indexed(target, seq, INDEX_WAIT_SECONDS)


async def activate_in_process(published: CorpusIngestResult) -> CorpusIngestResult:
    """Mark a published version active in PostgreSQL (once the index serves it)."""
    activation = await activate_version(published.version_id)
    return CorpusIngestResult(published.version_id, activation.status, published.passages, activation.index_seq)


INDEX_WAIT_SECONDS = 30.0


async def wait_until_indexed(index: CorpusIndex, seq: int, timeout: float) -> bool:
    """Wait until the serving snapshot of `index` holds log position `seq`; False on timeout."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        index.mark_stale()
        snapshot = await asyncio.to_thread(index.snapshot)
        if snapshot is not None and snapshot.applied_seq >= seq:
            return True
        await asyncio.sleep(0.1)
    log.warning("the corpus index did not reach position %s in %.0f s; activating anyway", seq, timeout)
    return False


async def worker_polls(client: Client, task_queue: str) -> bool:
    """Whether a worker polls `task_queue` now (so a workflow started there will run)."""
    from temporalio.api.enums.v1 import TaskQueueType
    from temporalio.api.taskqueue.v1 import TaskQueue
    from temporalio.api.workflowservice.v1 import DescribeTaskQueueRequest

    try:
        response = await client.workflow_service.describe_task_queue(
            DescribeTaskQueueRequest(
                namespace=client.namespace,
                task_queue=TaskQueue(name=task_queue),
                task_queue_type=TaskQueueType.TASK_QUEUE_TYPE_WORKFLOW,
            ),
            timeout=timedelta(seconds=3),
        )
    except RPCError:
        return False
    # Temporal keeps a poller listed for minutes after its worker died; a live one polls at least every ~70 s.
    fresh_after = time.time() - 90
    return any(p.last_access_time.ToSeconds() >= fresh_after for p in response.pollers)


@dataclass(frozen=True)
class Contribution:
    """What a provider's contribution did: the HTTP status it deserves, the outcome, the version now."""

    status_code: int
    outcome: str
    version: VersionSummaryRow


async def contribute_source(
    principal: Principal,
    upload: SourceUpload,
    *,
    temporal: TemporalConnection,
    task_queue: str,
    wait_seconds: float,
) -> Contribution:
    """Receive a provider's source and ingest it; waits up to `wait_seconds` for it to serve.

    The status is 201 when the new version serves, 202 while it is still being ingested (also when the
    ingest failed or Temporal failed while we waited: the version is stored, sending it again retries), 200
    when the content was unchanged (or a newer version of the source won meanwhile).
    """
    # Only providers reach the internal API, and a provider writes only to projects its role lets it write.
    await require_project_permission(principal, upload.project_id, CONTEXT_WRITE, "contributing corpus sources")
    received = await receive_source(upload, workspace_id=principal.workspace_id, received_by=principal.id)
    status = 200
    if received.outcome not in ("unchanged", "reclassified"):
        try:
            handle = await start_ingest(await temporal.get(), task_queue, received.version_id, principal.workspace_id)
        except (RPCError, OSError, TimeoutError, RuntimeError) as exc:
            raise IngestUnavailable(f"Ingestion cannot start now ({exc}); send the source again later.") from None
        status = 202
        if wait_seconds > 0:
            try:
                result = await asyncio.wait_for(handle.result(), wait_seconds)
                status = 201 if result.status == "active" else 200
            except TimeoutError:
                pass
            except (WorkflowFailureError, RPCError) as exc:
                # The version is stored either way and the summary reports its real status; a failed ingest
                # leaves it pending, and sending the source again starts a new run: not a server error.
                log.warning("ingest of version %s did not complete: %s", received.version_id, exc)
    summary = await source_rows.version_summary(received.version_id)
    assert summary is not None
    return Contribution(status, received.outcome, summary)
