"""Activities of corpus ingestion and re-segmentation: thin steps over `services.corpus_ingest` and the index."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from temporalio import activity
from temporalio.exceptions import ApplicationError

from groundwork.activities.heartbeats import beating
from groundwork.platform.search_replica.corpus_projection import catch_up_index
from groundwork.search.corpus_index import IndexBusy, corpus_index
from groundwork.services.evidence_search.ingest import (
    activate_segmenter_version,
    activate_version,
    publish_and_activate,
    publish_version,
    resegment_versions,
    segment_version,
    stage_segmenter_version,
)
from groundwork.workflows.evidence_search import (
    Activation,
    IndexTarget,
    ResegmentBatch,
    SegmenterRef,
    SegmentOutcome,
    VersionRef,
)


@activity.defn(name="corpus_segment_source_version")
async def segment_source_version(ref: VersionRef) -> SegmentOutcome:
    """Segment → store passages, for every segmenter version that serves or is being rolled out."""
    async with beating():
        return await segment_version(ref.version_id)


@activity.defn(name="corpus_publish_source_version")
async def publish_source_version(ref: VersionRef) -> Activation:
    """Log the change set that makes a version serve: its predecessor leaves the index in the same commit."""
    async with beating():
        return await publish_version(ref.version_id)


@activity.defn(name="corpus_activate_published_version")
async def activate_published_version(ref: VersionRef) -> Activation:
    """Once the index serves it, mark the version active in PostgreSQL (its predecessor inactive)."""
    async with beating():
        return await activate_version(ref.version_id)


@activity.defn(name="corpus_activate_source_version")
async def activate_source_version(ref: VersionRef) -> Activation:
    """Publish and activate in one step: only ingest workflows started by an earlier release call it."""
    async with beating():
        return await publish_and_activate(ref.version_id)


@activity.defn(name="corpus_apply_index_changes")
async def apply_index_changes(target: IndexTarget) -> int:
    """Bring this worker's index up to `target.up_to_seq` (or further) and commit; readers reload."""
    async with beating():
        try:
            applied = await catch_up_index(corpus_index())
        except IndexBusy as exc:
            raise ApplicationError(str(exc), type="index_busy") from None
        if applied < target.up_to_seq:
            raise ApplicationError(f"index reached {applied}, not {target.up_to_seq}", type="index_behind")
        return applied


@activity.defn(name="corpus_stage_segmenter")
async def stage_segmenter(ref: SegmenterRef) -> str:
    """Register a segmenter version for roll-out (`staging`)."""
    async with beating():
        return await stage_segmenter_version(ref.segmenter_id)


@activity.defn(name="corpus_resegment_batch")
async def resegment_batch(batch: ResegmentBatch) -> int:
    """Cut a batch of active versions with the staging segmenter version."""
    async with beating():
        return await resegment_versions(batch.segmenter_id, batch.limit, on_version=activity.heartbeat)


@activity.defn(name="corpus_activate_segmenter")
async def activate_segmenter(ref: SegmenterRef) -> Activation:
    """Make the staging segmenter version the active one; the old one's passages leave the index."""
    async with beating():
        return await activate_segmenter_version(ref.segmenter_id)


CORPUS_ACTIVITIES: list[Callable[..., Any]] = [
    segment_source_version,
    publish_source_version,
    activate_published_version,
    activate_source_version,
    apply_index_changes,
    stage_segmenter,
    resegment_batch,
    activate_segmenter,
]
