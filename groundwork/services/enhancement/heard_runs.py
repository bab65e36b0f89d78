"""Run rows reused from memory while the change feed says nothing they show has changed.

Every read of a run starts from its row: state, `updated_at`, review deadline, and its target's live key,
title and version (a join). Reading it from PostgreSQL cost a `GET` of a run more than the rest of the
request together. A long-running process keeps the rows it read and drops one the moment PostgreSQL says
it changed: triggers (migration 0013) send `run:<id>` when a run row changes (every change of its actions,
drafts or artifacts bumps the row in the same transaction) and `work_item:<id>` when a work item's key,
title or version changes. As for every `InvalidatedCache`, rows are reused only while this process's feed
is live, and a row read while a change arrived is not kept.

So a run read in another process shows a change as soon as PostgreSQL delivers its notification (the
key cache's guarantee, docs/decisions.md). Paths that must see their own write, or decide on a run's
state (actions, applies, waits), read the row from PostgreSQL (`fresh_run_row`), which also refreshes it.
"""

from __future__ import annotations

from groundwork.persistence.repositories.enhancement import runs
from groundwork.platform.caches.invalidated_cache import InvalidatedCache
from groundwork.platform.caches.serving import forget_on

# The TTL only bounds memory of idle entries: correctness comes from the change feed's invalidation.
_rows: InvalidatedCache[str, runs.RunRow] = InvalidatedCache(ttl_seconds=60.0, max_entries=1_000)


async def heard_run_row(workspace_id: str, run_id: str) -> runs.RunRow | None:
    """A run of the workspace as last read, unless a change was heard since; else as PostgreSQL has it."""
    found, run = _rows.get(run_id)
    if found and run is not None and run.workspace_id == workspace_id:
        return run
    return await fresh_run_row(workspace_id, run_id)


async def fresh_run_row(workspace_id: str, run_id: str) -> runs.RunRow | None:
    """A run of the workspace as PostgreSQL has it now (kept for the next `heard_run_row`)."""
    generation = _rows.generation
    run = await runs.get_run(workspace_id, run_id)
    if run is not None:
        _rows.put(run_id, run, generation)
    return run


def forget_runs_targeting(work_item_id: str) -> None:
    """Drop the rows of the runs whose target is this work item (its key, title or version changed)."""
    _rows.discard_where(lambda run: run.target_id == work_item_id)


def forget_heard_runs(topic: str) -> None:
    """Drop the rows a change-feed topic names: `run:<id>`, `work_item:<id>` (the runs targeting it), `*`;
    any other topic names none of them."""
    if topic == "*":
        _rows.invalidate()
    elif topic.startswith("run:"):
        _rows.discard(topic.removeprefix("run:"))
    elif topic.startswith("work_item:"):
        forget_runs_targeting(topic.removeprefix("work_item:"))


# Every topic: `run:` and `work_item:` topics name the rows to drop, `*` drops them all.
forget_on(None, forget_heard_runs)
