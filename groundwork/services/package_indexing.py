"""The package index as a projection of PostgreSQL: rebuild it, and follow the entry change log into it."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from groundwork.persistence.repositories import context_engine as repo
from groundwork.search.package_index import IndexedPackage, PackageIndex, package_index
from groundwork.services.index_following import follow

_CHANGES_PER_COMMIT = 500
_REBUILD_BATCH = 20_000


def _indexed(row: dict[str, Any]) -> IndexedPackage:
    return IndexedPackage(
        seq=int(row["seq"]),
        entry_id=row["id"],
        workspace_id=row["workspace_id"],
        project_id=row["project_id"],
        term=row["term"],
        summary=row["summary"],
        contribution_type=row["contribution_type"],
        classification=row["classification"],
        status=row["status"],
    )


async def rebuild_package_index(index: PackageIndex, progress: Callable[[int], None] | None = None) -> int:
    """Write a new generation from PostgreSQL and make it serve; returns the entries written."""
    snapshot = await repo.last_index_change()
    generation = await asyncio.to_thread(index.new_generation)
    written, after = 0, 0
    while rows := await repo.ready_entries_after(after, _REBUILD_BATCH):
        batch = [_indexed(r) for r in rows]
        await asyncio.to_thread(generation.put, batch)
        written += len(batch)
        after = batch[-1].seq
        if progress is not None:
            progress(len(batch))
    await asyncio.to_thread(generation.commit, snapshot)
    await asyncio.to_thread(index.publish, generation)
    return written


async def catch_up_package_index(index: PackageIndex) -> int:
    """Apply every logged entry change to the serving generation (building one if none serves)."""
    async with index.write_lock():
        writer = await asyncio.to_thread(index.writer)
        if writer is None:
            await rebuild_package_index(index)
            writer = await asyncio.to_thread(index.writer)
            assert writer is not None
        applied = writer.applied_seq
        while changes := await repo.index_changes_after(applied, _CHANGES_PER_COMMIT):
            entry_ids = sorted({entry_id for _, ids in changes for entry_id in ids})
            rows = await repo.indexable_entries(entry_ids)
            found = {r["id"] for r in rows}
            await asyncio.to_thread(writer.remove, [e for e in entry_ids if e not in found])
            await asyncio.to_thread(writer.put, [_indexed(r) for r in rows])
            applied = changes[-1][0]
            await asyncio.to_thread(writer.commit, applied)
        return applied


async def follow_package_changes(stop: asyncio.Event, interval_seconds: float = 2.0) -> None:
    """Keep this process's package index following the entry change log until `stop` (the worker runs it)."""
    index = package_index()
    await follow(stop, lambda: catch_up_package_index(index), "package", interval_seconds)
