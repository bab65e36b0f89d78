"""The synthesized query: a deterministic briefing over the packages that answer the question asked.

REST (`POST /api/v1/context/query`), GraphQL (`contextQuery`) and MCP (`query_context`) call `query_context`.
It reaches what the package reads reach (`reads.reach`: projects with `context:read`, the key's classes), asks
the package index for the packages that hold the question's content terms (and, for a status or date question,
those of the types its frame asks for), weighs each term by its rarity among the subject's packages, reads
what each candidate's evidence names, and lets `domain/context_engine/briefing.py` rank, cut and compose.
"""

from __future__ import annotations

import math
from dataclasses import replace

from groundwork.domain.context_engine.briefing import (
    Briefing,
    Candidate,
    WeightedTerm,
    answers,
    compose_briefing,
    rank_candidates,
    select_claims,
)
from groundwork.domain.context_engine.questions import analyze_briefing_question, package_stems, text_stems
from groundwork.domain.context_engine.views import Provenance
from groundwork.domain.errors import FieldError, ValidationFailed
from groundwork.domain.evidence_search.analysis import analyze_clauses
from groundwork.domain.evidence_search.corpus import QueryClause
from groundwork.domain.tenancy.principals import Principal
from groundwork.persistence.repositories.context_engine import briefing_reads, package_reads
from groundwork.persistence.repositories.context_engine.package_reads import PackageRow
from groundwork.platform.search_replica.reads import readable
from groundwork.search.package_index import package_index
from groundwork.search.package_search import find_packages, packages_of_types, term_frequencies
from groundwork.services.context_engine.reads import evidence_view, reach

MAX_QUESTION_CHARS = 1000
# How many best-scoring packages a briefing considers (and how many of the types the question asks for).
BRIEFING_CANDIDATES = 100


def _check(question: str, project_id: str | None, subject: tuple[str, str] | None) -> None:
    errors = []
    if not isinstance(question, str) or not question.strip() or len(question) > MAX_QUESTION_CHARS:
        errors.append(FieldError("question", f"must be 1 to {MAX_QUESTION_CHARS} characters"))
    elif "\x00" in question:
        errors.append(FieldError("question", "must not contain NUL characters"))
    if (project_id is None) == (subject is None):
        errors.append(FieldError("project_id", "give exactly one of project_id, subject_ref"))
    if errors:
        raise ValidationFailed("The query is not valid.", errors)


def _idf(doc_freq: int, num_docs: int) -> float:
    """BM25's inverse document frequency, as the package index scores it."""
    return math.log(1.0 + (max(0, num_docs - doc_freq) + 0.5) / (doc_freq + 0.5))


def _candidate(row: PackageRow, score: float, cited: list[str]) -> Candidate:
    return Candidate(
        package_id=row.id,
        project_id=row.project_id,
        term=row.term,
        summary=row.summary,
        contribution_type=row.contribution_type,
        # Rounded, so that ranking never turns on the last bits of a float.
        score=round(score, 6),
        as_of=row.as_of,
        own=package_stems(row.term, row.summary, row.contribution_type),
        cited=frozenset().union(*(text_stems(text) for text in cited)) if cited else frozenset(),
        provenance=Provenance(row.provider_name, row.promoter_identity, row.generated_at),
        evidence=(),
    )


async def query_context(
    principal: Principal,
    question: str,
    *,
    project_id: str | None = None,
    subject: tuple[str, str] | None = None,
) -> Briefing:
    """The deterministic briefing for a question about a project (or an engagement or portfolio subject)."""
    _check(question, project_id, subject)
    target = await reach(principal, project_id=project_id, subject=subject)
    assert target.subject_type is not None and target.subject_id is not None
    name = await briefing_reads.subject_name(principal.workspace_id, target.subject_type, target.subject_id)
    asked = analyze_briefing_question(question, name)
    index_terms = sorted({t for term in asked.terms for t in term.index_terms})
    clauses = analyze_clauses([QueryClause(t, False, "should", 0) for t in index_terms])
    with readable(package_index()):
        hits = await find_packages(target.project_ids, target.classes, clauses, limit=BRIEFING_CANDIDATES)
        framed = await packages_of_types(
            target.project_ids, target.classes, asked.asked_types, limit=BRIEFING_CANDIDATES
        )
        num_docs, doc_freqs, type_freqs = await term_frequencies(
            target.project_ids, target.classes, index_terms, list(asked.asked_types)
        )
    scores = {seq: 0.0 for seq in framed} | {h.seq: h.score for h in hits.hits}
    rows = await package_reads.entries_by_seq(
        principal.workspace_id, sorted(scores), target.project_ids, list(target.classes)
    )
    context = await briefing_reads.evidence_context([r.id for r in rows.values()])
    candidates = [_candidate(row, scores[seq], context.get(row.id, [])) for seq, row in sorted(rows.items())]
    weighted = [
        WeightedTerm(
            term,
            _idf(type_freqs.get(term.asks_for, 0), num_docs)
            if term.asks_for is not None
            else sum(_idf(doc_freqs.get(t, 0), num_docs) for t in term.index_terms),
        )
        for term in asked.terms
    ]
    ranked, best_coverage = rank_candidates(candidates, weighted, asked.frame_types)
    chosen = select_claims(ranked) if answers(ranked, best_coverage, weighted) else []
    evidence = await package_reads.evidence_of_entries([r.candidate.package_id for r in chosen])
    chosen = [
        replace(
            r,
            candidate=replace(
                r.candidate,
                evidence=tuple(evidence_view(e, r.candidate.as_of) for e in evidence[r.candidate.package_id]),
            ),
        )
        for r in chosen
    ]
    return compose_briefing(target.subject_type, target.subject_id, question, chosen, weighted)
