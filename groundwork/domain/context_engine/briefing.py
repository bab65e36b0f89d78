"""The synthesized query: a deterministic briefing composed from the packages that answer the question asked.

A package's *coverage* is the share of the question's content terms (`questions.py`), each weighted by its rarity
among the subject's packages, that the package holds: in its own words in full, in what its evidence names (a cited
passage's text and headings, a cited work item's title) at half weight. A question with a frame (status, date)
counts the frame as one more term, held by the packages of the types it asks for. Claims are ranked by that
relevance, and a claim is kept only when it holds some content term (one besides the words asking for a type, when
the question has one) and reaches half of the best claim's relevance: nothing is there because it is recent or
popular. When no package covers enough of the question the briefing says `no_evidence` and holds no claim; otherwise
`answered` or, while some content word is covered by no claim, `partial`. There is never a synthesized yes or no:
claims are package summaries.

Equal inputs give equal briefings: relevance is rounded, ties go to the package search score, then the id; every
time in the output is a time of the data. Freshness inside a briefing is measured against its own `asOf` (the newest
evidence time), never against the clock.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from groundwork.domain.context_engine.model import FRESHNESS_STATUSES, Freshness, freshness
from groundwork.domain.context_engine.questions import QuestionTerm
from groundwork.domain.context_engine.views import EvidenceView, Provenance

MAX_CLAIMS_PER_SECTION = 10
SECTIONS = {"risk": "risks", "blocker": "blockers"}  # every other type is a finding
ANSWERS = ("answered", "partial", "no_evidence")
# What a package's evidence names counts for half of what the package itself says.
CITED_WEIGHT = 0.5
# A claim is kept when its relevance is at least this share of the best claim's.
RELATIVE_CUTOFF = 0.5
# A briefing answers when some package covers at least this share of the question's content (by weight).
MIN_COVERAGE = 0.3


@dataclass(frozen=True)
class WeightedTerm:
    """A content term of the question with its weight (its rarity among the subject's packages)."""

    term: QuestionTerm
    weight: float


@dataclass(frozen=True)
class Candidate:
    """A package that may answer, with what it answers to: its own words, and what its evidence names."""

    package_id: str
    project_id: str
    term: str
    summary: str
    contribution_type: str
    score: float
    as_of: datetime
    own: frozenset[str]
    cited: frozenset[str]
    provenance: Provenance
    evidence: tuple[EvidenceView, ...]


@dataclass(frozen=True)
class Claim:
    """One synthesized statement: the package's summary, its relevance, evidence, freshness and provenance."""

    text: str
    package_id: str
    project_id: str
    term: str
    contribution_type: str
    relevance: float
    evidence: tuple[EvidenceView, ...]
    freshness: Freshness
    provenance: Provenance


@dataclass(frozen=True)
class Briefing:
    """The answer to a question about a subject."""

    subject_type: str
    subject_id: str
    question: str
    answer: str
    findings: tuple[Claim, ...]
    risks: tuple[Claim, ...]
    blockers: tuple[Claim, ...]
    evidence_count: int
    provider_count: int
    missing: tuple[str, ...]
    freshness: Freshness | None
    provenance: tuple[Provenance, ...]
    as_of: datetime | None


@dataclass(frozen=True)
class Ranked:
    """A candidate with its relevance (ranking, frame included) and its coverage of the content terms."""

    candidate: Candidate
    relevance: float
    coverage: float


def _held(term: QuestionTerm, candidate: Candidate) -> float:
    if term.keys & candidate.own:
        return 1.0
    return CITED_WEIGHT if term.keys & candidate.cited else 0.0


def rank_candidates(
    candidates: list[Candidate], terms: list[WeightedTerm], frame_types: tuple[str, ...]
) -> tuple[list[Ranked], float]:
    """The candidates that hold a content term (one besides the words asking for a type, when the question has
    one; for a question without any, its frame's types), best first, cut at half the best relevance; and the best
    coverage of the question's content among the candidates kept."""
    total = sum(t.weight for t in terms)
    frame_weight = (total / len(terms) if terms else 1.0) if frame_types else 0.0
    # A question naming something besides types ("OSGB36 decision") is not answered by a package that holds
    # only the type: it must hold one of the other words.
    named = [t for t in terms if t.term.asks_for is None]
    scored = []
    for candidate in candidates:
        held = sum(t.weight * _held(t.term, candidate) for t in terms)
        coverage = round(held / total, 6) if total > 0 else 0.0
        framed = frame_weight if candidate.contribution_type in frame_types else 0.0
        if named and not any(_held(t.term, candidate) for t in named):
            continue
        if coverage > 0 or (not terms and framed):
            relevance = round((held + framed) / (total + frame_weight), 6)
            scored.append(Ranked(candidate, relevance, coverage))
    best_coverage = max((r.coverage for r in scored), default=0.0)
    best = max((r.relevance for r in scored), default=0.0)
    kept = [r for r in scored if r.relevance >= RELATIVE_CUTOFF * best]
    kept.sort(key=lambda r: (-r.relevance, -r.candidate.score, r.candidate.package_id))
    return kept, best_coverage


def answers(ranked: list[Ranked], best_coverage: float, terms: list[WeightedTerm]) -> bool:
    """Whether the briefing answers at all: some claim, and (for a question with content) enough coverage."""
    return bool(ranked) and (not terms or best_coverage >= MIN_COVERAGE)


def select_claims(ranked: list[Ranked]) -> list[Ranked]:
    """The ranked candidates a briefing holds: at most `MAX_CLAIMS_PER_SECTION` per section, best first."""
    counts: dict[str, int] = {}
    chosen = []
    for item in ranked:
        section = SECTIONS.get(item.candidate.contribution_type, "findings")
        if counts.get(section, 0) < MAX_CLAIMS_PER_SECTION:
            counts[section] = counts.get(section, 0) + 1
            chosen.append(item)
    return chosen


def _relative(evidence: EvidenceView, reference: datetime) -> EvidenceView:
    return EvidenceView(
        evidence.id,
        evidence.provider_id,
        evidence.capability,
        evidence.kind,
        evidence.reference_id,
        evidence.reference_class,
        evidence.as_of,
        freshness(evidence.as_of, reference),
        evidence.provenance,
    )


def compose_briefing(
    subject_type: str,
    subject_id: str,
    question: str,
    chosen: list[Ranked],
    terms: list[WeightedTerm],
) -> Briefing:
    """Fill the sections with the chosen claims (best first) and account for answer, coverage, freshness and
    provenance; no claim at all is `no_evidence`."""
    as_of = max((e.as_of for r in chosen for e in r.candidate.evidence), default=None)
    sections: dict[str, list[Claim]] = {"findings": [], "risks": [], "blockers": []}
    for item in chosen:
        c = item.candidate
        sections[SECTIONS.get(c.contribution_type, "findings")].append(
            Claim(
                text=c.summary,
                package_id=c.package_id,
                project_id=c.project_id,
                term=c.term,
                contribution_type=c.contribution_type,
                relevance=item.relevance,
                evidence=tuple(
                    _relative(e, as_of or e.as_of)
                    for e in sorted(c.evidence, key=lambda e: (-e.as_of.timestamp(), e.id))
                ),
                freshness=freshness(c.as_of, as_of or c.as_of),
                provenance=c.provenance,
            )
        )
    claims = [claim for section in sections.values() for claim in section]
    least_fresh = max(
        (c.freshness for c in claims),
        key=lambda f: (FRESHNESS_STATUSES.index(f.status), f.age_days),
        default=None,
    )
    covered = frozenset().union(*(r.candidate.own | r.candidate.cited for r in chosen)) if chosen else frozenset()
    missing = tuple(t.term.word for t in terms if t.term.listed and not (t.term.keys & covered))
    answer = "no_evidence" if not chosen else "partial" if missing else "answered"
    provenance = tuple(
        sorted(
            {r.candidate.provenance for r in chosen},
            key=lambda p: (p.source, p.promoter_identity, p.generated_at.timestamp()),
        )
    )
    return Briefing(
        subject_type=subject_type,
        subject_id=subject_id,
        question=question,
        answer=answer,
        findings=tuple(sections["findings"]),
        risks=tuple(sections["risks"]),
        blockers=tuple(sections["blockers"]),
        evidence_count=len({e.id for r in chosen for e in r.candidate.evidence}),
        provider_count=len({e.provider_id for r in chosen for e in r.candidate.evidence}),
        missing=missing,
        freshness=least_fresh,
        provenance=provenance,
        as_of=as_of,
    )
