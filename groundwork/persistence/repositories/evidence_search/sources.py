"""Corpus sources and their content versions: received, published to the index, activated and retired."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from asyncpg import Record

from groundwork.domain.ids import new_id
from groundwork.persistence import db


@dataclass(frozen=True, slots=True)
class SourceRow:
    """A corpus source of a project: where it comes from, its class, and the version the index serves."""

    id: str
    workspace_id: str
    project_id: str
    uri: str
    title: str
    kind: str
    owner: str
    classification: str
    published_version_id: str | None
    classification_seq: int
    created_at: datetime
    updated_at: datetime


@dataclass(frozen=True, slots=True)
class VersionRow:
    """A received version of a source's content (without its text)."""

    id: str
    seq: int
    kind: str
    content_hash: str
    byte_size: int
    status: str
    created_at: datetime
    ingested_at: datetime | None


@dataclass(frozen=True, slots=True)
class VersionContentRow:
    """A version with its text, and its source's project, workspace and uri."""

    id: str
    seq: int
    source_id: str
    kind: str
    text: str
    title: str
    status: str
    provenance_quality: str
    content_hash: str
    byte_size: int
    created_at: datetime
    ingested_at: datetime | None
    project_id: str
    workspace_id: str
    uri: str


@dataclass(frozen=True, slots=True)
class VersionSummaryRow:
    """A version's state and passage count under the active segmenter, with its source."""

    id: str
    seq: int
    kind: str
    content_hash: str
    byte_size: int
    status: str
    created_at: datetime
    ingested_at: datetime | None
    source_id: str
    project_id: str
    uri: str
    title: str
    owner: str
    classification: str
    source_created_at: datetime
    source_updated_at: datetime
    passage_count: int | None
    active_version_id: str | None


@dataclass(frozen=True, slots=True)
class VersionStateRow:
    """A version's place in its source's life: status, index log position, and the version its source publishes."""

    id: str
    seq: int
    source_id: str
    status: str
    index_seq: int | None
    published_version_id: str | None


@dataclass(frozen=True, slots=True)
class VersionRefRow:
    """A version by id and seq, with its status."""

    id: str
    seq: int
    status: str


@dataclass(frozen=True, slots=True)
class SourceClassRow:
    """A source's class, and the index log position from which the index holds it."""

    id: str
    workspace_id: str
    classification: str
    classification_seq: int


def _version(row: Record) -> VersionRow:
    return VersionRow(
        id=row["id"],
        seq=row["seq"],
        kind=row["kind"],
        content_hash=row["content_hash"],
        byte_size=row["byte_size"],
        status=row["status"],
        created_at=row["created_at"],
        ingested_at=row["ingested_at"],
    )


async def upsert_source_for_update(
    *, workspace_id: str, project_id: str, uri: str, title: str, kind: str, owner: str, classification: str
) -> SourceRow:
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
    return SourceRow(
        id=row["id"],
        workspace_id=row["workspace_id"],
        project_id=row["project_id"],
        uri=row["uri"],
        title=row["title"],
        kind=row["kind"],
        owner=row["owner"],
        classification=row["classification"],
        published_version_id=row["published_version_id"],
        classification_seq=row["classification_seq"],
        created_at=row["created_at"],
        updated_at=row["updated_at"],
    )


async def update_source_owner(source_id: str, owner: str) -> None:
    """Record who contributed the source last."""
    await db.execute("UPDATE corpus_sources SET owner = $2 WHERE id = $1", source_id, owner)


async def lock_source(source_id: str) -> None:
    """Lock a source row until commit: its versions change state one transaction at a time."""
    await db.execute("SELECT 1 FROM corpus_sources WHERE id = $1 FOR UPDATE", source_id)


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


async def reclassified_after(seq: int) -> list[SourceClassRow]:
    """Sources whose classification changed in a change set after `seq` (an index at `seq` lags them)."""
    rows = await db.fetch(
        "SELECT id, workspace_id, classification, classification_seq FROM corpus_sources WHERE classification_seq > $1",
        seq,
    )
    return [
        SourceClassRow(
            id=r["id"],
            workspace_id=r["workspace_id"],
            classification=r["classification"],
            classification_seq=r["classification_seq"],
        )
        for r in rows
    ]


async def latest_version(source_id: str) -> VersionRow | None:
    """The most recently received version of a source (without its text)."""
    row = await db.fetchrow(
        "SELECT id, seq, kind, content_hash, byte_size, status, created_at, ingested_at"
        " FROM corpus_source_versions WHERE source_id = $1 ORDER BY seq DESC LIMIT 1",
        source_id,
    )
    return _version(row) if row else None


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
) -> VersionRow:
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
    return _version(row)


async def version_with_source(version_id: str) -> VersionContentRow | None:
    """A version with its text and the source's project and workspace."""
    row = await db.fetchrow(
        "SELECT v.id, v.seq, v.source_id, v.kind, v.text, v.title, v.status, v.provenance_quality,"
        " v.content_hash, v.byte_size, v.created_at, v.ingested_at, s.project_id, s.workspace_id, s.uri"
        " FROM corpus_source_versions v JOIN corpus_sources s ON s.id = v.source_id WHERE v.id = $1",
        version_id,
    )
    if row is None:
        return None
    return VersionContentRow(
        id=row["id"],
        seq=row["seq"],
        source_id=row["source_id"],
        kind=row["kind"],
        text=row["text"],
        title=row["title"],
        status=row["status"],
        provenance_quality=row["provenance_quality"],
        content_hash=row["content_hash"],
        byte_size=row["byte_size"],
        created_at=row["created_at"],
        ingested_at=row["ingested_at"],
        project_id=row["project_id"],
        workspace_id=row["workspace_id"],
        uri=row["uri"],
    )


async def version_summary(version_id: str) -> VersionSummaryRow | None:
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
    if row is None:
        return None
    return VersionSummaryRow(
        id=row["id"],
        seq=row["seq"],
        kind=row["kind"],
        content_hash=row["content_hash"],
        byte_size=row["byte_size"],
        status=row["status"],
        created_at=row["created_at"],
        ingested_at=row["ingested_at"],
        source_id=row["source_id"],
        project_id=row["project_id"],
        uri=row["uri"],
        title=row["title"],
        owner=row["owner"],
        classification=row["classification"],
        source_created_at=row["source_created_at"],
        source_updated_at=row["source_updated_at"],
        passage_count=row["passage_count"],
        active_version_id=row["active_version_id"],
    )


async def version_state(version_id: str) -> VersionStateRow | None:
    """A version's id, seq, source, status, index log position, and the version its source publishes."""
    row = await db.fetchrow(
        "SELECT v.id, v.seq, v.source_id, v.status, v.index_seq, s.published_version_id"
        " FROM corpus_source_versions v JOIN corpus_sources s ON s.id = v.source_id WHERE v.id = $1",
        version_id,
    )
    if row is None:
        return None
    return VersionStateRow(
        id=row["id"],
        seq=row["seq"],
        source_id=row["source_id"],
        status=row["status"],
        index_seq=row["index_seq"],
        published_version_id=row["published_version_id"],
    )


async def published_version_of(source_id: str) -> VersionRefRow | None:
    """The version the index serves for a source (the last one published), if any."""
    row = await db.fetchrow(
        "SELECT v.id, v.seq, v.status FROM corpus_sources s JOIN corpus_source_versions v"
        " ON v.id = s.published_version_id WHERE s.id = $1",
        source_id,
    )
    return VersionRefRow(id=row["id"], seq=row["seq"], status=row["status"]) if row else None


async def set_published_version(source_id: str, version_id: str, index_seq: int) -> None:
    """Record that the change set at `index_seq` makes `version_id` the source's serving version."""
    await db.execute("UPDATE corpus_sources SET published_version_id = $2 WHERE id = $1", source_id, version_id)
    await db.execute("UPDATE corpus_source_versions SET index_seq = $2 WHERE id = $1", version_id, index_seq)


async def active_version_of(source_id: str) -> VersionRefRow | None:
    """The active version of a source, if any."""
    row = await db.fetchrow(
        "SELECT id, seq, status FROM corpus_source_versions WHERE source_id = $1 AND status = 'active'", source_id
    )
    return VersionRefRow(id=row["id"], seq=row["seq"], status=row["status"]) if row else None


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
