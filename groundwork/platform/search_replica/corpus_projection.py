"""The corpus index as a projection of PostgreSQL: rebuild it, and follow the change log into it.

PostgreSQL holds every passage; the index follows `corpus_index_log` in order, so any process that
holds the index writer (the worker, or the CLI when no worker runs) can bring it up to date.
"""

from __future__ import annotations

import asyncio
import logging
from collections import defaultdict
from collections.abc import Callable
from typing import Any

from groundwork.persistence.repositories.evidence_search import corpus as repo
from groundwork.platform.search_replica.projection import catch_up, follow, rebuild_generation, verify_or_rebuild
from groundwork.search.corpus_index import CorpusGenerationWriter, CorpusIndex, IndexedPassage, corpus_index

log = logging.getLogger(__name__)

_CHANGE_SETS_PER_COMMIT = 200
_UNITS_PER_LOAD = 500
_REBUILD_BATCH = 20_000


def indexed_passage(row: dict[str, Any]) -> IndexedPassage:
    """What the index holds of a passage row."""
    return IndexedPassage(
        seq=int(row["seq"]),
        text=row["text"],
        workspace_id=row["workspace_id"],
        project_id=row["project_id"],
        source_id=row["source_id"],
        version_id=row["source_version_id"],
        segmenter_id=row["segmenter_id"],
        kind=row["kind"],
        classification=row["classification"],
        passage_id=row["id"],
        title=row["title"],
        uri=row["uri"],
        page=row["page"],
        paragraph=row["paragraph"],
        section=row["section"],
        char_start=row["char_start"],
        char_end=row["char_end"],
        provenance_quality=row["provenance_quality"],
        opens_section=row["opens_section"],
    )


async def rebuild_index(index: CorpusIndex, progress: Callable[[int], None] | None = None) -> int:
    """Write a new generation from PostgreSQL and make it serve; returns the passages written."""
    return await rebuild_generation(
        index,
        await repo.last_index_change(),
        repo.indexable_passages_after,
        lambda generation, rows: generation.add_passages([indexed_passage(r) for r in rows]),
        progress,
        _REBUILD_BATCH,
    )


def _replace_units(
    writer: CorpusGenerationWriter,
    units: list[tuple[str, str]],
    passages: dict[tuple[str, str], list[IndexedPassage]],
) -> None:
    for version_id, segmenter_id in units:
        writer.replace_unit(version_id, segmenter_id, passages.get((version_id, segmenter_id), []))


async def _apply_change_set(writer: CorpusGenerationWriter, changes: list[dict[str, str]]) -> None:
    """Apply one change set's operations in order, loading added passages a bounded chunk at a time."""
    pending: list[tuple[str, str]] = []

    async def flush_adds() -> None:
        for start in range(0, len(pending), _UNITS_PER_LOAD):
            chunk = pending[start : start + _UNITS_PER_LOAD]
            by_unit: dict[tuple[str, str], list[IndexedPassage]] = defaultdict(list)
            for row in await repo.indexable_passages_of(chunk):
                by_unit[(row["source_version_id"], row["segmenter_id"])].append(indexed_passage(row))
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


async def _apply_change_sets(
    writer: CorpusGenerationWriter, change_sets: list[tuple[int, list[dict[str, str]]]]
) -> None:
    for _, changes in change_sets:
        await _apply_change_set(writer, changes)


async def catch_up_index(index: CorpusIndex) -> int:
    """Apply every pending change set to the serving generation (building one if none serves)."""
    return await catch_up(
        index, lambda: rebuild_index(index), repo.index_changes_after, _apply_change_sets, _CHANGE_SETS_PER_COMMIT
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
