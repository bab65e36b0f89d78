"""The corpus index as a projection of PostgreSQL: rebuild it, and follow the change log into it.

PostgreSQL holds every passage; the index follows `corpus_index_log` in order, so any process that
holds the index writer (the worker, or the CLI when no worker runs) can bring it up to date.
"""

from __future__ import annotations

import asyncio
import logging
from collections import defaultdict
from collections.abc import Callable

from groundwork.persistence.repositories.evidence_search import index_log
from groundwork.persistence.repositories.evidence_search.index_log import IndexablePassageRow, IndexChange
from groundwork.platform.search_replica.projection import catch_up, follow, rebuild_generation, verify_or_rebuild
from groundwork.search.corpus_index import CorpusGenerationWriter, CorpusIndex, corpus_index

log = logging.getLogger(__name__)

_CHANGE_SETS_PER_COMMIT = 200
_UNITS_PER_LOAD = 500
_REBUILD_BATCH = 20_000


async def rebuild_index(index: CorpusIndex, progress: Callable[[int], None] | None = None) -> int:
    """Write a new generation from PostgreSQL and make it serve; returns the passages written."""
    return await rebuild_generation(
        index,
        await index_log.last_index_change(),
        index_log.indexable_passages_after,
        lambda generation, rows: generation.add_passages(rows),
        progress,
        _REBUILD_BATCH,
    )


def _replace_units(
    writer: CorpusGenerationWriter,
    units: list[tuple[str, str]],
    passages: dict[tuple[str, str], list[IndexablePassageRow]],
) -> None:
    for version_id, segmenter_id in units:
        writer.replace_unit(version_id, segmenter_id, passages.get((version_id, segmenter_id), []))


async def _apply_change_set(writer: CorpusGenerationWriter, changes: list[IndexChange]) -> None:
    """Apply one change set's operations in order, loading added passages a bounded chunk at a time."""
    pending: list[tuple[str, str]] = []

    async def flush_adds() -> None:
        for start in range(0, len(pending), _UNITS_PER_LOAD):
            chunk = pending[start : start + _UNITS_PER_LOAD]
            by_unit: dict[tuple[str, str], list[IndexablePassageRow]] = defaultdict(list)
            for row in await index_log.indexable_passages_of(chunk):
                by_unit[(row.version_id, row.segmenter_id)].append(row)
            await asyncio.to_thread(_replace_units, writer, chunk, by_unit)
        pending.clear()

    for change in changes:
        if change.op == "add" and change.version is not None and change.segmenter is not None:
            pending.append((change.version, change.segmenter))
            continue
        await flush_adds()
        if change.op == "remove_version" and change.version is not None:
            writer.delete_version(change.version)
        elif change.op == "remove_segmenter" and change.segmenter is not None:
            writer.delete_segmenter(change.segmenter)
    await flush_adds()


async def _apply_change_sets(writer: CorpusGenerationWriter, change_sets: list[tuple[int, list[IndexChange]]]) -> None:
    for _, changes in change_sets:
        await _apply_change_set(writer, changes)


async def catch_up_index(index: CorpusIndex) -> int:
    """Apply every pending change set to the serving generation (building one if none serves)."""
    return await catch_up(
        index, lambda: rebuild_index(index), index_log.index_changes_after, _apply_change_sets, _CHANGE_SETS_PER_COMMIT
    )


async def follow_index_changes(stop: asyncio.Event, interval_seconds: float = 2.0) -> None:
    """Keep this process's index replica up to date until `stop` (the worker runs it beside polling)."""
    index = corpus_index()
    await follow(
        stop,
        lambda: catch_up_index(index),
        "corpus",
        interval_seconds,
        lambda: verify_or_rebuild(index, lambda: rebuild_index(index)),
    )
