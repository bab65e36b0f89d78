"""What the built-in providers read: a project's work items with their history, and its serving passages."""

from __future__ import annotations

import json
from datetime import datetime

from groundwork.domain.context_engine.derivation import ChangeFacts, PassageFacts, WorkItemFacts
from groundwork.persistence import db


async def work_items_with_history(project_id: str) -> list[WorkItemFacts]:
    """A project's work items, each with its changes after creation (oldest first)."""
    rows = await db.fetch(
        """
        SELECT w.id, w.key, w.title, w.status, w.sprint, w.version, w.fields,
               coalesce((SELECT json_agg(json_build_object('version_after', c.version_after, 'changed_at', c.changed_at,
                                                          'changes', c.changes) ORDER BY c.id)
                         FROM work_item_changes c WHERE c.work_item_id = w.id AND c.version_before IS NOT NULL),
                        '[]'::json) AS history
        FROM work_items w WHERE w.project_id = $1 ORDER BY w.key
        """,
        project_id,
    )
    return [
        WorkItemFacts(
            id=r["id"],
            key=r["key"],
            title=r["title"],
            status=r["status"],
            sprint=r["sprint"],
            version=r["version"],
            fields=json.loads(r["fields"]),
            history=tuple(
                ChangeFacts(
                    datetime.fromisoformat(c["version_after"]), datetime.fromisoformat(c["changed_at"]), c["changes"]
                )
                for c in json.loads(r["history"])
            ),
        )
        for r in rows
    ]


async def active_passages(project_id: str) -> list[PassageFacts]:
    """The passages of a project that serve: active source versions cut by the active segmenter version."""
    rows = await db.fetch(
        """
        SELECT p.id, p.source_id, s.title AS source_title, s.classification, p.section, p.ordinal, p.text,
               v.ingested_at AS as_of
        FROM corpus_passages p
        JOIN corpus_source_versions v ON v.id = p.source_version_id AND v.status = 'active'
        JOIN corpus_segmenters g ON g.id = p.segmenter_id AND g.active
        JOIN corpus_sources s ON s.id = p.source_id
        WHERE p.project_id = $1
        ORDER BY p.source_id, p.ordinal
        """,
        project_id,
    )
    return [
        PassageFacts(
            id=r["id"],
            source_id=r["source_id"],
            source_title=r["source_title"],
            section=r["section"],
            ordinal=r["ordinal"],
            text=r["text"],
            classification=r["classification"],
            as_of=r["as_of"],
        )
        for r in rows
    ]
