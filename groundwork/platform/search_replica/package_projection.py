"""The package index as a projection of PostgreSQL: rebuild it, and follow the entry change log into it."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from groundwork.persistence.repositories.context_engine import entry_index_log
from groundwork.platform.search_replica.projection import catch_up, follow, rebuild_generation, verify_or_rebuild
from groundwork.search.package_index import PackageGenerationWriter, PackageIndex, package_index

_CHANGES_PER_COMMIT = 500
_REBUILD_BATCH = 20_000


async def rebuild_package_index(index: PackageIndex, progress: Callable[[int], None] | None = None) -> int:
    """Write a new generation from PostgreSQL and make it serve; returns the entries written."""
    return await rebuild_generation(
        index,
        await entry_index_log.last_index_change(),
        entry_index_log.ready_entries_after,
        lambda generation, rows: generation.put(rows),
        progress,
        _REBUILD_BATCH,
    )


async def _apply_changes(writer: PackageGenerationWriter, changes: list[tuple[int, list[str]]]) -> None:
    """Replace each changed entry's document with its state now (an entry gone from PostgreSQL leaves)."""
    entry_ids = sorted({entry_id for _, ids in changes for entry_id in ids})
    rows = await entry_index_log.indexable_entries(entry_ids)
    found = {r.entry_id for r in rows}
    await asyncio.to_thread(writer.remove, [e for e in entry_ids if e not in found])
    await asyncio.to_thread(writer.put, rows)


async def catch_up_package_index(index: PackageIndex) -> int:
    """Apply every logged entry change to the serving generation (building one if none serves)."""
    return await catch_up(
        index,
        lambda: rebuild_package_index(index),
        entry_index_log.index_changes_after,
        _apply_changes,
        _CHANGES_PER_COMMIT,
    )


async def follow_package_changes(stop: asyncio.Event, interval_seconds: float = 2.0) -> None:
    """Keep this process's package index following the entry change log until `stop` (the worker runs it)."""
    index = package_index()
    await follow(
        stop,
        lambda: catch_up_package_index(index),
        "package",
        interval_seconds,
        lambda: verify_or_rebuild(index, lambda: rebuild_package_index(index)),
    )
