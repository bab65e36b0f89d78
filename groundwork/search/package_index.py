"""The Tantivy index of context packages: BM25 over term and summary, raw filter fields, one writer.

A projection of the `ready` entries in PostgreSQL, kept in generations under `<index_dir>/packages/`
(see `search.generations`) and fed in order from `context_entry_index_log`, exactly as the corpus
index is fed from its log. Superseded and pending entries are not in it.
"""

from __future__ import annotations

from collections.abc import Iterable

import tantivy

from groundwork.domain.evidence_search.analysis import INDEX_TOKENIZER
from groundwork.persistence.repositories.context_engine.entry_index_log import IndexableEntryRow
from groundwork.search import generations
from groundwork.search.generations import GenerationalIndex, GenerationWriter

SCHEMA_VERSION = 1
KEY_FIELDS = ("entry_id", "workspace_id", "project_id", "status", "classification", "contribution_type")


def build_schema() -> tantivy.Schema:
    """The package schema: BM25 text (term, summary and type), raw key fields, `seq` as a fast field."""
    builder = tantivy.SchemaBuilder()
    builder.add_integer_field("seq", indexed=True, fast=True)
    builder.add_text_field("text", tokenizer_name=INDEX_TOKENIZER, index_option="position")
    for name in KEY_FIELDS:
        builder.add_text_field(name, tokenizer_name="raw", index_option="basic")
    return builder.build()


class PackageGenerationWriter(GenerationWriter):
    """A package generation's writer: entries are replaced whole, and only `ready` ones stay."""

    schema_version = SCHEMA_VERSION

    def put(self, packages: Iterable[IndexableEntryRow]) -> int:
        """Replace each entry's document with its current state (none unless ready); returns how many added."""
        added = 0
        for package in packages:
            self.delete_by_term("entry_id", package.entry_id)
            if package.status != "ready":
                continue
            doc = tantivy.Document()
            doc.add_integer("seq", package.seq)
            # What a query matches: the term, the summary, and the type (so "risks" finds risk packages).
            doc.add_text("text", f"{package.term}\n{package.summary}\n{package.contribution_type}")
            for name in KEY_FIELDS:
                doc.add_text(name, getattr(package, name))
            self.add_document(doc)
            added += 1
        return added

    def remove(self, entry_ids: Iterable[str]) -> None:
        """Drop entries that no longer exist."""
        for entry_id in entry_ids:
            self.delete_by_term("entry_id", entry_id)


class PackageIndex(GenerationalIndex[PackageGenerationWriter]):
    """The package index under one index directory (`<index_dir>/packages/`)."""

    folder = "packages"
    writer_class = PackageGenerationWriter

    def build_schema(self) -> tantivy.Schema:
        """The package schema."""
        return build_schema()


def package_index() -> PackageIndex:
    """The package index of this process's configured index directory."""
    return PackageIndex.at(generations.index_dir())
