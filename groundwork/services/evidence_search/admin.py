"""Operator tasks on the corpus: ingest files and folders, rebuild the index, roll out a segmenter version.

`groundwork ingest`, `groundwork reindex`, `groundwork resegment` and the demo seeder use these. Work
goes through Temporal when a worker polls the task queue (durable, visible in the Temporal UI, and
the worker owns the index writer); otherwise the same steps run in this process.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path

from temporalio.client import Client, WorkflowFailureError
from temporalio.common import WorkflowIDConflictPolicy
from temporalio.exceptions import ApplicationError

from groundwork.domain.errors import GroundworkError, NotFound
from groundwork.domain.evidence_search.corpus import kind_for_path
from groundwork.persistence.repositories.tenancy import workspaces as tenancy
from groundwork.persistence.repositories.tenancy.workspaces import ProjectRow
from groundwork.platform.search_replica.corpus_projection import catch_up_index, rebuild_index
from groundwork.search.corpus_index import CorpusIndex, IndexBusy, corpus_index
from groundwork.services.evidence_search.ingest import (
    activate_segmenter_version,
    resegment_versions,
    stage_segmenter_version,
)
from groundwork.services.evidence_search.sources import (
    MAX_SOURCE_BYTES,
    SourceUpload,
    activate_in_process,
    index_in_process,
    ingest_without_index,
    publish_in_process,
    receive_source,
    start_ingest,
)
from groundwork.workflows.evidence_search import (
    CorpusIngestResult,
    CorpusResegmentInput,
    CorpusResegmentResult,
    CorpusResegmentWorkflow,
    resegment_workflow_id,
)
from groundwork.workflows.search_attributes import workspace_attributes

log = logging.getLogger(__name__)
_CONCURRENT_INGESTS = 4


@dataclass(frozen=True)
class FileSource:
    """A file to ingest, the uri it is known by, and its kind (None: a type Groundwork does not read)."""

    path: Path
    uri: str
    kind: str | None


@dataclass
class FileOutcome:
    """What happened to one file: added, unchanged, skipped or failed (with the reason)."""

    uri: str
    outcome: str
    passages: int = 0
    reason: str | None = None


@dataclass
class IngestReport:
    """Every file's outcome, in the order given."""

    files: list[FileOutcome] = field(default_factory=list)

    def count(self, outcome: str) -> int:
        """How many files had `outcome`."""
        return sum(1 for f in self.files if f.outcome == outcome)

    @property
    def passages_added(self) -> int:
        """Passages stored for added sources."""
        return sum(f.passages for f in self.files if f.outcome == "added")


def collect_files(paths: list[Path], uri: str | None = None) -> list[FileSource]:
    """Files of `paths` (folders walked, hidden entries skipped) with their uris: relative to the folder given."""
    if uri is not None and (len(paths) != 1 or not paths[0].is_file()):
        raise ValueError("--uri names one source: give exactly one file with it")
    found: list[FileSource] = []
    for path in paths:
        if path.is_dir():
            for file in sorted(p for p in path.rglob("*") if p.is_file()):
                relative = file.relative_to(path)
                if any(part.startswith(".") for part in relative.parts):
                    continue
                found.append(FileSource(file, relative.as_posix(), kind_for_path(file)))
        else:
            found.append(FileSource(path, uri or path.name, kind_for_path(path)))
    return found


async def resolve_project(project_ref: str, workspace_slug: str | None) -> ProjectRow:
    """A project by id (`prj_...`), or by key within `workspace_slug`."""
    if project_ref.startswith("prj_"):
        project = await tenancy.project_by_id(project_ref)
    elif workspace_slug is None:
        raise NotFound(f"{project_ref!r} is not a project id; give --workspace to find it by key")
    else:
        project = await tenancy.project_by_key(workspace_slug, project_ref)
    if project is None:
        raise NotFound(f"no project {project_ref!r}")
    return project


async def ingest_files(
    project: ProjectRow,
    files: list[FileSource],
    *,
    owner: str,
    client: Client | None,
    task_queue: str,
    classification: str | None = None,
    index: bool = True,
    progress: Callable[[FileOutcome], None] | None = None,
) -> IngestReport:
    """Receive and ingest every file into the project: through `client`'s workers, or here when it is None."""
    report = IngestReport([FileOutcome(f.uri, "pending") for f in files])
    published: list[tuple[int, CorpusIngestResult]] = []
    seen: set[str] = set()
    gate = asyncio.Semaphore(_CONCURRENT_INGESTS)

    async def one(position: int, file: FileSource) -> None:
        outcome = report.files[position]
        try:
            if file.kind is None:
                outcome.outcome, outcome.reason = "skipped", f"unsupported file type {file.path.suffix or '(none)'}"
                return
            if file.uri in seen:
                outcome.outcome, outcome.reason = "failed", "another file has the same uri"
                return
            seen.add(file.uri)
            size = file.path.stat().st_size
            if size > MAX_SOURCE_BYTES:
                outcome.outcome, outcome.reason = "failed", f"larger than {MAX_SOURCE_BYTES} bytes"
                return
            async with gate:
                content = await asyncio.to_thread(file.path.read_bytes)
                received = await receive_source(
                    SourceUpload(project.id, file.uri, file.kind, content, owner=owner, classification=classification),
                    workspace_id=project.workspace_id,
                    received_by=owner,
                )
                if received.outcome in ("unchanged", "reclassified"):
                    outcome.outcome = received.outcome
                    return
                if client is not None:
                    handle = await start_ingest(client, task_queue, received.version_id, project.workspace_id)
                    result = await handle.result()
                elif index:
                    # Published now; indexed with every other file at the end, then activated (index first).
                    result = await publish_in_process(received.version_id)
                    if result.status == "published":
                        published.append((position, result))
                        return
                else:
                    result = await ingest_without_index(received.version_id)
                outcome.outcome = "added" if result.status == "active" else "unchanged"
                outcome.passages = result.passages
        except GroundworkError as error:
            reasons = [e.get("message", "") for e in error.extra.get("errors", [])]
            outcome.outcome, outcome.reason = "failed", "; ".join(r for r in reasons if r) or error.detail
        except OSError as error:
            outcome.outcome, outcome.reason = "failed", error.strerror or str(error)
        except (WorkflowFailureError, ApplicationError) as error:
            cause = getattr(error, "cause", None) or error
            outcome.outcome, outcome.reason = "failed", f"ingestion failed: {getattr(cause, 'message', cause)}"
        finally:
            if progress is not None and outcome.outcome != "pending":
                progress(outcome)

    await asyncio.gather(*(one(i, f) for i, f in enumerate(files)))
    if client is None and index and (published or report.count("reclassified")):
        # One catch-up indexes every file published above (a few large commits, not one per file).
        await index_everything_published(max((r.index_seq for _, r in published), default=0))

        async def activate(position: int, result: CorpusIngestResult) -> None:
            outcome = report.files[position]
            try:
                async with gate:
                    activated = await activate_in_process(result)
                outcome.outcome = "added" if activated.status == "active" else "unchanged"
                outcome.passages = activated.passages
            except (GroundworkError, ApplicationError) as error:
                reason = error.message if isinstance(error, ApplicationError) else error.detail
                outcome.outcome, outcome.reason = "failed", f"activation failed: {reason}"
            finally:
                if progress is not None:
                    progress(outcome)

        # Each activation is its own short transaction on its own source (the index already serves them all):
        # a few at a time share PostgreSQL's commit flushes instead of waiting for one each.
        await asyncio.gather(*(activate(position, result) for position, result in published))
    return report


async def index_everything_published(seq: int) -> None:
    """Index every published change set here (or wait for the worker holding the index to reach `seq`), then
    let the index's merges finish."""
    target = corpus_index()
    try:
        await index_in_process(seq)
    finally:
        target.release_writer()


async def catch_up_in_process(index: CorpusIndex | None = None) -> bool:
    """Bring the index up to date here if no other process writes it; False when a worker does."""
    target = index or corpus_index()
    try:
        await catch_up_index(target)
    except IndexBusy:
        log.info("a running worker holds the corpus index; it applies the changes itself")
        return False
    finally:
        target.release_writer()
    return True


async def reindex(index: CorpusIndex, progress: Callable[[int], None] | None = None) -> tuple[int, bool]:
    """Rebuild the index from PostgreSQL as a new generation and switch to it; (passages, caught up here)."""
    written = await rebuild_index(index, progress)
    return written, await catch_up_in_process(index)


async def resegment(
    segmenter_id: str, *, activate: bool, client: Client | None, task_queue: str
) -> CorpusResegmentResult:
    """Cut the corpus with a segmenter version and (unless `activate` is False) switch to it."""
    if client is not None:
        return await client.execute_workflow(
            CorpusResegmentWorkflow.run,
            CorpusResegmentInput(segmenter_id, activate=activate),
            id=resegment_workflow_id(segmenter_id),
            task_queue=task_queue,
            search_attributes=workspace_attributes(None),
            id_conflict_policy=WorkflowIDConflictPolicy.USE_EXISTING,
            execution_timeout=timedelta(hours=12),
        )
    if await stage_segmenter_version(segmenter_id) == "active":
        return CorpusResegmentResult(segmenter_id, "active", 0)
    cut = 0
    while True:
        while batch := await resegment_versions(segmenter_id, 50):
            cut += batch
        if not activate:
            await catch_up_in_process()
            return CorpusResegmentResult(segmenter_id, "staging", cut)
        if (await activate_segmenter_version(segmenter_id)).status == "active":
            await catch_up_in_process()
            return CorpusResegmentResult(segmenter_id, "active", cut)
