"""The passages around found ones: same source version, same segmenter version, same section, a few either side."""

from __future__ import annotations

from dataclasses import dataclass

from groundwork.persistence import db


@dataclass(frozen=True, slots=True)
class NeighbourRow:
    """A serving passage near an anchor passage, with what a draft needs to quote and label it."""

    anchor_id: str
    id: str
    version_id: str
    source_title: str
    source_uri: str
    page: int | None
    paragraph: int | None
    section: str | None
    char_start: int
    text: str


async def section_neighbours(
    workspace_id: str, project_id: str, anchor_ids: list[str], reach: int
) -> list[NeighbourRow]:
    """Passages within `reach` positions of each anchor, in the anchor's section or its subsections, of a
    `general` source's active version cut by the active segmenter version; by anchor (in the order given),
    then position. Anchors themselves are not returned, and a passage near two anchors comes once (with the
    first)."""
    rows = await db.fetch(
        """
        SELECT DISTINCT ON (n.id) a.id AS anchor_id, n.id, s.title AS source_title, s.uri AS source_uri, n.page,
               n.paragraph, n.section, n.text, array_position($3::text[], a.id) AS anchor_rank, n.ordinal,
               n.source_version_id AS version_id, n.char_start
        FROM corpus_passages a
        JOIN corpus_passages n ON n.source_version_id = a.source_version_id AND n.segmenter_id = a.segmenter_id
             AND n.ordinal BETWEEN a.ordinal - $4 AND a.ordinal + $4
             AND (n.section IS NOT DISTINCT FROM a.section OR starts_with(n.section, a.section || ' > '))
        JOIN corpus_source_versions v ON v.id = n.source_version_id AND v.status = 'active'
        JOIN corpus_segmenters g ON g.id = n.segmenter_id AND g.active
        JOIN corpus_sources s ON s.id = n.source_id AND s.classification = 'general'
        WHERE a.workspace_id = $1 AND a.project_id = $2 AND a.id = ANY($3::text[]) AND n.id <> ALL($3::text[])
        ORDER BY n.id, array_position($3::text[], a.id)
        """,
        workspace_id,
        project_id,
        anchor_ids,
        reach,
    )
    ordered = sorted(rows, key=lambda r: (r["anchor_rank"], r["ordinal"]))
    return [
        NeighbourRow(
            r["anchor_id"],
            r["id"],
            r["version_id"],
            r["source_title"],
            r["source_uri"],
            r["page"],
            r["paragraph"],
            r["section"],
            r["char_start"],
            r["text"],
        )
        for r in ordered
    ]
