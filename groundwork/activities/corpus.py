"""Activities of corpus ingestion and re-segmentation, and the index follower they share.

Each activity is idempotent: a retry after a crash finds its earlier work done and carries on.
PostgreSQL holds every passage; the index follows `corpus_index_log` in order, so any process that
holds the index writer (the worker, or the CLI when no worker runs) can bring it up to date.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from temporalio import activity
from temporalio.exceptions import ApplicationError

from groundwork.persistence import db
from groundwork.persistence.repositories import corpus as repo
from groundwork.search.corpus_index import CorpusIndex, GenerationWriter, IndexBusy, IndexedPassage, corpus_index
from groundwork.search.segmenters import get_segmenter

log = logging.getLogger(__name__)

# Rounds of segment → activate before giving up when segmenter versions keep changing underneath.
MAX_INGEST_ROUNDS = 5
_CHANGE_SETS_PER_COMMIT = 200
_UNITS_PER_LOAD = 500
_REBUILD_BATCH = 20_000


@dataclass
class VersionRef:
    """A source-content version to work on."""

    version_id: str


@dataclass
class SegmentOutcome:
    """Which segmenter versions cut the version now, and how many passages they stored."""

    version_id: str
    segmenters: list[str]
    passages: int


@dataclass
class Activation:
    """`active`: the version serves (index log position `index_seq`); `inactive`: a newer one won;
    `resegment`: a segmenter version it lacks appeared, so segment again first."""

    status: str
    index_seq: int = 0


@dataclass
class IndexTarget:
    """Bring the index at least up to this change-log position."""

    up_to_seq: int


@dataclass
class SegmenterRef:
    """A segmenter version (`name@version`)."""

    segmenter_id: str


@dataclass
class ResegmentBatch:
    """Cut up to `limit` active versions that the segmenter version has not cut yet."""

    segmenter_id: str
    limit: int = 50


def _indexed(row: dict[str, Any]) -> IndexedPassage:
    return IndexedPassage(
        seq=int(row["seq"]),
        text=row["text"],
        workspace_id=row["workspace_id"],
        project_id=row["project_id"],
        source_id=row["source_id"],
        version_id=row["source_version_id"],
        segmenter_id=row["segmenter_id"],
        kind=row["kind"],
    )


# -- segment, activate --------------------------------------------------------------------------------------


async def segment_version(version_id: str) -> SegmentOutcome:
    """Cut a version with every active or staging segmenter version that has not cut it yet."""
    version = await repo.version_with_source(version_id)
    if version is None:
        raise ApplicationError(f"no source version {version_id}", type="not_found", non_retryable=True)
    if version["status"] == "inactive":
        return SegmentOutcome(version_id, [], 0)
    wanted = [s["id"] for s in await repo.segmenters() if s["active"] or s["staging"]]
    missing = [s for s in wanted if s not in await repo.segmentations_of(version_id)]
    if not missing:
        return SegmentOutcome(version_id, [], 0)

    def cut() -> dict[str, list[repo.NewPassage]]:
        out = {}
        for segmenter_id in missing:
            segments = get_segmenter(segmenter_id).segment(version["kind"], version["text"])
            out[segmenter_id] = [
                repo.NewPassage(i, s.page, s.paragraph, s.section, s.char_start, s.char_end, s.text)
                for i, s in enumerate(segments)
            ]
        return out

    cuts = await asyncio.to_thread(cut)
    stored: list[str] = []
    count = 0
    async with db.transaction():
        live = {s["id"] for s in await repo.segmenters(lock="SHARE") if s["active"] or s["staging"]}
        for segmenter_id, passages in cuts.items():
            if segmenter_id in live and await repo.store_segmentation(
                version, segmenter_id, passages, version["provenance_quality"]
            ):
                stored.append(segmenter_id)
                count += len(passages)
        # A version that already serves gets its new segmentation indexed now (it stays invisible
        # until its segmenter version is activated); a pending one is indexed when it activates.
        state = await repo.version_state(version_id)
        if stored and state is not None and state["status"] == "active":
            await repo.append_index_changes([{"op": "add", "version": version_id, "segmenter": s} for s in stored])
    return SegmentOutcome(version_id, stored, count)


async def activate_version(version_id: str) -> Activation:
    """Make a segmented version the source's active one; the previous one leaves in the same change set."""
    async with db.transaction():
        version = await repo.version_state(version_id)
        if version is None:
            raise ApplicationError(f"no source version {version_id}", type="not_found", non_retryable=True)
        await repo.lock_source(version["source_id"])
        # Read again under the lock: a concurrent activation may have moved it meanwhile.
        status = (await repo.version_state(version_id) or version)["status"]
        if status == "active":
            return Activation("active", await repo.last_index_change())
        if status == "inactive":
            return Activation("inactive")
        wanted = {s["id"] for s in await repo.segmenters(lock="SHARE") if s["active"] or s["staging"]}
        if wanted - await repo.segmentations_of(version_id):
            return Activation("resegment")
        current = await repo.active_version_of(version["source_id"])
        if current is not None and current["seq"] > version["seq"]:
            # A newer version of the same source already serves: this one never will.
            await repo.set_version_status(version_id, "inactive")
            return Activation("inactive")
        changes: list[dict[str, str]] = []
        if current is not None:
            await repo.set_version_status(current["id"], "inactive")
            changes.append({"op": "remove_version", "version": current["id"]})
        await repo.set_version_status(version_id, "active")
        await repo.refresh_source_from_version(version["source_id"], version_id)
        changes += [{"op": "add", "version": version_id, "segmenter": s} for s in sorted(wanted)]
        return Activation("active", await repo.append_index_changes(changes))


# -- the index ----------------------------------------------------------------------------------------------


async def rebuild_index(index: CorpusIndex, progress: Callable[[int], None] | None = None) -> int:
    """Write a new generation from PostgreSQL and make it serve; returns the passages written."""
    # Changes after this position are replayed on the new generation by the catch-up that follows.
    snapshot = await repo.last_index_change()
    generation = await asyncio.to_thread(index.new_generation)
    written, after = 0, 0
    while rows := await repo.indexable_passages_after(after, _REBUILD_BATCH):
        batch = [_indexed(r) for r in rows]
        await asyncio.to_thread(generation.add_passages, batch)
        written += len(batch)
        after = batch[-1].seq
        if progress is not None:
            progress(len(batch))
    await asyncio.to_thread(generation.commit, snapshot)
    await asyncio.to_thread(index.publish, generation)
    return written


def _replace_units(
    writer: GenerationWriter,
    units: list[tuple[str, str]],
    passages: dict[tuple[str, str], list[IndexedPassage]],
) -> None:
    for version_id, segmenter_id in units:
        writer.replace_unit(version_id, segmenter_id, passages.get((version_id, segmenter_id), []))


async def _apply_change_set(writer: GenerationWriter, changes: list[dict[str, str]]) -> None:
    """Apply one change set's operations in order, loading added passages a bounded chunk at a time."""
    pending: list[tuple[str, str]] = []

    async def flush_adds() -> None:
        for start in range(0, len(pending), _UNITS_PER_LOAD):
            chunk = pending[start : start + _UNITS_PER_LOAD]
            by_unit: dict[tuple[str, str], list[IndexedPassage]] = defaultdict(list)
            for row in await repo.indexable_passages_of(chunk):
                by_unit[(row["source_version_id"], row["segmenter_id"])].append(_indexed(row))
            await asyncio.to_thread(_replace_units, writer, chunk, by_unit)
        pending.clear()

    for change in changes:
        if change["op"] == "add":
            pending.append((change["version"], change["segmenter"]))
            continue
        await flush_adds()
        if change["op"] == "remove_version":
            writer.delete_version(change["version"])
        elif change["op"] == "remove_segmenter":
            writer.delete_segmenter(change["segmenter"])
    await flush_adds()


async def catch_up_index(index: CorpusIndex) -> int:
    """Apply every pending change set to the serving generation (building one if none serves)."""
    async with index.write_lock():
        writer = await asyncio.to_thread(index.writer)
        if writer is None:
            await rebuild_index(index)
            writer = await asyncio.to_thread(index.writer)
            assert writer is not None
        applied = writer.applied_seq
        while change_sets := await repo.index_changes_after(applied, _CHANGE_SETS_PER_COMMIT):
            for _, changes in change_sets:
                await _apply_change_set(writer, changes)
            # Whole change sets per commit: the old version leaves in the commit the new one enters.
            applied = change_sets[-1][0]
            await asyncio.to_thread(writer.commit, applied)
        return applied


async def follow_index_changes(stop: asyncio.Event, interval_seconds: float = 2.0) -> None:
    """Keep this process's index replica up to date until `stop` (the worker runs it beside polling)."""
    index = corpus_index()
    while not stop.is_set():
        try:
            await catch_up_index(index)
        except IndexBusy:
            log.warning("corpus index is held by another process; retrying")
        except Exception:  # the next round retries; never let the follower die silently
            log.exception("corpus index catch-up failed")
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(stop.wait(), interval_seconds)


# -- re-segmentation ----------------------------------------------------------------------------------------


async def stage_segmenter_version(segmenter_id: str) -> str:
    """Register a segmenter version as staging; `active` if it already serves."""
    try:
        segmenter = get_segmenter(segmenter_id)
    except ValueError as exc:
        raise ApplicationError(str(exc), type="unknown_segmenter", non_retryable=True) from None
    async with db.transaction():
        rows = await repo.segmenters(lock="UPDATE")
        if any(r["id"] == segmenter_id and r["active"] for r in rows):
            return "active"
        if other := [r["id"] for r in rows if r["staging"] and r["id"] != segmenter_id]:
            raise ApplicationError(
                f"segmenter version {other[0]} is already being rolled out", type="conflict", non_retryable=True
            )
        await repo.stage_segmenter(segmenter_id, segmenter.name, segmenter.version)
        # A segmenter version staged again (after it was retired) already cut some versions: those
        # passages left the index when it retired, so they are indexed again, still invisible.
        if cut := await repo.active_versions_cut_by(segmenter_id):
            await repo.append_index_changes([{"op": "add", "version": v, "segmenter": segmenter_id} for v in cut])
    return "staging"


async def resegment_versions(segmenter_id: str, limit: int) -> int:
    """Cut up to `limit` active versions the segmenter version lacks; returns how many it cut."""
    version_ids = await repo.active_versions_lacking(segmenter_id, limit)
    for version_id in version_ids:
        await segment_version(version_id)
        if activity.in_activity():
            activity.heartbeat(version_id)
    return len(version_ids)


async def activate_segmenter_version(segmenter_id: str) -> Activation:
    """Switch to the staging segmenter version once every active version has its passages."""
    async with db.transaction():
        rows = await repo.segmenters(lock="UPDATE")
        row = next((r for r in rows if r["id"] == segmenter_id), None)
        if row is None:
            raise ApplicationError(f"segmenter version {segmenter_id} is not staged", non_retryable=True)
        if row["active"]:
            return Activation("active", await repo.last_index_change())
        if await repo.active_versions_lacking(segmenter_id, 1):
            return Activation("resegment")
        replaced = await repo.switch_active_segmenter(segmenter_id)
        changes = [{"op": "remove_segmenter", "segmenter": r} for r in replaced]
        return Activation("active", await repo.append_index_changes(changes) if changes else 0)


# -- Temporal activities ------------------------------------------------------------------------------------


@activity.defn(name="corpus_segment_source_version")
async def segment_source_version(ref: VersionRef) -> SegmentOutcome:
    """Segment → store passages, for every segmenter version that serves or is being rolled out."""
    return await segment_version(ref.version_id)


@activity.defn(name="corpus_activate_source_version")
async def activate_source_version(ref: VersionRef) -> Activation:
    """Activate a version; its predecessor becomes inactive and leaves the index in the same change set."""
    return await activate_version(ref.version_id)


@activity.defn(name="corpus_apply_index_changes")
async def apply_index_changes(target: IndexTarget) -> int:
    """Bring this worker's index up to `target.up_to_seq` (or further) and commit; readers reload."""
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
    return await stage_segmenter_version(ref.segmenter_id)


@activity.defn(name="corpus_resegment_batch")
async def resegment_batch(batch: ResegmentBatch) -> int:
    """Cut a batch of active versions with the staging segmenter version."""
    return await resegment_versions(batch.segmenter_id, batch.limit)


@activity.defn(name="corpus_activate_segmenter")
async def activate_segmenter(ref: SegmenterRef) -> Activation:
    """Make the staging segmenter version the active one; the old one's passages leave the index."""
    return await activate_segmenter_version(ref.segmenter_id)


CORPUS_ACTIVITIES: list[Callable[..., Any]] = [
    segment_source_version,
    activate_source_version,
    apply_index_changes,
    stage_segmenter,
    resegment_batch,
    activate_segmenter,
]
