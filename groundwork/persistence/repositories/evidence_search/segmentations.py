"""Segmenter versions, and the segmentations they cut: each source version's stored passages."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from groundwork.domain.ids import new_ids
from groundwork.persistence import db
from groundwork.persistence.repositories.evidence_search.sources import VersionContentRow


@dataclass(frozen=True, slots=True)
class NewPassage:
    """A passage about to be stored."""

    ordinal: int
    page: int | None
    paragraph: int | None
    section: str | None
    char_start: int
    char_end: int
    text: str
    opens_section: bool = False


@dataclass(frozen=True, slots=True)
class SegmenterRow:
    """A segmenter version: whether it serves (active) or is being prepared (staging), and since when."""

    id: str
    name: str
    version: int
    active: bool
    staging: bool
    created_at: datetime
    activated_at: datetime | None
    retired_at: datetime | None
    switch_seq: int


@dataclass(frozen=True, slots=True)
class PassageRow:
    """A stored passage of one segmentation: its place in the source and its exact text."""

    id: str
    seq: int
    workspace_id: str
    project_id: str
    source_id: str
    source_version_id: str
    segmenter_id: str
    ordinal: int
    page: int | None
    paragraph: int | None
    section: str | None
    char_start: int
    char_end: int
    text: str
    provenance_quality: str
    opens_section: bool


async def segmenters(*, lock: str | None = None) -> list[SegmenterRow]:
    """Every segmenter version; `lock` ('SHARE' or 'UPDATE') locks the rows until commit."""
    suffix = f" FOR {lock}" if lock in ("SHARE", "UPDATE") else ""
    rows = await db.fetch(
        "SELECT id, name, version, active, staging, created_at, activated_at, retired_at, switch_seq"
        f" FROM corpus_segmenters ORDER BY name, version{suffix}"
    )
    return [
        SegmenterRow(
            id=r["id"],
            name=r["name"],
            version=r["version"],
            active=r["active"],
            staging=r["staging"],
            created_at=r["created_at"],
            activated_at=r["activated_at"],
            retired_at=r["retired_at"],
            switch_seq=r["switch_seq"],
        )
        for r in rows
    ]


async def active_segmenter_ids() -> list[str]:
    """Ids of the active segmenter versions (one, by the schema's rule)."""
    return [r["id"] for r in await db.fetch("SELECT id FROM corpus_segmenters WHERE active")]


async def segmenter_switches() -> list[tuple[str, bool, int]]:
    """Every segmenter version as (id, active, the index log position from which it serves; -1 if it never did)."""
    rows = await db.fetch(
        "SELECT id, active, CASE WHEN staging OR activated_at IS NULL THEN -1 ELSE switch_seq END AS switch_seq"
        " FROM corpus_segmenters ORDER BY id"
    )
    return [(r["id"], bool(r["active"]), int(r["switch_seq"])) for r in rows]


async def set_segmenter_switch_seq(segmenter_id: str, seq: int) -> None:
    """Record the index log position from which a newly active segmenter version serves."""
    await db.execute("UPDATE corpus_segmenters SET switch_seq = $2 WHERE id = $1", segmenter_id, seq)


async def stage_segmenter(segmenter_id: str, name: str, version: int) -> None:
    """Mark a segmenter version as staging, registering it if new."""
    await db.execute(
        "INSERT INTO corpus_segmenters (id, name, version, staging) VALUES ($1, $2, $3, true)"
        " ON CONFLICT (id) DO UPDATE SET staging = true, retired_at = NULL",
        segmenter_id,
        name,
        version,
    )


async def switch_active_segmenter(segmenter_id: str) -> list[str]:
    """Make a staging segmenter version the active one; returns the ids it replaced."""
    rows = await db.fetch(
        "UPDATE corpus_segmenters SET active = false, retired_at = now() WHERE active AND id <> $1 RETURNING id",
        segmenter_id,
    )
    await db.execute(
        "UPDATE corpus_segmenters SET active = true, staging = false, activated_at = now() WHERE id = $1",
        segmenter_id,
    )
    return [r["id"] for r in rows]


async def segmentations_of(version_id: str) -> set[str]:
    """Segmenter ids that have cut this version."""
    rows = await db.fetch("SELECT segmenter_id FROM corpus_segmentations WHERE source_version_id = $1", version_id)
    return {r["segmenter_id"] for r in rows}


async def store_segmentation(
    version: VersionContentRow, segmenter_id: str, passages: Sequence[NewPassage], provenance_quality: str
) -> bool:
    """Store one segmentation and its passages (call in a transaction); False if it already existed."""
    claimed = await db.fetchrow(
        "INSERT INTO corpus_segmentations (source_version_id, segmenter_id, passage_count) VALUES ($1, $2, $3)"
        " ON CONFLICT (source_version_id, segmenter_id) DO NOTHING RETURNING id",
        version.id,
        segmenter_id,
        len(passages),
    )
    if claimed is None:
        return False
    if passages:
        # One statement for the whole segmentation: arrays in, rows out.
        await db.execute(
            """
            INSERT INTO corpus_passages (id, workspace_id, project_id, source_id, source_version_id, segmenter_id,
                ordinal, page, paragraph, section, char_start, char_end, text, provenance_quality, opens_section)
            SELECT u.id, $2, $3, $4, $5, $6, u.ordinal, u.page, u.paragraph, u.section, u.char_start, u.char_end,
                   u.text, $7, u.opens_section
            FROM unnest($1::text[], $8::int[], $9::int[], $10::int[], $11::text[], $12::int[], $13::int[], $14::text[],
                        $15::boolean[])
                AS u(id, ordinal, page, paragraph, section, char_start, char_end, text, opens_section)
            """,
            new_ids("psg", len(passages)),
            version.workspace_id,
            version.project_id,
            version.source_id,
            version.id,
            segmenter_id,
            provenance_quality,
            [p.ordinal for p in passages],
            [p.page for p in passages],
            [p.paragraph for p in passages],
            [p.section for p in passages],
            [p.char_start for p in passages],
            [p.char_end for p in passages],
            [p.text for p in passages],
            [p.opens_section for p in passages],
        )
    return True


async def active_versions_lacking(segmenter_id: str, limit: int) -> list[str]:
    """Serving (published) versions that a segmenter version has not cut yet, oldest first."""
    rows = await db.fetch(
        """
        SELECT v.id FROM corpus_source_versions v JOIN corpus_sources s ON s.published_version_id = v.id
        WHERE NOT EXISTS (
            SELECT 1 FROM corpus_segmentations c WHERE c.source_version_id = v.id AND c.segmenter_id = $1)
        ORDER BY v.seq LIMIT $2
        """,
        segmenter_id,
        limit,
    )
    return [r["id"] for r in rows]


async def active_versions_cut_by(segmenter_id: str) -> list[str]:
    """Serving (published) versions that a segmenter version has cut."""
    rows = await db.fetch(
        "SELECT v.id FROM corpus_source_versions v JOIN corpus_segmentations c ON c.source_version_id = v.id"
        " JOIN corpus_sources s ON s.published_version_id = v.id WHERE c.segmenter_id = $1 ORDER BY v.seq",
        segmenter_id,
    )
    return [r["id"] for r in rows]


async def passages_of_version(version_id: str, segmenter_id: str) -> list[PassageRow]:
    """The stored passages of one segmentation, in order."""
    rows = await db.fetch(
        "SELECT * FROM corpus_passages WHERE source_version_id = $1 AND segmenter_id = $2 ORDER BY ordinal",
        version_id,
        segmenter_id,
    )
    return [
        PassageRow(
            id=r["id"],
            seq=r["seq"],
            workspace_id=r["workspace_id"],
            project_id=r["project_id"],
            source_id=r["source_id"],
            source_version_id=r["source_version_id"],
            segmenter_id=r["segmenter_id"],
            ordinal=r["ordinal"],
            page=r["page"],
            paragraph=r["paragraph"],
            section=r["section"],
            char_start=r["char_start"],
            char_end=r["char_end"],
            text=r["text"],
            provenance_quality=r["provenance_quality"],
            opens_section=r["opens_section"],
        )
        for r in rows
    ]
