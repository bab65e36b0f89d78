"""The Tantivy index of corpus passages: its schema, and its writer's operations on segmentations.

It lives under `<index_dir>/corpus/` as generations (see `search.generations`): readers reload after
each commit, and only the process holding the writer (the worker, or the CLI when none runs) writes.

A passage document carries everything an answer shows (the exact text and a stored record of its
source, place and provenance), so a search is answered from one index snapshot: the passages, their
version and their count always agree with each other.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple

import tantivy

from groundwork.domain.evidence_search.analysis import INDEX_TOKENIZER
from groundwork.domain.evidence_search.furniture import is_furniture
from groundwork.persistence.repositories.evidence_search.index_log import IndexablePassageRow
from groundwork.search import generations
from groundwork.search.generations import MARKER_FIELD, GenerationalIndex, GenerationWriter, IndexBusy

# 3: stored passages (answers come from the index), title/section/heading fields, the position marker.
# 4: 4 KiB document store blocks (an index written with 16 KiB blocks is rebuilt once).
# 5: the `furniture` mark (navigation, tables of contents, metadata lines rank below prose).
# 6: the furniture mark as a fast flag, read per hit: a furniture passage's score is scaled after collection,
#    where version 5 scored every query twice (once for prose, once for furniture).
SCHEMA_VERSION = 6
# Filter and delete keys: indexed as one raw term each (delete-by-term works on raw text fields).
KEY_FIELDS = ("workspace_id", "project_id", "source_id", "version_id", "segmenter_id", "unit", "kind", "classification")
# Document structure that counts in ranking: the document's title and the heading path on every passage,
# and the nearest heading again on the passage that opens its section.
STRUCTURE_FIELDS = ("title", "section", "heading")
# Marks a passage that is document furniture (`domain.evidence_search.furniture`): in version 5, a term
# `FURNITURE` in `FURNITURE_FIELD`; from version 6, `FURNITURE_FLAG` set (indexed to count, fast to read per hit).
FURNITURE_FIELD = "furniture"
FURNITURE = "1"
FURNITURE_SINCE = 5
FURNITURE_FLAG = "is_furniture"
FURNITURE_FLAG_SINCE = 6


def build_schema(version: int = SCHEMA_VERSION) -> tantivy.Schema:
    """The passage schema of a version: BM25 text and structure, raw key fields, `seq` (the passage's key), the
    furniture mark (from version 5; a fast flag from version 6), the record."""
    builder = tantivy.SchemaBuilder()
    builder.add_integer_field("seq", indexed=True, fast=True)
    builder.add_text_field("text", stored=True, tokenizer_name=INDEX_TOKENIZER, index_option="position")
    for name in STRUCTURE_FIELDS:
        builder.add_text_field(name, tokenizer_name=INDEX_TOKENIZER, index_option="position")
    for name in KEY_FIELDS:
        builder.add_text_field(name, tokenizer_name="raw", index_option="basic")
    builder.add_text_field(MARKER_FIELD, tokenizer_name="raw", index_option="basic")
    if version >= FURNITURE_FLAG_SINCE:
        builder.add_boolean_field(FURNITURE_FLAG, indexed=True, fast=True)
    elif version >= FURNITURE_SINCE:
        builder.add_text_field(FURNITURE_FIELD, tokenizer_name="raw", index_option="basic")
    builder.add_bytes_field("record", stored=True)
    return builder.build()


def unit_key(version_id: str, segmenter_id: str) -> str:
    """The key of one segmentation (a source version cut by one segmenter version) in the index."""
    return f"{version_id}/{segmenter_id}"


@dataclass(frozen=True)
class IndexedPassage:
    """What the index holds of a passage: its key, its text, what search filters on, and its record."""

    seq: int
    text: str
    workspace_id: str
    project_id: str
    source_id: str
    version_id: str
    segmenter_id: str
    kind: str
    classification: str = "general"
    passage_id: str = ""
    title: str = ""
    uri: str = ""
    page: int | None = None
    paragraph: int | None = None
    section: str | None = None
    char_start: int = 0
    char_end: int = 0
    provenance_quality: str = "exact_text"
    opens_section: bool = False


# What the writer adds: a passage built here (tests, benchmarks) or exactly as PostgreSQL holds it for the index.
Passage = IndexedPassage | IndexablePassageRow


def passage_record(p: Passage) -> bytes:
    """The stored record of a passage (everything an answer shows besides the text)."""
    return _RECORD_SEPARATOR.join(
        "" if value is None else str(value)
        for value in (
            p.passage_id,
            p.project_id,
            p.source_id,
            p.version_id,
            p.title,
            p.uri,
            p.kind,
            p.page,
            p.paragraph,
            p.section,
            p.char_start,
            p.char_end,
            p.provenance_quality,
            p.segmenter_id,
        )
    ).encode()


class StoredRecord(NamedTuple):
    """A passage's stored record: everything an answer shows besides the text, keyed like its passage row."""

    id: str
    project_id: str
    source_id: str
    version_id: str
    title: str
    uri: str
    kind: str
    page: int | None
    paragraph: int | None
    section: str | None
    char_start: int
    char_end: int
    provenance_quality: str
    segmenter_id: str


# Fields of a record are joined by the ASCII unit separator, which no stored value may hold.
_RECORD_SEPARATOR = "\x1f"


def read_record(raw: bytes) -> StoredRecord:
    """A stored record (read for every passage a search answers with: positional, no dict)."""
    (pid, project, source, version, title, uri, kind, page, paragraph, section, start, end, quality, segmenter) = (
        raw.decode().split(_RECORD_SEPARATOR)
    )
    return StoredRecord(
        pid,
        project,
        source,
        version,
        title,
        uri,
        kind,
        int(page) if page else None,
        int(paragraph) if paragraph else None,
        section or None,
        int(start),
        int(end),
        quality,
        segmenter,
    )


def nearest_heading(section: str | None) -> str | None:
    """The last heading of a heading path ("Runbook > Rollback" → "Rollback")."""
    from groundwork.search.segmenters import SECTION_SEPARATOR

    return section.rsplit(SECTION_SEPARATOR, 1)[-1] if section else None


class CorpusGenerationWriter(GenerationWriter):
    """A corpus generation's writer: adds passages, replaces segmentations, drops versions and segmenters."""

    schema_version = SCHEMA_VERSION
    earlier_schema_versions = frozenset({4, 5})
    # A search reads each passage of its page from the document store: 4 KiB blocks read in about half the
    # time of Tantivy's 16 KiB ones (measured at 1,000,000 passages) for a store about a sixth larger.
    docstore_blocksize = 4096
    records_position = True
    # Commits come often (each ingest waits for one): one thread flushes one segment per commit, not one per core.
    indexing_threads = 1

    def add_passages(self, passages: Iterable[Passage]) -> int:
        """Add passages (a rebuild writes each exactly once); returns how many."""
        count = 0
        for p in passages:
            doc = tantivy.Document()
            doc.add_integer("seq", p.seq)
            doc.add_text("text", p.text)
            if p.title:
                doc.add_text("title", p.title)
            if p.section:
                doc.add_text("section", p.section)
                if p.opens_section:
                    doc.add_text("heading", nearest_heading(p.section) or "")
            for name, value in (
                ("workspace_id", p.workspace_id),
                ("project_id", p.project_id),
                ("source_id", p.source_id),
                ("version_id", p.version_id),
                ("segmenter_id", p.segmenter_id),
                ("unit", unit_key(p.version_id, p.segmenter_id)),
                ("kind", p.kind),
                ("classification", p.classification),
            ):
                doc.add_text(name, value)
            if self.schema_version >= FURNITURE_SINCE and is_furniture(p.text):
                if self.schema_version >= FURNITURE_FLAG_SINCE:
                    doc.add_boolean(FURNITURE_FLAG, True)
                else:
                    doc.add_text(FURNITURE_FIELD, FURNITURE)
            doc.add_bytes("record", passage_record(p))
            self.add_document(doc)
            count += 1
        return count

    def replace_unit(self, version_id: str, segmenter_id: str, passages: Iterable[Passage]) -> int:
        """Replace whatever the index holds of one segmentation with `passages`; returns how many."""
        # Tantivy orders operations: this delete only touches documents added before it.
        self.delete_by_term("unit", unit_key(version_id, segmenter_id))
        return self.add_passages(passages)

    def delete_version(self, version_id: str) -> None:
        """Remove every passage of a source version."""
        self.delete_by_term("version_id", version_id)

    def delete_segmenter(self, segmenter_id: str) -> None:
        """Remove every passage cut by a segmenter version."""
        self.delete_by_term("segmenter_id", segmenter_id)


class CorpusIndex(GenerationalIndex[CorpusGenerationWriter]):
    """The corpus index under one index directory (`<index_dir>/corpus/`)."""

    folder = "corpus"
    writer_class = CorpusGenerationWriter

    def build_schema(self) -> tantivy.Schema:
        """The passage schema."""
        return build_schema()


def configure(index_dir: Path) -> None:
    """Set where this process's indexes live (the API and the worker call it at start)."""
    generations.configure(index_dir)


def corpus_index() -> CorpusIndex:
    """The corpus index this process was configured with (else `$GROUNDWORK_INDEX_DIR` or the data dir)."""
    return CorpusIndex.at(generations.index_dir())


__all__ = [
    "CorpusGenerationWriter",
    "CorpusIndex",
    "IndexBusy",
    "IndexedPassage",
    "StoredRecord",
    "configure",
    "corpus_index",
    "read_record",
]
