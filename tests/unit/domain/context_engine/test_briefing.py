"""Briefings answer the question asked: content terms from the one analysis, claims ranked by how much of the
question they hold with a cut-off relative to the best, `no_evidence` when nothing covers it, and never a claim
that is there only because it is recent."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from groundwork.domain.context_engine.briefing import (
    Candidate,
    WeightedTerm,
    answers,
    compose_briefing,
    rank_candidates,
    select_claims,
)
from groundwork.domain.context_engine.model import freshness
from groundwork.domain.context_engine.questions import analyze_briefing_question, package_stems, text_stems
from groundwork.domain.context_engine.views import EvidenceView, Provenance

NOW = datetime(2026, 11, 23, 12, 0, tzinfo=UTC)


def _words(question: str, subject: str = "") -> list[str]:
    return [t.word for t in analyze_briefing_question(question, subject).terms]


def test_a_question_keeps_its_content_words_and_drops_its_frame_and_its_subjects_name() -> None:
    on_track = analyze_briefing_question("Are we on track for PCI 31 Aug?")
    assert [t.word for t in on_track.terms] == ["pci", "31 Aug"]
    assert on_track.frame_types == ("milestone", "blocker", "risk")
    when = analyze_briefing_question("When is the Kubernetes cluster upgrade scheduled?")
    assert [t.word for t in when.terms] == ["kubernetes", "cluster", "upgrade"] and when.frame_types == ("milestone",)
    assert _words("What is the budget burn on dispatch planning?", "DSP Dispatch Planning") == ["budget", "burn"]
    assert _words("What is blocking us on the Copperline engagement?", "Copperline Logistics Fleet Platform") == [
        "blocking"
    ]
    assert _words("What happens when a dispatcher moves a job?") == ["happens", "dispatcher", "moves", "job"]
    assert analyze_briefing_question("What happens when a dispatcher moves a job?").frame_types == ()


def test_a_word_asking_for_a_type_is_matched_by_that_type_only() -> None:
    [blocking] = analyze_briefing_question("What is blocking the launch?").terms[:1]
    blocker = package_stems("Wallets", "Without the file the button cannot be enabled.", "blocker")
    decision = package_stems("Workshop", "A warning is better than blocking the move.", "decision")
    assert blocking.keys <= blocker and not blocking.keys & decision


def _candidate(package_id: str, text: str, *, kind: str = "risk", score: float = 1.0, days_old: int = 1) -> Candidate:
    as_of = NOW - timedelta(days=days_old)
    provenance = Provenance("radar", "radar", as_of)
    view = EvidenceView(
        f"ev_{package_id}", "prov_1", "risks", "external", "x", "general", as_of, freshness(as_of, NOW), provenance
    )
    return Candidate(
        package_id,
        "prj_1",
        text,
        text,
        kind,
        score,
        as_of,
        package_stems(text, "", kind),
        frozenset(),
        provenance,
        (view,),
    )


def _terms(question: str, weights: dict[str, float]) -> list[WeightedTerm]:
    return [WeightedTerm(t, weights.get(t.word, 1.0)) for t in analyze_briefing_question(question).terms]


def _brief(question: str, candidates: list[Candidate], weights: dict[str, float] | None = None):  # type: ignore[no-untyped-def]
    asked = analyze_briefing_question(question)
    terms = _terms(question, weights or {})
    ranked, best = rank_candidates(candidates, terms, asked.frame_types)
    chosen = select_claims(ranked) if answers(ranked, best, terms) else []
    return compose_briefing("project", "prj_1", question, chosen, terms)


def test_an_unrelated_question_answers_no_evidence_and_no_findings() -> None:
    candidates = [_candidate("pkg_a", "Vendor export risk for the card vault"), _candidate("pkg_b", "Budget risk")]
    briefing = _brief("Are there any risks with the Klarna integration?", candidates, {"risks": 0.3, "klarna": 3.0})
    assert briefing.answer == "no_evidence"
    assert briefing.findings == briefing.risks == briefing.blockers == ()
    assert briefing.missing == ("risks", "klarna", "integration") and briefing.as_of is None


def test_a_package_holding_only_the_asked_type_does_not_answer_a_question_naming_something_else() -> None:
    candidates = [
        _candidate("pkg_ids", "Vehicle IDs load into quarantine", kind="decision"),
        _candidate("pkg_pci", "The token migration has priority", kind="decision"),
    ]
    briefing = _brief("OSGB36 decision", candidates, {"decision": 1.0, "osgb36": 1.0})
    assert briefing.answer == "no_evidence" and briefing.findings == ()
    assert briefing.missing == ("osgb36", "decision")
    answered = _brief("What was decided?", candidates, {"decided": 1.0})
    assert {c.package_id for c in answered.findings} == {"pkg_ids", "pkg_pci"}  # a type alone still answers


def test_claims_are_ranked_by_relevance_cut_at_half_the_best_and_never_by_recency() -> None:
    candidates = [
        _candidate("pkg_old", "Vendor export risk for the card vault", days_old=90),
        _candidate("pkg_new", "Vendor export risk", days_old=0, score=9.0),
        _candidate("pkg_faint", "Card printer", days_old=0),
    ]
    question = "What is the vendor export risk for the card vault?"
    briefing = _brief(question, candidates)
    assert [c.package_id for c in briefing.risks] == ["pkg_old", "pkg_new"]  # the newest is not first
    assert [c.relevance for c in briefing.risks] == [1.0, 0.6]
    assert "pkg_faint" not in [c.package_id for c in briefing.risks]  # under half the best
    assert briefing.answer == "answered" and briefing.missing == ()
    assert _brief(question, list(reversed(candidates))) == briefing  # equal inputs, equal briefings


def test_a_status_question_prefers_the_claims_that_bear_on_it_and_names_only_content_words_missing() -> None:
    candidates = [
        _candidate("pkg_decision", "PCI audit scope decision", kind="decision"),
        _candidate("pkg_due", "PCI re-assessment booked for 31 August", kind="milestone"),
    ]
    briefing = _brief("Are we on track for PCI 31 Aug and the 2027 QSA audit?", candidates)
    assert [c.package_id for c in briefing.findings] == ["pkg_due", "pkg_decision"]
    assert [c.relevance for c in briefing.findings] == [0.5, 0.333333]
    assert briefing.answer == "partial" and briefing.missing == ("qsa",)  # never "track", never "2027"
    assert text_stems("booked for 31 August") >= text_stems("31 Aug") - {"aug"}
