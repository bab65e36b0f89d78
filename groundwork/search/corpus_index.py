"""The Tantivy index of corpus passages: its schema, its generations, the reader and the one writer.

Layout under `<index_dir>/corpus/`: one directory per generation (`gen-<ULID>/`, a complete index
plus `groundwork.json` with the schema version and the last change-log position applied) and a
`CURRENT` file naming the generation that serves. A rebuild writes a new generation beside the
serving one and switches `CURRENT` at the end, so readers never see a half-built index.

Only one process may hold a generation's writer (Tantivy's lock); readers reload when the
generation's `meta.json` changes, i.e. after every commit.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import shutil
import threading
import weakref
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import tantivy
from ulid import ULID

from groundwork.search.analysis import INDEX_TOKENIZER

SCHEMA_VERSION = 1
_STATE_FILE = "groundwork.json"
_CURRENT_FILE = "CURRENT"
# Filter and delete keys: indexed as one raw term each (delete-by-term works on raw text fields).
KEY_FIELDS = ("workspace_id", "project_id", "source_id", "version_id", "segmenter_id", "unit", "kind")


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


class IndexBusy(RuntimeError):
    """Another process holds this generation's writer."""


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


def _read_json(path: Path) -> dict[str, Any] | None:
    try:
        value = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return value if isinstance(value, dict) else None


def _write_atomically(path: Path, content: str) -> None:
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{threading.get_ident()}.tmp")
    tmp.write_text(content, encoding="utf-8")
    with open(tmp, "rb") as handle:
        os.fsync(handle.fileno())
    os.replace(tmp, path)


class GenerationWriter:
    """The writer of one generation: deletes and adds are applied by `commit`, with the log position."""

    def __init__(self, path: Path, schema: tantivy.Schema, *, heap_bytes: int) -> None:
        self.path = path
        self.name = path.name
        self._index = tantivy.Index(schema, path=str(path), reuse=True)
        try:
            self._writer = self._index.writer(heap_size=heap_bytes)
        except ValueError as exc:
            if "LockBusy" in str(exc):
                raise IndexBusy(f"another process is writing the index at {path}") from None
            raise
        state = _read_json(path / _STATE_FILE) or {}
        self.applied_seq = int(state.get("applied_seq", 0))

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
            ):
                doc.add_text(name, value)
            self._writer.add_document(doc)
            count += 1
        return count

    def replace_unit(self, version_id: str, segmenter_id: str, passages: Iterable[IndexedPassage]) -> int:
        """Replace whatever the index holds of one segmentation with `passages`; returns how many."""
        # Tantivy orders operations: this delete only touches documents added before it.
        self._writer.delete_documents_by_term("unit", unit_key(version_id, segmenter_id))
        return self.add_passages(passages)

    def delete_version(self, version_id: str) -> None:
        """Remove every passage of a source version."""
        self._writer.delete_documents_by_term("version_id", version_id)

    def delete_segmenter(self, segmenter_id: str) -> None:
        """Remove every passage cut by a segmenter version."""
        self._writer.delete_documents_by_term("segmenter_id", segmenter_id)

    def commit(self, applied_seq: int) -> None:
        """Make the pending changes visible and record the change-log position they reach."""
        self._writer.commit()
        _write_atomically(
            self.path / _STATE_FILE,
            json.dumps({"schema_version": SCHEMA_VERSION, "applied_seq": applied_seq}),
        )
        self.applied_seq = applied_seq

    def close(self) -> None:
        """Drop uncommitted changes and release the lock."""
        with contextlib.suppress(Exception):
            self._writer.rollback()
        with contextlib.suppress(Exception):
            self._writer.wait_merging_threads()
        del self._writer


class CorpusIndex:
    """The corpus index under one index directory, shared by everything in this process."""

    _registry: dict[Path, CorpusIndex] = {}
    _registry_lock = threading.Lock()

    @classmethod
    def at(cls, index_dir: Path) -> CorpusIndex:
        """The process's handle on the corpus index under `index_dir`."""
        key = Path(index_dir).resolve()
        with cls._registry_lock:
            if key not in cls._registry:
                cls._registry[key] = cls(key)
            return cls._registry[key]

    def __init__(self, index_dir: Path, *, heap_bytes: int = 64_000_000) -> None:
        self.root = index_dir / "corpus"
        self.schema = build_schema()
        self.heap_bytes = heap_bytes
        self._lock = threading.Lock()
        self._current_sig: tuple[int, int] | None = None
        self._current: str | None = None
        self._reader: tantivy.Index | None = None
        self._reader_generation: str | None = None
        self._reader_sig: tuple[int, int, int] | None = None
        self._writer: GenerationWriter | None = None
        self._write_locks: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, asyncio.Lock] = (
            weakref.WeakKeyDictionary()
        )

    # -- generations ---------------------------------------------------------------------------------

    def current_generation(self) -> str | None:
        """The generation that serves, if it exists and has this code's schema."""
        path = self.root / _CURRENT_FILE
        try:
            stat = path.stat()
        except FileNotFoundError:
            self._current_sig, self._current = None, None
            return None
        sig = (stat.st_ino, stat.st_mtime_ns)
        if sig != self._current_sig:
            name = path.read_text(encoding="utf-8").strip()
            state = _read_json(self.root / name / _STATE_FILE) if name else None
            usable = state is not None and state.get("schema_version") == SCHEMA_VERSION
            self._current_sig, self._current = sig, name if usable else None
        return self._current

    def new_generation(self) -> GenerationWriter:
        """An empty generation beside the serving one, with its writer; `publish` makes it serve."""
        path = self.root / f"gen-{ULID()}"
        path.mkdir(parents=True)
        writer = GenerationWriter(path, self.schema, heap_bytes=self.heap_bytes)
        writer.commit(0)
        return writer

    def publish(self, generation: GenerationWriter) -> None:
        """Make `generation` serve; older generations except the one it replaces are removed."""
        with self._lock:
            previous = self.current_generation()
            _write_atomically(self.root / _CURRENT_FILE, generation.name)
            if self._writer is not None and self._writer is not generation:
                self._writer.close()
            self._writer = generation
            for path in self.root.glob("gen-*"):
                if path.name not in (generation.name, previous):
                    shutil.rmtree(path, ignore_errors=True)

    # -- writing ---------------------------------------------------------------------------------------

    def write_lock(self) -> asyncio.Lock:
        """Serialises this process's writing tasks (one per event loop)."""
        loop = asyncio.get_running_loop()
        lock = self._write_locks.get(loop)
        if lock is None:
            lock = self._write_locks[loop] = asyncio.Lock()
        return lock

    def writer(self) -> GenerationWriter | None:
        """The writer of the serving generation (opened on first use); None when no generation serves."""
        with self._lock:
            current = self.current_generation()
            if current is None:
                return None
            if self._writer is not None and self._writer.name == current:
                return self._writer
            if self._writer is not None:
                self._writer.close()
                self._writer = None
            self._writer = GenerationWriter(self.root / current, self.schema, heap_bytes=self.heap_bytes)
            return self._writer

    def release_writer(self) -> None:
        """Let another process write (the CLI does this when it is done)."""
        with self._lock:
            if self._writer is not None:
                self._writer.close()
                self._writer = None

    # -- reading ---------------------------------------------------------------------------------------

    def searcher(self) -> tantivy.Searcher | None:
        """A searcher over the latest commit of the serving generation; None before the first build."""
        with self._lock:
            current = self.current_generation()
            if current is None:
                return None
            path = self.root / current
            if current != self._reader_generation or self._reader is None:
                reader = tantivy.Index.open(str(path))
                reader.config_reader("manual")
                self._reader, self._reader_generation, self._reader_sig = reader, current, None
            try:
                stat = (path / "meta.json").stat()
            except FileNotFoundError:
                return None
            sig = (stat.st_ino, stat.st_mtime_ns, stat.st_size)
            if sig != self._reader_sig:
                self._reader.reload()
                self._reader_sig = sig
            return self._reader.searcher()


_configured_dir: Path | None = None


def configure(index_dir: Path) -> None:
    """Set where this process's corpus index lives (the API and the worker call it at start)."""
    global _configured_dir
    _configured_dir = Path(index_dir)


def corpus_index() -> CorpusIndex:
    """The corpus index this process was configured with (else `$GROUNDWORK_INDEX_DIR` or the data dir)."""
    if _configured_dir is not None:
        return CorpusIndex.at(_configured_dir)
    from groundwork.config import default_data_dir

    env = os.environ.get("GROUNDWORK_INDEX_DIR")
    return CorpusIndex.at(Path(env) if env else default_data_dir() / "index")
