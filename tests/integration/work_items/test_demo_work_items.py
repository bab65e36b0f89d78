"""The demo's work items: its data file, imported through the importer `groundwork import` runs."""

from __future__ import annotations

import json

from groundwork.demo.records import WORKSPACE_SLUG, records
from groundwork.demo.seed import seed_demo_data
from groundwork.persistence import db


async def test_the_demo_work_items_are_imported_from_their_data_file_with_a_demo_history(database: str) -> None:
    await seed_demo_data()
    rows = await db.fetch(
        """
        SELECT w.key, w.title, w.status, w.sprint, w.fields, c.source, p.name AS actor
        FROM work_items w
        JOIN workspaces s ON s.id = w.workspace_id
        JOIN work_item_changes c ON c.work_item_id = w.id
        JOIN principals p ON p.id = c.actor_id
        WHERE s.slug = $1
        """,
        WORKSPACE_SLUG,
    )
    expected = records("work_items")
    assert len(rows) == len(expected) == 42
    assert sorted((r["title"], r["status"], r["sprint"]) for r in rows) == sorted(
        (e["title"], e["status"], e["sprint"]) for e in expected
    )
    assert {r["title"]: json.loads(r["fields"]) for r in rows} == {e["title"]: e["fields"] for e in expected}
    assert {(r["source"], r["actor"]) for r in rows} == {("demo", "admin")}
    # Each project numbers its items in the file's order.
    keys = {r["title"]: r["key"] for r in rows}
    for project in {e["project"] for e in expected}:
        titles = [e["title"] for e in expected if e["project"] == project]
        assert [keys[title] for title in titles] == [f"{project}-{n}" for n in range(1, len(titles) + 1)]
