"""What a briefing reads besides packages: what each package's evidence names (for matching only, never shown),
and the names of the subject it is asked about."""

from __future__ import annotations

from collections import defaultdict

from groundwork.persistence import db


async def evidence_context(entry_ids: list[str]) -> dict[str, list[str]]:
    """Per entry, the text of what its evidence points at: a cited passage's source title, heading path and text;
    a cited work item's key and title (also for a history entry). External references name nothing."""
    if not entry_ids:
        return {}
    rows = await db.fetch(
        """
        SELECT x.entry_id, concat_ws(E'\n', s.title, p.section, p.text) AS context
        FROM context_evidence x
        JOIN corpus_passages p ON x.reference_kind = 'passage' AND p.id = x.reference_id
        JOIN corpus_sources s ON s.id = p.source_id
        WHERE x.entry_id = ANY($1::text[])
        UNION
        SELECT x.entry_id, concat_ws(' ', w.key, w.title) AS context
        FROM context_evidence x
        JOIN work_items w ON w.id = CASE x.reference_kind
            WHEN 'work_item' THEN x.reference_id
            WHEN 'work_item_history' THEN split_part(x.reference_id, '@', 1) END
        WHERE x.entry_id = ANY($1::text[]) AND x.reference_kind IN ('work_item', 'work_item_history')
        ORDER BY 1, 2
        """,
        entry_ids,
    )
    found: dict[str, list[str]] = defaultdict(list)
    for row in rows:
        found[row["entry_id"]].append(row["context"])
    return dict(found)


_SUBJECT_NAMES = {
    "project": "SELECT concat_ws(' ', key, name) FROM projects WHERE workspace_id = $1 AND id = $2",
    "engagement": "SELECT name FROM engagements WHERE workspace_id = $1 AND id = $2",
    "portfolio": "SELECT name FROM portfolios WHERE workspace_id = $1 AND id = $2",
}


async def subject_name(workspace_id: str, subject_type: str, subject_id: str) -> str:
    """The subject's name (a project's key and name), or an empty string for an unknown subject."""
    if subject_type not in _SUBJECT_NAMES:
        raise ValueError(f"unknown subject type {subject_type!r}")
    row = await db.fetchrow(_SUBJECT_NAMES[subject_type], workspace_id, subject_id)
    return str(row[0] or "") if row is not None else ""
