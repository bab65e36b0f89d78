"""The Tantivy index of corpus passages: its schema, and its writer's operations on segmentations.

It lives under `<index_dir>/corpus/` as generations (see `search.generations`): readers reload after
each commit, and only the process holding the writer (the worker, or the CLI when none runs) writes.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import tantivy

from groundwork.search import generations
from groundwork.search.analysis import INDEX_TOKENIZER
from groundwork.search.generations import GenerationalIndex, GenerationWriter, IndexBusy

# 2: passages carry their source's `classification`, which search filters on.
SCHEMA_VERSION = 2
# Filter and delete keys: indexed as one raw term each (delete-by-term works on raw text fields).
KEY_FIELDS = ("workspace_id", "project_id", "source_id", "version_id", "segmenter_id", "unit", "kind", "classification")


def build_schema() -> tantivy.Schema:
    """The passage schema: BM25 text, raw key fields, and `seq` (the passage's key) as a fast field."""
    builder = tantivy.SchemaBuilder()
    builder.add_integer_field("seq", indexed=True, fast=True)
    builder.add_text_field("text", tokenizer_name=INDEX_TOKENIZER, index_option="position")
    for name in KEY_FIELDS:
        builder.add_text_field(name, tokenizer_name="raw", index_option="basic")
    return builder.build()


def unit_key(version_id: str, segmenter_id: str) -> str:
    """The key of one segmentation (a source version cut by one segmenter version) in the index."""
    return f"{version_id}/{segmenter_id}"


@dataclass(frozen=True)
class IndexedPassage:
    """What the index holds of a passage: its key, its text, and what search filters on."""

    seq: int
    text: str
    workspace_id: str
    project_id: str
    source_id: str
    version_id: str
    segmenter_id: str
    kind: str
    classification: str = "general"


class CorpusGenerationWriter(GenerationWriter):
    """A corpus generation's writer: adds passages, replaces segmentations, drops versions and segmenters."""

    schema_version = SCHEMA_VERSION

    def add_passages(self, passages: Iterable[IndexedPassage]) -> int:
        """Add passages (a rebuild writes each exactly once); returns how many."""
        count = 0
        for p in passages:
            doc = tantivy.Document()
            doc.add_integer("seq", p.seq)
            doc.add_text("text", p.text)
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
            self.add_document(doc)
            count += 1
        return count

    def replace_unit(self, version_id: str, segmenter_id: str, passages: Iterable[IndexedPassage]) -> int:
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


__all__ = ["CorpusGenerationWriter", "CorpusIndex", "IndexBusy", "IndexedPassage", "configure", "corpus_index"]
