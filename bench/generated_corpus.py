"""The search bench's corpus: generated sources and documents, the bench workspace, the ingest as `groundwork
ingest` runs it, Tantivy's own indexing rate, and the peer's PostgreSQL FTS index."""

from __future__ import annotations

import os
import random
import shutil
import time
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

from cpu_meter import CpuMeter

from groundwork.domain.tenancy.principals import Principal
from groundwork.persistence import db
from groundwork.persistence.repositories.tenancy import workspaces as tenancy
from groundwork.search.corpus_index import CorpusIndex, IndexedPassage
from groundwork.search.segmenters import get_segmenter
from groundwork.services.evidence_search.admin import FileSource, ingest_files
from groundwork.services.tenancy import api_keys

SYLLABLES = [c + v for c in "bcdfgklmnprstvz" for v in ("a", "e", "i", "o", "u", "ai", "ou")]
PROJECTS = 10
DEMO_CORPUS = Path(__file__).resolve().parent.parent / "groundwork" / "demo" / "corpus"


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
