"""Opening evidence: one stored passage by id with its source and neighbours, its serving counterpart, and the
sources of projects with their serving version, document date and passage count."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from asyncpg import Record

from groundwork.persistence import db


@dataclass(frozen=True, slots=True)
class StoredPassageRow:
    """A stored passage exactly as cut, with its source, its version's state and dates, and its neighbours."""

    id: str
    workspace_id: str
    project_id: str
    source_id: str
    source_title: str
    source_uri: str
    source_kind: str
    classification: str
    version_id: str
    version_status: str
    segmenter_id: str
    segmenter_active: bool
    segmenter_retired: bool
    ordinal: int
    page: int | None
    paragraph: int | None
    section: str | None
    char_start: int
    char_end: int
    text: str
    provenance_quality: str
    document_date: datetime | None
    document_date_source: str | None
    ingested_at: datetime | None
    active_version_id: str | None
    previous_id: str | None
    next_id: str | None


@dataclass(frozen=True, slots=True)
class SourceListRow:
    """A source of a project with its serving version's dates and passage count (none while nothing serves)."""

    id: str
    project_id: str
    uri: str
    title: str
    kind: str
    classification: str
    active_version_id: str | None
    document_date: datetime | None
    document_date_source: str | None
    ingested_at: datetime | None
    passage_count: int | None
    created_at: datetime
    updated_at: datetime


async def stored_passage(workspace_id: str, passage_id: str) -> StoredPassageRow | None:
    """One passage of the workspace (any version, any segmenter version); visibility is the caller's to check."""
    row = await db.fetchrow(
        """
        SELECT p.id, p.workspace_id, p.project_id, p.source_id, s.title AS source_title, s.uri AS source_uri,
               s.kind AS source_kind, s.classification, p.source_version_id AS version_id,
               v.status AS version_status, p.segmenter_id, g.active AS segmenter_active,
               g.retired_at IS NOT NULL AS segmenter_retired, p.ordinal, p.page, p.paragraph, p.section,
               p.char_start, p.char_end, p.text, p.provenance_quality, v.document_date, v.document_date_source,
               v.ingested_at,
               (SELECT a.id FROM corpus_source_versions a WHERE a.source_id = p.source_id AND a.status = 'active')
                 AS active_version_id,
               (SELECT b.id FROM corpus_passages b WHERE b.source_version_id = p.source_version_id
                  AND b.segmenter_id = p.segmenter_id AND b.ordinal = p.ordinal - 1) AS previous_id,
               (SELECT n.id FROM corpus_passages n WHERE n.source_version_id = p.source_version_id
                  AND n.segmenter_id = p.segmenter_id AND n.ordinal = p.ordinal + 1) AS next_id
        FROM corpus_passages p
        JOIN corpus_source_versions v ON v.id = p.source_version_id
        JOIN corpus_segmenters g ON g.id = p.segmenter_id
        JOIN corpus_sources s ON s.id = p.source_id
        WHERE p.id = $1 AND p.workspace_id = $2
        """,
        passage_id,
        workspace_id,
    )
    if row is None:
        return None
    return StoredPassageRow(
        id=row["id"],
        workspace_id=row["workspace_id"],
        project_id=row["project_id"],
        source_id=row["source_id"],
        source_title=row["source_title"],
        source_uri=row["source_uri"],
        source_kind=row["source_kind"],
        classification=row["classification"],
        version_id=row["version_id"],
        version_status=row["version_status"],
        segmenter_id=row["segmenter_id"],
        segmenter_active=row["segmenter_active"],
        segmenter_retired=row["segmenter_retired"],
        ordinal=row["ordinal"],
        page=row["page"],
        paragraph=row["paragraph"],
        section=row["section"],
        char_start=row["char_start"],
        char_end=row["char_end"],
        text=row["text"],
        provenance_quality=row["provenance_quality"],
        document_date=row["document_date"],
        document_date_source=row["document_date_source"],
        ingested_at=row["ingested_at"],
        active_version_id=row["active_version_id"],
        previous_id=row["previous_id"],
        next_id=row["next_id"],
    )


async def serving_counterpart(passage: StoredPassageRow) -> str | None:
    """The serving passage that holds what `passage` holds: in its own version re-cut by the active segmenter
    version, the passage whose span holds its start; in the active version of its source, the passage with
    exactly its text (the first, by position). None when nothing serving holds it."""
    if passage.version_status == "active":
        row = await db.fetchrow(
            """
            SELECT p.id FROM corpus_passages p JOIN corpus_segmenters g ON g.id = p.segmenter_id AND g.active
            WHERE p.source_version_id = $1 AND p.char_start <= $2 AND p.char_end > $2
            ORDER BY p.ordinal LIMIT 1
            """,
            passage.version_id,
            passage.char_start,
        )
        return str(row["id"]) if row else None
    if passage.active_version_id is None:
        return None
    row = await db.fetchrow(
        """
        SELECT p.id FROM corpus_passages p JOIN corpus_segmenters g ON g.id = p.segmenter_id AND g.active
        WHERE p.source_version_id = $1 AND p.text = $2
        ORDER BY p.ordinal LIMIT 1
        """,
        passage.active_version_id,
        passage.text,
    )
    return str(row["id"]) if row else None


def _source(row: Record) -> SourceListRow:
    return SourceListRow(
        id=row["id"],
        project_id=row["project_id"],
        uri=row["uri"],
        title=row["title"],
        kind=row["kind"],
        classification=row["classification"],
        active_version_id=row["active_version_id"],
        document_date=row["document_date"],
        document_date_source=row["document_date_source"],
        ingested_at=row["ingested_at"],
        passage_count=row["passage_count"],
        created_at=row["created_at"],
        updated_at=row["updated_at"],
    )


async def sources_page(
    workspace_id: str, project_ids: list[str], classes: list[str], *, after_id: str | None, limit: int
) -> list[SourceListRow]:
    """Sources of the projects in the classes, newest first (by id), after the keyset position `after_id`."""
    rows = await db.fetch(
        """
        SELECT s.id, s.project_id, s.uri, s.title, s.kind, s.classification, s.created_at, s.updated_at,
               v.id AS active_version_id, v.document_date, v.document_date_source, v.ingested_at,
               (SELECT c.passage_count FROM corpus_segmentations c JOIN corpus_segmenters g ON g.id = c.segmenter_id
                 WHERE c.source_version_id = v.id AND g.active) AS passage_count
        FROM corpus_sources s
        LEFT JOIN corpus_source_versions v ON v.source_id = s.id AND v.status = 'active'
        WHERE s.workspace_id = $1 AND s.project_id = ANY($2::text[]) AND s.classification = ANY($3::text[])
          AND ($4::text IS NULL OR s.id < $4)
        ORDER BY s.id DESC LIMIT $5
        """,
        workspace_id,
        project_ids,
        classes,
        after_id,
        limit,
    )
    return [_source(r) for r in rows]
