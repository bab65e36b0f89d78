"""The search bench's queries: four shapes drawn by document frequency, asked alike of Groundwork and of
PostgreSQL, and the known-item sets of its relevance figures."""

from __future__ import annotations

import random
import re
from collections.abc import Callable
from dataclasses import dataclass

from groundwork.domain.evidence_search.analysis import analyze_question, is_stopword, terms
from groundwork.domain.evidence_search.corpus import parse_query
from groundwork.persistence import db
from groundwork.search.corpus_index import CorpusIndex

SHAPES = ("two rare terms", "a common and a mid term", "one very common term", "a question")
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


# Every word required, ranked like the peer (the relevance sets' second PostgreSQL ranker).
PG_AND = """
SELECT p.id FROM corpus_passages p, websearch_to_tsquery('english', $1) q
WHERE p.tsv @@ q AND p.project_id = ANY($2::text[]) ORDER BY ts_rank_cd(p.tsv, q) DESC LIMIT $3
"""
RANKERS = ("Groundwork", "PostgreSQL AND", "PostgreSQL OR")


def reciprocal_rank(ids: list[str], relevant: set[str]) -> float:
    """1/rank of the first relevant id within the first 10, else 0."""
    for rank, found in enumerate(ids[:10], start=1):
        if found in relevant:
            return 1 / rank
    return 0.0
