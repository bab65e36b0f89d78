"""Corpus ingestion steps: segment a source-content version, publish it to the index, activate it, and
roll out segmenter versions.

The order is DESIGN.md's: segment → store passages → index → activate. Publishing appends one change
set to the index log (the previous version of the source out, this one in), which the index applies
in one commit: that commit is the activation as every reader sees it. PostgreSQL then marks the
version active. So a search never misses a source that has a serving version, and never shows two.

Each step is idempotent: a retry after a crash finds its earlier work done and carries on. The
ingest and re-segmentation workflows run them as activities; `groundwork ingest` and `resegment` run
the same steps in-process when no worker polls.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from temporalio.exceptions import ApplicationError

from groundwork.persistence import db
from groundwork.persistence.repositories.evidence_search import index_log, segmentations, sources
from groundwork.persistence.repositories.evidence_search.index_log import IndexChange
from groundwork.search.segmenters import get_segmenter
from groundwork.workflows.evidence_search import Activation, SegmentOutcome


async def segment_version(version_id: str) -> SegmentOutcome:
    """Cut a version with every active or staging segmenter version that has not cut it yet."""
    version = await sources.version_with_source(version_id)
    if version is None:
        raise ApplicationError(f"no source version {version_id}", type="not_found", non_retryable=True)
    if version.status == "inactive":
        return SegmentOutcome(version_id, [], 0)
    wanted = [s.id for s in await segmentations.segmenters() if s.active or s.staging]
    missing = [s for s in wanted if s not in await segmentations.segmentations_of(version_id)]
    if not missing:
        return SegmentOutcome(version_id, [], 0)

    def cut() -> dict[str, list[segmentations.NewPassage]]:
        out = {}
        for segmenter_id in missing:
            segments = get_segmenter(segmenter_id).segment(version.kind, version.text)
            out[segmenter_id] = [
                segmentations.NewPassage(
                    i,
                    s.page,
                    s.paragraph,
                    s.section,
                    s.char_start,
                    s.char_end,
                    s.text,
                    s.section is not None and (i == 0 or segments[i - 1].section != s.section),
                )
                for i, s in enumerate(segments)
            ]
        return out

    cuts = await asyncio.to_thread(cut)
    stored: list[str] = []
    count = 0
    async with db.transaction():
        live = {s.id for s in await segmentations.segmenters(lock="SHARE") if s.active or s.staging}
        for segmenter_id, passages in cuts.items():
            if segmenter_id in live and await segmentations.store_segmentation(
                version, segmenter_id, passages, version.provenance_quality
            ):
                stored.append(segmenter_id)
                count += len(passages)
        # A version that already serves gets its new segmentation indexed now (it stays invisible
        # until its segmenter version is activated); a pending one is indexed when it is published.
        state = await sources.version_state(version_id)
        if stored and state is not None and state.published_version_id == version_id:
            await index_log.append_index_changes([IndexChange("add", version_id, s) for s in stored])
    return SegmentOutcome(version_id, stored, count)


async def publish_version(version_id: str) -> Activation:
    """Make a segmented version the one the index serves for its source: one change set takes the previous
    version out and this one in. `published` (with the log position), `inactive` (a newer version won) or
    `resegment` (a segmenter version it lacks appeared)."""
    async with db.transaction():
        version = await sources.version_state(version_id)
        if version is None:
            raise ApplicationError(f"no source version {version_id}", type="not_found", non_retryable=True)
        await sources.lock_source(version.source_id)
        # Read again under the lock: a concurrent publication may have moved it meanwhile.
        version = await sources.version_state(version_id) or version
        if version.status == "inactive":
            return Activation("inactive")
        if version.published_version_id == version_id and version.index_seq is not None:
            return Activation("published", int(version.index_seq))
        wanted = {s.id for s in await segmentations.segmenters(lock="SHARE") if s.active or s.staging}
        if wanted - await segmentations.segmentations_of(version_id):
            return Activation("resegment")
        current = await sources.published_version_of(version.source_id)
        if current is not None and current.seq > version.seq:
            # A newer version of the same source already serves: this one never will.
            await sources.set_version_status(version_id, "inactive")
            return Activation("inactive")
        changes: list[IndexChange] = []
        if current is not None:
            changes.append(IndexChange("remove_version", version=current.id))
        changes += [IndexChange("add", version_id, s) for s in sorted(wanted)]
        seq = await index_log.append_index_changes(changes)
        await sources.set_published_version(version.source_id, version_id, seq)
        return Activation("published", seq)


async def activate_version(version_id: str) -> Activation:
    """Mark a published version active in PostgreSQL (after the index serves it); the previous one goes inactive."""
    async with db.transaction():
        version = await sources.version_state(version_id)
        if version is None:
            raise ApplicationError(f"no source version {version_id}", type="not_found", non_retryable=True)
        await sources.lock_source(version.source_id)
        version = await sources.version_state(version_id) or version
        seq = int(version.index_seq or 0)
        if version.status == "active":
            return Activation("active", seq)
        if version.status == "inactive":
            return Activation("inactive")
        if version.published_version_id != version_id or version.index_seq is None:
            if version.index_seq is None:
                raise ApplicationError(f"version {version_id} is not published yet", non_retryable=True)
            # A newer version was published meanwhile: this one served briefly, if at all, and never will again.
            await sources.set_version_status(version_id, "inactive")
            return Activation("inactive")
        current = await sources.active_version_of(version.source_id)
        if current is not None:
            await sources.set_version_status(current.id, "inactive")
        await sources.set_version_status(version_id, "active")
        await sources.refresh_source_from_version(version.source_id, version_id)
        return Activation("active", seq)


async def publish_and_activate(version_id: str) -> Activation:
    """Both steps at once, for ingest workflows started before publication came first (replay only)."""
    published = await publish_version(version_id)
    if published.status != "published":
        return published
    return await activate_version(version_id)


async def stage_segmenter_version(segmenter_id: str) -> str:
    """Register a segmenter version as staging; `active` if it already serves."""
    try:
        segmenter = get_segmenter(segmenter_id)
    except ValueError as exc:
        raise ApplicationError(str(exc), type="unknown_segmenter", non_retryable=True) from None
    async with db.transaction():
        rows = await segmentations.segmenters(lock="UPDATE")
        if any(r.id == segmenter_id and r.active for r in rows):
            return "active"
        if other := [r.id for r in rows if r.staging and r.id != segmenter_id]:
            raise ApplicationError(
                f"segmenter version {other[0]} is already being rolled out", type="conflict", non_retryable=True
            )
        await segmentations.stage_segmenter(segmenter_id, segmenter.name, segmenter.version)
        # A segmenter version staged again (after it was retired) already cut some versions: those
        # passages left the index when it retired, so they are indexed again, still invisible.
        if cut := await segmentations.active_versions_cut_by(segmenter_id):
            await index_log.append_index_changes([IndexChange("add", v, segmenter_id) for v in cut])
    return "staging"


async def resegment_versions(segmenter_id: str, limit: int, on_version: Callable[[str], None] | None = None) -> int:
    """Cut up to `limit` active versions the segmenter version lacks; returns how many it cut."""
    version_ids = await segmentations.active_versions_lacking(segmenter_id, limit)
    for version_id in version_ids:
        await segment_version(version_id)
        if on_version is not None:
            on_version(version_id)
    return len(version_ids)


async def activate_segmenter_version(segmenter_id: str) -> Activation:
    """Switch to the staging segmenter version once every active version has its passages."""
    async with db.transaction():
        rows = await segmentations.segmenters(lock="UPDATE")
        row = next((r for r in rows if r.id == segmenter_id), None)
        if row is None:
            raise ApplicationError(f"segmenter version {segmenter_id} is not staged", non_retryable=True)
        if row.active:
            return Activation("active", row.switch_seq or await index_log.last_index_change())
        if await segmentations.active_versions_lacking(segmenter_id, 1):
            return Activation("resegment")
        replaced = await segmentations.switch_active_segmenter(segmenter_id)
        changes = [IndexChange("remove_segmenter", segmenter=r) for r in replaced]
        # Readers serve the new version from the commit that holds this change set on: every staged
        # passage was logged before it, so a snapshot that has it has them all.
        seq = await index_log.append_index_changes(changes) if changes else await index_log.last_index_change()
        await segmentations.set_segmenter_switch_seq(segmenter_id, seq)
        return Activation("active", seq)
