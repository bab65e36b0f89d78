"""Corpus sources, source-content versions, segmenter versions, passages and the index change log."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from groundwork.domain.ids import new_id, new_ids
from groundwork.persistence import db

# Any constant works; every process appending to the index log takes the same one.
_INDEX_LOG_LOCK = 7_301_942_203


@dataclass(frozen=True)
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


# -- projects ---------------------------------------------------------------------------------------------


async def project_by_id(project_id: str) -> dict[str, Any] | None:
    """A project by id, with its workspace."""
    row = await db.fetchrow("SELECT id, workspace_id, key, name FROM projects WHERE id = $1", project_id)
    return dict(row) if row else None


async def project_by_key(workspace_slug: str, key: str) -> dict[str, Any] | None:
    """A project by its key within the workspace with this slug."""
    row = await db.fetchrow(
        "SELECT p.id, p.workspace_id, p.key, p.name FROM projects p JOIN workspaces w ON w.id = p.workspace_id"
        " WHERE w.slug = $1 AND p.key = $2",
        workspace_slug,
        key,
    )
    return dict(row) if row else None


@dataclass(frozen=True)
class SearchScope:
    """What a search may reach: whether the subject exists, its child projects, those the caller may read
    (`permission`), and every project of the workspace (so a filter can name the smaller side)."""

    subject_exists: bool
    child_project_ids: list[str]
    readable_project_ids: list[str]
    workspace_project_ids: list[str]


_SUBJECT_CHILDREN = {
    "project": "SELECT p.id FROM projects p WHERE p.workspace_id = $1 AND p.id = $2",
    "engagement": "SELECT p.id FROM projects p WHERE p.workspace_id = $1 AND p.engagement_id = $2",
    "portfolio": (
        "SELECT p.id FROM projects p JOIN engagements e ON e.id = p.engagement_id"
        " WHERE p.workspace_id = $1 AND e.portfolio_id = $2"
    ),
}
_SUBJECT_EXISTS = {
    "project": "SELECT 1 FROM projects WHERE workspace_id = $1 AND id = $2",
    "engagement": "SELECT 1 FROM engagements WHERE workspace_id = $1 AND id = $2",
    "portfolio": "SELECT 1 FROM portfolios WHERE workspace_id = $1 AND id = $2",
}


async def search_scope(
    workspace_id: str, principal_id: str, is_admin: bool, subject_type: str, subject_id: str, permission: str
) -> SearchScope:
    """One round trip for everything a search needs to know before it touches the index."""
    if subject_type not in _SUBJECT_CHILDREN:
        raise ValueError(f"unknown subject type {subject_type!r}")
    # Same visibility rule as tenancy.visible_project_ids: admins see all, others by a role's permission.
    row = await db.fetchrow(
        f"""
        WITH children AS ({_SUBJECT_CHILDREN[subject_type]})
        SELECT EXISTS ({_SUBJECT_EXISTS[subject_type]}) AS subject_exists,
               ARRAY(SELECT id FROM children ORDER BY id) AS child_ids,
               ARRAY(SELECT c.id FROM children c WHERE $4::boolean OR EXISTS (
                   SELECT 1 FROM memberships m JOIN roles r ON r.name = m.role
                   WHERE m.project_id = c.id AND m.principal_id = $3 AND $5 = ANY(r.permissions)) ORDER BY c.id)
                 AS readable_ids,
               ARRAY(SELECT id FROM projects WHERE workspace_id = $1 ORDER BY id) AS workspace_ids
        """,
        workspace_id,
        subject_id,
        principal_id,
        is_admin,
        permission,
    )
    assert row is not None
    return SearchScope(
        bool(row["subject_exists"]), list(row["child_ids"]), list(row["readable_ids"]), list(row["workspace_ids"])
    )


# -- sources and versions ---------------------------------------------------------------------------------


async def upsert_source_for_update(
    *, workspace_id: str, project_id: str, uri: str, title: str, kind: str, owner: str, classification: str
) -> dict[str, Any]:
    """The source with this uri in the project (created with `classification` if new), locked until commit."""
    await db.execute(
        "INSERT INTO corpus_sources (id, workspace_id, project_id, uri, title, kind, owner, classification)"
        " VALUES ($1, $2, $3, $4, $5, $6, $7, $8) ON CONFLICT (project_id, uri) DO NOTHING",
        new_id("src"),
        workspace_id,
        project_id,
        uri,
        title,
        kind,
        owner,
        classification,
    )
    row = await db.fetchrow(
        "SELECT * FROM corpus_sources WHERE project_id = $1 AND uri = $2 FOR UPDATE", project_id, uri
    )
    assert row is not None
    return dict(row)


async def latest_version(source_id: str) -> dict[str, Any] | None:
    """The most recently received version of a source (without its text)."""
    row = await db.fetchrow(
        "SELECT id, seq, kind, content_hash, byte_size, status, created_at, ingested_at"
        " FROM corpus_source_versions WHERE source_id = $1 ORDER BY seq DESC LIMIT 1",
        source_id,
    )
    return dict(row) if row else None


async def insert_version(
    *,
    source_id: str,
    kind: str,
    content_hash: str,
    byte_size: int,
    title: str,
    text: str,
    provenance_quality: str,
    received_by: str,
) -> dict[str, Any]:
    """A new pending version of a source."""
    row = await db.fetchrow(
        "INSERT INTO corpus_source_versions (id, source_id, kind, content_hash, byte_size, title, text,"
        " provenance_quality, status, received_by) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, 'pending', $9)"
        " RETURNING id, seq, kind, content_hash, byte_size, status, created_at, ingested_at",
        new_id("srcv"),
        source_id,
        kind,
        content_hash,
        byte_size,
        title,
        text,
        provenance_quality,
        received_by,
    )
    assert row is not None
    return dict(row)


async def set_source_classification(source_id: str, classification: str) -> list[tuple[str, str]]:
    """Reclassify a source; returns the indexed units (published version, live segmenter) to index again."""
    await db.execute("UPDATE corpus_sources SET classification = $2 WHERE id = $1", source_id, classification)
    rows = await db.fetch(
        """
        SELECT c.source_version_id, c.segmenter_id FROM corpus_segmentations c
        JOIN corpus_sources s ON s.id = $1 AND s.published_version_id = c.source_version_id
        JOIN corpus_segmenters g ON g.id = c.segmenter_id AND (g.active OR g.staging)
        ORDER BY c.segmenter_id
        """,
        source_id,
    )
    return [(r["source_version_id"], r["segmenter_id"]) for r in rows]


async def set_classification_seq(source_id: str, seq: int) -> None:
    """Record the index log position from which the index holds the source's current classification."""
    await db.execute("UPDATE corpus_sources SET classification_seq = $2 WHERE id = $1", source_id, seq)


async def reclassified_after(seq: int) -> list[dict[str, Any]]:
    """Sources whose classification changed in a change set after `seq` (an index at `seq` lags them)."""
    rows = await db.fetch(
        "SELECT id, workspace_id, classification, classification_seq FROM corpus_sources WHERE classification_seq > $1",
        seq,
    )
    return [dict(r) for r in rows]


async def update_source_owner(source_id: str, owner: str) -> None:
    """Record who contributed the source last."""
    await db.execute("UPDATE corpus_sources SET owner = $2 WHERE id = $1", source_id, owner)


async def version_with_source(version_id: str) -> dict[str, Any] | None:
    """A version with its text and the source's project and workspace."""
    row = await db.fetchrow(
        "SELECT v.id, v.seq, v.source_id, v.kind, v.text, v.title, v.status, v.provenance_quality,"
        " v.content_hash, v.byte_size, v.created_at, v.ingested_at, s.project_id, s.workspace_id, s.uri"
        " FROM corpus_source_versions v JOIN corpus_sources s ON s.id = v.source_id WHERE v.id = $1",
        version_id,
    )
    return dict(row) if row else None


async def version_summary(version_id: str) -> dict[str, Any] | None:
    """A version's state and passage count under the active segmenter, with its source."""
    row = await db.fetchrow(
        """
        SELECT v.id, v.seq, v.kind, v.content_hash, v.byte_size, v.status, v.created_at, v.ingested_at,
               s.id AS source_id, s.project_id, s.uri, s.title, s.owner, s.classification,
               s.created_at AS source_created_at,
               s.updated_at AS source_updated_at,
               (SELECT c.passage_count FROM corpus_segmentations c JOIN corpus_segmenters g ON g.id = c.segmenter_id
                 WHERE c.source_version_id = v.id AND g.active) AS passage_count,
               (SELECT a.id FROM corpus_source_versions a WHERE a.source_id = s.id AND a.status = 'active')
                 AS active_version_id
        FROM corpus_source_versions v JOIN corpus_sources s ON s.id = v.source_id
        WHERE v.id = $1
        """,
        version_id,
    )
    return dict(row) if row else None


async def version_state(version_id: str) -> dict[str, Any] | None:
    """A version's id, seq, source, status, index log position, and the version its source publishes."""
    row = await db.fetchrow(
        "SELECT v.id, v.seq, v.source_id, v.status, v.index_seq, s.published_version_id"
        " FROM corpus_source_versions v JOIN corpus_sources s ON s.id = v.source_id WHERE v.id = $1",
        version_id,
    )
    return dict(row) if row else None


async def published_version_of(source_id: str) -> dict[str, Any] | None:
    """The version the index serves for a source (the last one published), if any."""
    row = await db.fetchrow(
        "SELECT v.id, v.seq, v.status FROM corpus_sources s JOIN corpus_source_versions v"
        " ON v.id = s.published_version_id WHERE s.id = $1",
        source_id,
    )
    return dict(row) if row else None


async def set_published_version(source_id: str, version_id: str, index_seq: int) -> None:
    """Record that the change set at `index_seq` makes `version_id` the source's serving version."""
    await db.execute("UPDATE corpus_sources SET published_version_id = $2 WHERE id = $1", source_id, version_id)
    await db.execute("UPDATE corpus_source_versions SET index_seq = $2 WHERE id = $1", version_id, index_seq)


async def lock_source(source_id: str) -> None:
    """Lock a source row until commit: its versions change state one transaction at a time."""
    await db.execute("SELECT 1 FROM corpus_sources WHERE id = $1 FOR UPDATE", source_id)


async def active_version_of(source_id: str) -> dict[str, Any] | None:
    """The active version of a source, if any."""
    row = await db.fetchrow(
        "SELECT id, seq FROM corpus_source_versions WHERE source_id = $1 AND status = 'active'", source_id
    )
    return dict(row) if row else None


async def set_version_status(version_id: str, status: str) -> None:
    """Move a version to `active` (stamping ingested_at) or `inactive` (stamping deactivated_at)."""
    if status == "active":
        await db.execute(
            "UPDATE corpus_source_versions SET status = 'active', ingested_at = now(), deactivated_at = NULL"
            " WHERE id = $1",
            version_id,
        )
    else:
        await db.execute(
            "UPDATE corpus_source_versions SET status = 'inactive', deactivated_at = now() WHERE id = $1",
            version_id,
        )


async def refresh_source_from_version(source_id: str, version_id: str) -> None:
    """The source takes the title and kind of its newly active version."""
    await db.execute(
        "UPDATE corpus_sources s SET title = v.title, kind = v.kind, updated_at = now()"
        " FROM corpus_source_versions v WHERE s.id = $1 AND v.id = $2",
        source_id,
        version_id,
    )


# -- segmenters and passages ------------------------------------------------------------------------------


async def segmenters(*, lock: str | None = None) -> list[dict[str, Any]]:
    """Every segmenter version; `lock` ('SHARE' or 'UPDATE') locks the rows until commit."""
    suffix = f" FOR {lock}" if lock in ("SHARE", "UPDATE") else ""
    rows = await db.fetch(
        "SELECT id, name, version, active, staging, created_at, activated_at, retired_at, switch_seq"
        f" FROM corpus_segmenters ORDER BY name, version{suffix}"
    )
    return [dict(r) for r in rows]


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
    version: dict[str, Any], segmenter_id: str, passages: Sequence[NewPassage], provenance_quality: str
) -> bool:
    """Store one segmentation and its passages (call in a transaction); False if it already existed."""
    claimed = await db.fetchrow(
        "INSERT INTO corpus_segmentations (source_version_id, segmenter_id, passage_count) VALUES ($1, $2, $3)"
        " ON CONFLICT (source_version_id, segmenter_id) DO NOTHING RETURNING id",
        version["id"],
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
            version["workspace_id"],
            version["project_id"],
            version["source_id"],
            version["id"],
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


async def passages_of_version(version_id: str, segmenter_id: str) -> list[dict[str, Any]]:
    """The stored passages of one segmentation, in order."""
    rows = await db.fetch(
        "SELECT * FROM corpus_passages WHERE source_version_id = $1 AND segmenter_id = $2 ORDER BY ordinal",
        version_id,
        segmenter_id,
    )
    return [dict(r) for r in rows]


# -- the index change log ---------------------------------------------------------------------------------


async def append_index_changes(changes: list[dict[str, str]]) -> int:
    """Append one change set for the index (call in the transaction that made the change); returns its seq."""
    # Serialising appends until commit makes seq order equal commit order, so a follower reading
    # "everything after N" can never skip a change that commits late.
    await db.execute("SELECT pg_advisory_xact_lock($1)", _INDEX_LOG_LOCK)
    row = await db.fetchrow(
        "INSERT INTO corpus_index_log (changes) VALUES ($1::jsonb) RETURNING seq", json.dumps(changes)
    )
    assert row is not None
    return int(row["seq"])


async def index_changes_after(seq: int, limit: int) -> list[tuple[int, list[dict[str, str]]]]:
    """Change sets after `seq`, in order."""
    rows = await db.fetch("SELECT seq, changes FROM corpus_index_log WHERE seq > $1 ORDER BY seq LIMIT $2", seq, limit)
    return [(int(r["seq"]), json.loads(r["changes"])) for r in rows]


async def last_index_change() -> int:
    """The seq of the newest change set (0 when there is none)."""
    row = await db.fetchrow("SELECT coalesce(max(seq), 0) AS seq FROM corpus_index_log")
    return int(row["seq"]) if row else 0


_INDEXABLE = """
    SELECT p.seq, p.id, p.text, p.workspace_id, p.project_id, p.source_id, p.source_version_id, p.segmenter_id,
           v.kind, v.title, s.uri, s.classification, p.page, p.paragraph, p.section, p.char_start, p.char_end,
           p.provenance_quality, p.opens_section
    FROM corpus_passages p
    JOIN corpus_source_versions v ON v.id = p.source_version_id
    JOIN corpus_sources s ON s.id = p.source_id
"""


async def indexable_passages_of(units: list[tuple[str, str]]) -> list[dict[str, Any]]:
    """The passages of the given (version, segmenter) units, for the index."""
    if not units:
        return []
    rows = await db.fetch(
        _INDEXABLE + " WHERE (p.source_version_id, p.segmenter_id) IN (SELECT * FROM unnest($1::text[], $2::text[]))"
        " ORDER BY p.seq",
        [u[0] for u in units],
        [u[1] for u in units],
    )
    return [dict(r) for r in rows]


async def indexable_passages_after(after_seq: int, limit: int) -> list[dict[str, Any]]:
    """The next passages that should be in the index (published versions, active or staging segmenters)."""
    rows = await db.fetch(
        _INDEXABLE
        + """
        JOIN corpus_segmenters g ON g.id = p.segmenter_id AND (g.active OR g.staging)
        WHERE s.published_version_id = p.source_version_id AND p.seq > $1 ORDER BY p.seq LIMIT $2
        """,
        after_seq,
        limit,
    )
    return [dict(r) for r in rows]


async def count_indexable_passages() -> int:
    """How many passages a rebuild writes."""
    row = await db.fetchrow(
        "SELECT count(*) AS n FROM corpus_passages p"
        " JOIN corpus_sources s ON s.id = p.source_id AND s.published_version_id = p.source_version_id"
        " JOIN corpus_segmenters g ON g.id = p.segmenter_id AND (g.active OR g.staging)"
    )
    return int(row["n"]) if row else 0
