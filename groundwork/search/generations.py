"""Tantivy indexes kept as generations: one writer per generation, readers that reload after commits.

Layout under `<index_dir>/<name>/`: one directory per generation (`gen-<ULID>/`, a complete index plus
`groundwork.json` with the schema version and the last change-log position applied) and a `CURRENT`
file naming the generation that serves. A rebuild writes a new generation beside the serving one and
switches `CURRENT` at the end, so readers never see a half-built index.

Only one process may hold a generation's writer (Tantivy's lock). Readers reload after every commit:
a process that is *watched* (its change feed tells it when any process commits or switches a
generation, see `services.serving_caches`) reuses its searcher until told, so a search makes no
filesystem call; an unwatched process (a CLI command) checks `meta.json` on each use. A writer can
record its change-log position inside each commit (a marker document), so a reader knows exactly
which position its snapshot reached. The corpus index and the package index are both built on this.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import shutil
import threading
import weakref
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, Generic, TypeVar

import tantivy
from ulid import ULID

_STATE_FILE = "groundwork.json"
_CURRENT_FILE = "CURRENT"
# The marker document holding the change-log position a commit reached (indexes whose schema has `marker`).
MARKER_FIELD = "marker"
_MARKER_VALUE = "applied"


class IndexBusy(RuntimeError):
    """Another process holds this generation's writer."""


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


def _with_docstore_blocksize(path: Path, blocksize: int) -> tantivy.Index:
    """The new, empty index at `path` reopened with another document store block size.

    tantivy-py creates an index with default `IndexSettings` and cannot pass others, but Tantivy keeps them in
    `meta.json` and reads them back on open; every segment written or merged later uses them.
    """
    meta_path = path / "meta.json"
    meta = json.loads(meta_path.read_text(encoding="utf-8"))
    meta["index_settings"]["docstore_blocksize"] = blocksize
    _write_atomically(meta_path, json.dumps(meta, indent=2))
    return tantivy.Index.open(str(path))


class GenerationWriter:
    """The writer of one generation: changes become visible with `commit`, which records the log position."""

    # The schema (and analysis) version this code builds. A generation of one of the earlier versions still
    # serves, and is kept up to date, until a rebuild of the current version replaces it: changing the analysis
    # never leaves a moment without an index.
    schema_version = 1
    earlier_schema_versions: ClassVar[frozenset[int]] = frozenset()
    # Whether each commit carries its log position in a marker document (the schema then has `marker`).
    records_position: ClassVar[bool] = False
    # Tantivy's indexing threads (0: one per core). Each thread flushes its own segment at every commit.
    indexing_threads: ClassVar[int] = 0

    # Bytes per compressed block of Tantivy's document store (None: Tantivy's 16 KiB). Reading one stored
    # document decompresses its whole block, so an index read for a page of passages wants small blocks.
    docstore_blocksize: ClassVar[int | None] = None

    def __init__(
        self, path: Path, schema: tantivy.Schema, *, heap_bytes: int, schema_version: int | None = None
    ) -> None:
        self.path = path
        self.name = path.name
        # An earlier version's generation is written in its own schema until it is replaced.
        if schema_version is not None:
            self.schema_version = schema_version
        fresh = not (path / "meta.json").exists()
        self._index = tantivy.Index(schema, path=str(path), reuse=True)
        if fresh and self.docstore_blocksize is not None:
            self._index = _with_docstore_blocksize(path, self.docstore_blocksize)
        try:
            self._writer = self._index.writer(heap_size=heap_bytes, num_threads=self.indexing_threads)
        except ValueError as exc:
            if "LockBusy" in str(exc):
                raise IndexBusy(f"another process is writing the index at {path}") from None
            raise
        state = _read_json(path / _STATE_FILE) or {}
        self.applied_seq = int(state.get("applied_seq", 0))
        self.on_commit: Callable[[], None] | None = None

    def add_document(self, document: tantivy.Document) -> None:
        """Add one document (visible after the next commit)."""
        self._writer.add_document(document)

    def delete_by_term(self, field: str, value: str) -> None:
        """Delete every document whose raw field `field` holds `value` (ordered before later adds)."""
        self._writer.delete_documents_by_term(field, value)

    def commit(self, applied_seq: int) -> None:
        """Make the pending changes visible and record the change-log position they reach."""
        if self.records_position:
            # The position travels inside the commit itself: a reader's snapshot knows what it holds.
            self._writer.delete_documents_by_term(MARKER_FIELD, _MARKER_VALUE)
            marker = tantivy.Document()
            marker.add_text(MARKER_FIELD, _MARKER_VALUE)
            marker.add_integer("seq", applied_seq)
            self._writer.add_document(marker)
        self._writer.commit()
        _write_atomically(
            self.path / _STATE_FILE,
            json.dumps({"schema_version": self.schema_version, "applied_seq": applied_seq}),
        )
        self.applied_seq = applied_seq
        if self.on_commit is not None:
            self.on_commit()

    def close(self, *, finish_merges: bool = False) -> None:
        """Release the lock; uncommitted changes are dropped (only `commit` publishes them). With `finish_merges`
        the segment merges already running complete first; otherwise a rollback abandons them, and the merge
        policy starts them again after the next commit."""
        if not finish_merges:
            with contextlib.suppress(Exception):
                self._writer.rollback()
        with contextlib.suppress(Exception):
            self._writer.wait_merging_threads()
        del self._writer


@dataclass(frozen=True)
class Snapshot:
    """A searcher over one commit, and the change-log position that commit reached (0 when unknown)."""

    searcher: tantivy.Searcher
    applied_seq: int
    generation: str
    # The generation's own schema and its version: queries are built against them (an earlier version's
    # generation serves until its rebuild switches).
    schema: tantivy.Schema | None = None
    schema_version: int = 0
    # Values computed once per snapshot (e.g. corpus statistics), by name.
    memo: dict[str, Any] = field(default_factory=dict, compare=False)

    def remembered(self, name: str, compute: Callable[[], Any]) -> Any:
        """`compute()` once for this snapshot."""
        if name not in self.memo:
            self.memo[name] = compute()
        return self.memo[name]


def _marker_position(index: tantivy.Index, searcher: tantivy.Searcher) -> int:
    query = tantivy.Query.term_query(index.schema, MARKER_FIELD, _MARKER_VALUE)
    hits = searcher.search(query, 1, count=False).hits
    if not hits:
        return 0
    [value] = searcher.fast_field_values("seq", [hits[0][1]])
    return int(value or 0)


W = TypeVar("W", bound=GenerationWriter)
I = TypeVar("I", bound="GenerationalIndex[Any]")  # noqa: E741


class GenerationalIndex(Generic[W]):
    """One index (a folder of generations) under an index directory, shared by everything in this process."""

    folder: ClassVar[str] = ""
    writer_class: type[GenerationWriter] = GenerationWriter
    _registry: ClassVar[dict[tuple[type, Path], Any]] = {}
    _registry_lock = threading.Lock()

    _by_given_path: ClassVar[dict[tuple[type, Path], Any]] = {}

    @classmethod
    def at(cls: type[I], index_dir: Path) -> I:
        """The process's handle on this index under `index_dir` (no filesystem call once known)."""
        # The configured directory is the same Path object on every call: its hash is computed once.
        given = (cls, index_dir if isinstance(index_dir, Path) else Path(index_dir))
        known = cls._by_given_path.get(given)
        if known is not None:
            return known  # type: ignore[no-any-return]
        key = (cls, given[1].resolve())
        with cls._registry_lock:
            if key not in cls._registry:
                cls._registry[key] = cls(key[1])
            cls._by_given_path[given] = cls._registry[key]
            return cls._registry[key]  # type: ignore[no-any-return]

    def build_schema(self) -> tantivy.Schema:
        """The schema of this index's documents."""
        raise NotImplementedError

    def __init__(self, index_dir: Path, *, heap_bytes: int = 64_000_000) -> None:
        self.root = index_dir / self.folder
        self.schema = self.build_schema()
        self.heap_bytes = heap_bytes
        self._lock = threading.Lock()
        self._current_sig: tuple[int, int] | None = None
        self._current: str | None = None
        self._current_version = 0
        self._reader: tantivy.Index | None = None
        self._reader_generation: str | None = None
        self._reader_sig: tuple[int, int, int] | None = None
        self._writer: W | None = None
        self._snapshot: Snapshot | None = None
        # Set when something may have committed since the snapshot was taken.
        self._stale = True
        # Set when a search could not read the serving files: this process's replica checks them at its next
        # round instead of waiting for its periodic check.
        self.unreadable = False
        self._write_locks: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, asyncio.Lock] = (
            weakref.WeakKeyDictionary()
        )

    def _open_writer(self, path: Path) -> W:
        state = _read_json(path / _STATE_FILE) or {}
        version = int(state.get("schema_version", self.writer_class.schema_version))
        schema = self.schema if version == self.writer_class.schema_version else tantivy.Index.open(str(path)).schema
        writer = self.writer_class(path, schema, heap_bytes=self.heap_bytes, schema_version=version)
        writer.on_commit = self.mark_stale
        return writer  # type: ignore[return-value]

    # -- freshness -------------------------------------------------------------------------------------

    def mark_stale(self) -> None:
        """Something committed or switched generations: the next snapshot reloads."""
        self._stale = True

    def report_unreadable(self) -> None:
        """A search could not read the serving files: the next snapshot reloads, and the replica checks them."""
        self.unreadable = True
        self._stale = True

    @classmethod
    def mark_all_stale(cls, folder: str | None = None) -> None:
        """Mark every index of this process (of one folder, when given) stale."""
        with cls._registry_lock:
            indexes = list(cls._registry.values())
        for index in indexes:
            if folder is None or index.folder == folder:
                index.mark_stale()

    # -- generations ---------------------------------------------------------------------------------

    def current_generation(self) -> str | None:
        """The generation that serves, if it exists and has this code's schema or an earlier one it still serves."""
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
            version = state.get("schema_version") if state is not None else None
            servable = {self.writer_class.schema_version, *self.writer_class.earlier_schema_versions}
            usable = version in servable
            self._current_sig, self._current = sig, name if usable else None
            self._current_version = int(version) if usable and version is not None else 0
        return self._current

    def outdated(self) -> bool:
        """Whether the serving generation has an earlier schema version than this code builds (rebuild it)."""
        return self.current_generation() is not None and self._current_version != self.writer_class.schema_version

    def committed_position(self) -> int:
        """The change-log position the serving generation's last commit reached (0 when none serves)."""
        current = self.current_generation()
        state = _read_json(self.root / current / _STATE_FILE) if current else None
        return int(state.get("applied_seq", 0)) if state else 0

    def new_generation(self) -> W:
        """An empty generation beside the serving one, with its writer; `publish` makes it serve."""
        path = self.root / f"gen-{ULID()}"
        path.mkdir(parents=True)
        writer = self._open_writer(path)
        writer.commit(0)
        return writer

    def publish(self, generation: W) -> None:
        """Make `generation` serve; older generations except the one it replaces are removed."""
        self._stale = True
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

    def writer(self) -> W | None:
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
            self._writer = self._open_writer(self.root / current)
            return self._writer

    def release_writer(self, *, finish_merges: bool = True) -> None:
        """Let another process write (the CLI does this when it is done). The merges running finish first, so an
        import does not leave the index in the many small segments its commits made (searches pay per segment);
        a failing index or a process stopping passes False."""
        with self._lock:
            if self._writer is not None:
                self._writer.close(finish_merges=finish_merges)
                self._writer = None

    def verify(self) -> None:
        """Open the serving generation afresh (every segment file and its footer): raises if one is missing or
        corrupted. Nothing to check before the first build."""
        current = self.current_generation()
        if current is not None:
            self.verify_generation(current)

    def confirm_no_match(self, snapshot: Snapshot) -> None:
        """Before a search over `snapshot` answers that nothing matched: raises if its files no longer open cleanly
        (an empty snapshot has nothing to lose)."""
        if snapshot.searcher.num_docs:
            self.verify_generation(snapshot.generation)

    def verify_generation(self, generation: str) -> None:
        """Open one generation afresh (every segment file and its footer): raises if one is missing or corrupted.

        Files damaged under a running reader can read as "no match" rather than fail (its memory maps show the
        new bytes), so a search checks them before it answers that nothing matched."""
        path = str(self.root / generation)
        try:
            tantivy.Index.open(path).searcher()
        except Exception:
            # A merge's commit can delete the files of segments that `meta.json` listed a moment before: only
            # damage fails a second time.
            tantivy.Index.open(path).searcher()

    # -- reading ---------------------------------------------------------------------------------------

    def searcher(self) -> tantivy.Searcher | None:
        """A searcher over the latest commit of the serving generation; None before the first build."""
        snapshot = self.snapshot()
        return snapshot.searcher if snapshot is not None else None

    def snapshot(self) -> Snapshot | None:
        """The latest commit of the serving generation with its log position; None before the first build.

        Watched and not stale, this touches no file: it returns the snapshot taken last.
        """
        snapshot = self._snapshot
        if snapshot is not None and _watched and not self._stale:
            return snapshot
        with self._lock:
            # Cleared before looking, so a commit that lands while we reload marks it stale again.
            self._stale = False
            current = self.current_generation()
            if current is None:
                self._snapshot = None
                self._stale = True
                return None
            path = self.root / current
            if current != self._reader_generation or self._reader is None:
                reader = tantivy.Index.open(str(path))
                reader.config_reader("manual")
                self._reader, self._reader_generation, self._reader_sig = reader, current, None
            try:
                stat = (path / "meta.json").stat()
            except FileNotFoundError:
                self._stale = True
                return None
            sig = (stat.st_ino, stat.st_mtime_ns, stat.st_size)
            if sig != self._reader_sig or self._snapshot is None or self._snapshot.generation != current:
                self._reader.reload()
                self._reader_sig = sig
                searcher = self._reader.searcher()
                position = _marker_position(self._reader, searcher) if self.writer_class.records_position else 0
                self._snapshot = Snapshot(searcher, position, current, self._reader.schema, self._current_version)
            return self._snapshot


_configured_dir: Path | None = None
# Whether a change feed tells this process about every commit (then snapshots are reused until marked stale).
_watched = False


def set_watched(watched: bool) -> None:
    """Reuse snapshots until told of a commit (True), or look for one on every use (False)."""
    global _watched
    _watched = watched
    GenerationalIndex.mark_all_stale()


def configure(index_dir: Path) -> None:
    """Set where this process's indexes live (the API and the worker call it at start)."""
    global _configured_dir
    _configured_dir = Path(index_dir)


def index_dir() -> Path:
    """The index directory this process was configured with (`Settings.index_dir`, given at start)."""
    if _configured_dir is None:
        raise RuntimeError("the search index directory is not configured: call corpus_index.configure() first")
    return _configured_dir
