"""The synthesized query: a deterministic briefing composed from ranked packages, with no model and no clock.

Equal inputs give equal briefings: candidates are ranked by BM25 score, then recency, then id; every
time in the output is a time of the data. Freshness inside a briefing is measured against the
briefing's own `asOf` (the newest evidence time), never against the clock.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime

from groundwork.domain.context_engine.model import FRESHNESS_STATUSES, Freshness, freshness
from groundwork.domain.context_engine.views import EvidenceView, Provenance

MAX_CLAIMS_PER_SECTION = 10
SECTIONS = {"risk": "risks", "blocker": "blockers"}  # every other type is a finding

_WORD = re.compile(r"[^\W_]+(?:[-'][^\W_]+)*", re.UNICODE)
_STOPWORDS = frozenset(
    "a about above after again against all am an and any are as at be because been before being below between "
    "both but by can could did do does doing down during each few for from further had has have having he her "
    "here hers him his how i if in into is it its itself just me more most my no nor not now of off on once "
    "only or other our ours out over own same she should so some such than that the their theirs them then "
    "there these they this those through to too under until up very was we were what when where which while "
    "who whom why will with would you your yours please tell show give list anything everything there's "
    "what's us let know get project projects engagement portfolio current currently".split()
)


@dataclass(frozen=True)
class QuestionTerm:
    """A content word of the question and its index terms (stems)."""

    word: str
    stems: frozenset[str]


@dataclass(frozen=True)
class Candidate:
    """A package that matched the question, with what the briefing needs of it."""

    package_id: str
    project_id: str
    term: str
    summary: str
    contribution_type: str
    score: float
    as_of: datetime
    stems: frozenset[str]
    provenance: Provenance
    evidence: tuple[EvidenceView, ...]


@dataclass(frozen=True)
class Claim:
    """One synthesized statement: the package's summary, with its evidence, freshness and provenance."""

    text: str
    package_id: str
    project_id: str
    term: str
    contribution_type: str
    evidence: tuple[EvidenceView, ...]
    freshness: Freshness
    provenance: Provenance


@dataclass(frozen=True)
class Briefing:
    """The answer to a question about a subject."""

    subject_type: str
    subject_id: str
    question: str
    findings: tuple[Claim, ...]
    risks: tuple[Claim, ...]
    blockers: tuple[Claim, ...]
    evidence_count: int
    provider_count: int
    missing: tuple[str, ...]
    freshness: Freshness | None
    provenance: tuple[Provenance, ...]
    as_of: datetime | None


def content_words(question: str) -> list[str]:
    """The question's content words, lowercased, in order, each once (stopwords dropped)."""
    seen: dict[str, None] = {}
    for match in _WORD.finditer(question.casefold()):
        word = match.group(0)
        if word not in _STOPWORDS and len(word) > 1:
            seen.setdefault(word, None)
    return list(seen)


def _rank_key(candidate: Candidate) -> tuple[float, float, str]:
    return (-candidate.score, -candidate.as_of.timestamp(), candidate.package_id)


def _sections(candidates: list[Candidate]) -> dict[str, list[Candidate]]:
    sections: dict[str, list[Candidate]] = {"findings": [], "risks": [], "blockers": []}
    for candidate in sorted((c for c in candidates if c.score > 0), key=_rank_key):
        section = sections[SECTIONS.get(candidate.contribution_type, "findings")]
        if len(section) < MAX_CLAIMS_PER_SECTION:
            section.append(candidate)
    return sections


def select_claims(candidates: list[Candidate]) -> list[Candidate]:
    """The candidates a briefing will hold (ranking needs no evidence: fetch it for these only)."""
    return [c for section in _sections(candidates).values() for c in section]


def _relative(evidence: EvidenceView, reference: datetime) -> EvidenceView:
    fresh = freshness(evidence.as_of, reference)
    return EvidenceView(
        evidence.id,
        evidence.provider_id,
        evidence.capability,
        evidence.kind,
        evidence.reference_id,
        evidence.reference_class,
        evidence.as_of,
        fresh,
        evidence.provenance,
    )


def compose_briefing(
    subject_type: str,
    subject_id: str,
    question: str,
    candidates: list[Candidate],
    terms: list[QuestionTerm],
) -> Briefing:
    """Rank the candidates, fill the sections, and account for coverage, freshness and provenance."""
    sections = _sections(candidates)
    included = [c for section in sections.values() for c in section]
    as_of = max((e.as_of for c in included for e in c.evidence), default=None)
    claims: dict[str, tuple[Claim, ...]] = {}
    for name, chosen in sections.items():
        claims[name] = tuple(
            Claim(
                text=c.summary,
                package_id=c.package_id,
                project_id=c.project_id,
                term=c.term,
                contribution_type=c.contribution_type,
                evidence=tuple(
                    _relative(e, as_of or e.as_of)
                    for e in sorted(c.evidence, key=lambda e: (-e.as_of.timestamp(), e.id))
                ),
                freshness=freshness(c.as_of, as_of or c.as_of),
                provenance=c.provenance,
            )
            for c in chosen
        )
    all_claims = [claim for section in claims.values() for claim in section]
    least_fresh = max(
        (c.freshness for c in all_claims),
        key=lambda f: (FRESHNESS_STATUSES.index(f.status), f.age_days),
        default=None,
    )
    covered = frozenset().union(*(c.stems for c in included)) if included else frozenset()
    missing = tuple(t.word for t in terms if not (t.stems & covered))
    provenance = tuple(
        sorted(
            {c.provenance for c in included},
            key=lambda p: (p.source, p.promoter_identity, p.generated_at.timestamp()),
        )
    )
    return Briefing(
        subject_type=subject_type,
        subject_id=subject_id,
        question=question,
        findings=claims["findings"],
        risks=claims["risks"],
        blockers=claims["blockers"],
        evidence_count=len({e.id for c in included for e in c.evidence}),
        provider_count=len({e.provider_id for c in included for e in c.evidence}),
        missing=missing,
        freshness=least_fresh,
        provenance=provenance,
        as_of=as_of,
    )
