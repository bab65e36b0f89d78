"""The corpus index change log, and the passages the index holds (what a rebuild or a change set writes)."""

from __future__ import annotations

import json
from dataclasses import dataclass

import msgspec
from asyncpg import Record

from groundwork.persistence import db

# Any constant works; every process appending to the index log takes the same one.
_INDEX_LOG_LOCK = 7_301_942_203


# A Struct rather than a dataclass: a rebuild builds one per passage (a million of them), and a frozen dataclass
# costs several times as much to build.
class IndexablePassageRow(msgspec.Struct, frozen=True, gc=False):
    """A passage as the index holds it: its key (`seq`), its text, what search filters on, and its record."""

    seq: int
    passage_id: str
    text: str
    workspace_id: str
    project_id: str
    source_id: str
    version_id: str
    segmenter_id: str
    kind: str
    title: str
    uri: str
    classification: str
    page: int | None
    paragraph: int | None
    section: str | None
    char_start: int
    char_end: int
    provenance_quality: str
    opens_section: bool


@dataclass(frozen=True, slots=True)
class IndexChange:
    """One operation of a change set: `add` a segmentation (version, segmenter), `remove_version` or
    `remove_segmenter`."""

    op: str
    version: str | None = None
    segmenter: str | None = None


def _logged(change: IndexChange) -> dict[str, str]:
    # As the log holds it: an operation names only what it concerns.
    logged = {"op": change.op}
    if change.version is not None:
        logged["version"] = change.version
    if change.segmenter is not None:
        logged["segmenter"] = change.segmenter
    return logged


async def append_index_changes(changes: list[IndexChange]) -> int:
    """Append one change set for the index (call in the transaction that made the change); returns its seq."""
    # Serialising appends until commit makes seq order equal commit order, so a follower reading
    # "everything after N" can never skip a change that commits late.
    await db.execute("SELECT pg_advisory_xact_lock($1)", _INDEX_LOG_LOCK)
    row = await db.fetchrow(
        "INSERT INTO corpus_index_log (changes) VALUES ($1::jsonb) RETURNING seq",
        json.dumps([_logged(c) for c in changes]),
    )
    assert row is not None
    return int(row["seq"])


async def index_changes_after(seq: int, limit: int) -> list[tuple[int, list[IndexChange]]]:
    """Change sets after `seq`, in order."""
    rows = await db.fetch("SELECT seq, changes FROM corpus_index_log WHERE seq > $1 ORDER BY seq LIMIT $2", seq, limit)
    return [(int(r["seq"]), [_change(c) for c in json.loads(r["changes"])]) for r in rows]


def _change(logged: dict[str, str]) -> IndexChange:
    return IndexChange(logged["op"], logged.get("version"), logged.get("segmenter"))


async def last_index_change() -> int:
    """The seq of the newest change set (0 when there is none)."""
    row = await db.fetchrow("SELECT coalesce(max(seq), 0) AS seq FROM corpus_index_log")
    return int(row["seq"]) if row else 0


_INDEXABLE = """
    SELECT p.seq, p.id AS passage_id, p.text, p.workspace_id, p.project_id, p.source_id,
           p.source_version_id AS version_id, p.segmenter_id, v.kind, v.title, s.uri, s.classification, p.page,
           p.paragraph, p.section, p.char_start, p.char_end, p.provenance_quality, p.opens_section
    FROM corpus_passages p
    JOIN corpus_source_versions v ON v.id = p.source_version_id
    JOIN corpus_sources s ON s.id = p.source_id
"""


def _indexable(row: Record) -> IndexablePassageRow:
    return IndexablePassageRow(
        seq=row["seq"],
        passage_id=row["passage_id"],
        text=row["text"],
        workspace_id=row["workspace_id"],
        project_id=row["project_id"],
        source_id=row["source_id"],
        version_id=row["version_id"],
        segmenter_id=row["segmenter_id"],
        kind=row["kind"],
        title=row["title"],
        uri=row["uri"],
        classification=row["classification"],
        page=row["page"],
        paragraph=row["paragraph"],
        section=row["section"],
        char_start=row["char_start"],
        char_end=row["char_end"],
        provenance_quality=row["provenance_quality"],
        opens_section=row["opens_section"],
    )


async def indexable_passages_of(units: list[tuple[str, str]]) -> list[IndexablePassageRow]:
    """The passages of the given (version, segmenter) units, for the index."""
    if not units:
        return []
    rows = await db.fetch(
        _INDEXABLE + " WHERE (p.source_version_id, p.segmenter_id) IN (SELECT * FROM unnest($1::text[], $2::text[]))"
        " ORDER BY p.seq",
        [u[0] for u in units],
        [u[1] for u in units],
    )
    return [_indexable(r) for r in rows]


async def indexable_passages_after(after_seq: int, limit: int) -> list[IndexablePassageRow]:
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
    return [_indexable(r) for r in rows]


async def count_indexable_passages() -> int:
    """How many passages a rebuild writes."""
    row = await db.fetchrow(
        "SELECT count(*) AS n FROM corpus_passages p"
        " JOIN corpus_sources s ON s.id = p.source_id AND s.published_version_id = p.source_version_id"
        " JOIN corpus_segmenters g ON g.id = p.segmenter_id AND (g.active OR g.staging)"
    )
    return int(row["n"]) if row else 0
