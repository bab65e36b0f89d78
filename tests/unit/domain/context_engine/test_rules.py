"""Context engine rules without servers: freshness, terms, fingerprints, merge decisions, derivations."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from groundwork.domain.context_engine.agent import delivery_health, ratio, sprint_health, trend
from groundwork.domain.context_engine.contribution import (
    EvidenceInput,
    contribution_class,
    fingerprint,
    parse_contribution,
    provider_rule_errors,
)
from groundwork.domain.context_engine.derivation import (
    ChangeFacts,
    PassageFacts,
    WorkItemFacts,
    derive_from_passages,
    derive_from_work_items,
)
from groundwork.domain.context_engine.merge import ContributionFacts, EntryFacts, decide
from groundwork.domain.context_engine.model import allowed_classes, freshness, normalise_term, package_status
from groundwork.domain.errors import InvalidRequest, ValidationFailed

NOW = datetime(2026, 11, 23, 12, 0, tzinfo=UTC)


def test_freshness_is_whole_days_against_the_reference_and_stale_after_thirty() -> None:
    assert freshness(NOW - timedelta(days=7, hours=23), NOW).status == "fresh"
    assert freshness(NOW - timedelta(days=8), NOW).status == "aging"
    aging = freshness(NOW - timedelta(days=30, hours=23), NOW)
    assert (aging.status, aging.age_days) == ("aging", 30)
    assert freshness(NOW - timedelta(days=31), NOW).status == "stale"
    assert freshness(NOW + timedelta(hours=1), NOW).age_days == 0
    assert package_status("ready", freshness(NOW - timedelta(days=40), NOW)) == "stale"
    assert package_status("superseded", freshness(NOW, NOW)) == "superseded"


def test_terms_normalise_case_accents_and_punctuation() -> None:
    assert normalise_term("  Café  Lock\u2011in! ") == normalise_term("cafe lock-in") == "cafe lock in"


def test_restricted_classes_need_their_scope() -> None:
    assert allowed_classes(frozenset({"context-engine:read"})) == ("general",)
    assert allowed_classes(frozenset({"context-engine:staffing", "context-engine:financial"})) == (
        "general",
        "financial",
        "staffing",
    )


def _raw(**extra: object) -> dict[str, object]:
    return {
        "provider_id": "prov_1",
        "project_id": "prj_1",
        "term": "Vendor",
        "summary": "Renews yearly.",
        "contribution_type": "risk",
        "evidence": [
            {
                "capability": "risks",
                "reference": {"kind": "external", "id": "a", "class": "general"},
                "as_of": "2026-11-01T00:00:00Z",
            },
            {"capability": "risks", "reference": {"kind": "external", "id": "b"}, "as_of": "2026-11-02T00:00:00+01:00"},
        ],
        "generated_at": "2026-11-02T00:00:00Z",
        **extra,
    }


def test_a_fingerprint_ignores_evidence_order_and_time_spelling() -> None:
    first = parse_contribution(_raw(), now=NOW)
    raw = _raw()
    raw["evidence"] = list(reversed(raw["evidence"]))  # type: ignore[call-overload]
    raw["generated_at"] = "2026-11-02T01:00:00+01:00"
    assert fingerprint(parse_contribution(raw, now=NOW)) == fingerprint(first)
    assert fingerprint(parse_contribution(_raw(summary="Other."), now=NOW)) != fingerprint(first)
    assert [e.reference_class for e in first.evidence] == ["general", "general"]


def test_shapes_are_400_and_broken_rules_422() -> None:
    with pytest.raises(InvalidRequest) as shape:
        parse_contribution(_raw(term=3, colour="red"), now=NOW)
    assert not isinstance(shape.value, ValidationFailed)
    assert {e.path for e in shape.value.errors} == {"term", "colour"}
    with pytest.raises(ValidationFailed) as rules:
        parse_contribution(_raw(contribution_type="gossip", generated_at="2027-01-01T00:00:00Z", evidence=[]), now=NOW)
    assert {e.path for e in rules.value.errors} == {"contribution_type", "generated_at", "evidence"}


def test_provider_rules_bind_capabilities_to_types_and_forbid_mixed_restrictions() -> None:
    contribution = parse_contribution(_raw(), now=NOW)
    assert provider_rule_errors(contribution, ("risks",), "delivery") == []
    assert [e.path for e in provider_rule_errors(contribution, ("blockers",), "delivery")] == [
        "evidence[0].capability",
        "evidence[1].capability",
    ]
    staffing = parse_contribution(
        _raw(
            evidence=[
                {
                    "capability": "risks",
                    "reference": {"kind": "external", "id": "a", "class": "staffing"},
                    "as_of": "2026-11-01T00:00:00Z",
                }
            ]
        ),
        now=NOW,
    )
    assert [e.path for e in provider_rule_errors(staffing, ("risks",), "financial")] == ["evidence"]
    assert contribution_class(staffing, "delivery") == "staffing"
    assert contribution_class(contribution, "financial") == "financial"
    assert contribution_class(contribution, "corpus") == "general"


def _entry(
    entry_id: str, kind: str = "risk", cls: str = "general", authority: str = "advisory", status: str = "ready"
) -> EntryFacts:
    return EntryFacts(entry_id, "prj_1", "vendor", kind, cls, authority, status)


def _facts(
    kind: str = "risk", cls: str = "general", authority: str = "advisory", supersedes: str | None = None
) -> ContributionFacts:
    return ContributionFacts("prj_1", "vendor", kind, cls, authority, supersedes)


def test_merge_decisions() -> None:
    assert decide(_facts(), [], None).kind == "created"
    merged = decide(_facts(), [_entry("pkg_a")], None)
    assert (merged.kind, merged.target_entry_id, merged.evolution_kind) == ("merged", "pkg_a", "merged")
    canonical = decide(_facts(authority="canonical"), [_entry("pkg_a")], None)
    assert (canonical.kind, canonical.related_entry_id, canonical.evolution_kind) == ("superseded", "pkg_a", "created")
    assert decide(_facts(authority="canonical"), [_entry("pkg_a", authority="canonical")], None).kind == "merged"
    apart = decide(_facts(kind="blocker"), [_entry("pkg_a")], None)
    assert (apart.kind, apart.related_entry_id) == ("kept_separate", "pkg_a")
    assert decide(_facts(cls="financial"), [_entry("pkg_a")], None).kind == "kept_separate"
    assert decide(_facts(), [_entry("pkg_a", status="superseded")], None).kind == "created"
    named = decide(_facts(supersedes="pkg_b"), [_entry("pkg_a")], _entry("pkg_b"))
    assert (named.kind, named.related_entry_id) == ("superseded", "pkg_b")
    late = decide(_facts(supersedes="pkg_b"), [], _entry("pkg_b", status="superseded"))
    assert (late.kind, late.related_entry_id) == ("kept_separate", "pkg_b")


def test_work_items_yield_risks_blockers_dependencies_milestones_and_scope_changes() -> None:
    version = NOW - timedelta(days=2)
    items = [
        WorkItemFacts(
            "wi_1",
            "PAY-1",
            "Export",
            "in_progress",
            "S1",
            version,
            {
                "risks": "- Licence ends in June.",
                "description": "Blocked by the vendor tool. It depends on the PSP API.",
            },
            (ChangeFacts(version, version, {"estimate": {"from": 3, "to": 5}}),),
        ),
        WorkItemFacts("wi_2", "PAY-2", "Done thing", "done", "S1", version, {"risks": "Old risk here."}),
    ]
    derived = {(d.term, d.contribution_type): d for d in derive_from_work_items("PAY", items)}
    assert set(derived) == {
        ("PAY-1 Export", "risk"),
        ("PAY-1 Export", "blocker"),
        ("PAY-1 Export", "dependency"),
        ("PAY-1 Export", "finding"),
        ("PAY sprint S1", "milestone"),
    }
    assert derived[("PAY-1 Export", "risk")].summary == "PAY-1: Licence ends in June."
    assert derived[("PAY-1 Export", "finding")].evidence[0].kind == "work_item_history"
    assert "1 of 2 work items done" in derived[("PAY sprint S1", "milestone")].summary
    assert derive_from_work_items("PAY", list(reversed(items))) == derive_from_work_items("PAY", items)


def test_passages_yield_decisions_risks_blockers_and_action_items_with_their_class() -> None:
    as_of = NOW - timedelta(days=1)
    passages = [
        PassageFacts(
            "psg_1", "src_1", "Steering", "Steering > Decisions", 0, "Decision: we go with OR-Tools.", "general", as_of
        ),
        PassageFacts(
            "psg_2", "src_1", "Steering", "Steering > Actions", 1, "Maya: send the plan by Friday.", "general", as_of
        ),
        PassageFacts("psg_3", "src_2", "Budget", None, 0, "The budget is at risk of overrun.", "financial", as_of),
        PassageFacts(
            "psg_4", "src_1", "Steering", "Steering > Notes", 2, "Nothing to see in this paragraph.", "general", as_of
        ),
    ]
    derived = {(d.term, d.contribution_type): d for d in derive_from_passages(passages)}
    assert set(derived) == {
        ("Steering — Decisions", "decision"),
        ("Steering — Actions", "finding"),
        ("Budget", "risk"),
    }
    assert derived[("Budget", "risk")].content_class == "financial"
    assert derived[("Steering — Actions", "finding")].evidence[0].capability == "action_items"


def test_agent_signals_are_directional() -> None:
    assert (trend(3, 1), trend(1, 1), trend(0, 2)) == ("rising", "steady", "falling")
    assert ratio(1, 3) == 0.333 and ratio(1, 0) == 0.0
    assert delivery_health(0, 0, 10) == "on_track"
    assert delivery_health(1, 0, 10) == "at_risk"
    assert delivery_health(3, 0, 10) == "off_track"
    assert sprint_health(0, 6, 10, 1) == "off_track" and sprint_health(5, 1, 10, 0) == "on_track"


def test_evidence_input_keeps_its_wire_form() -> None:
    item = EvidenceInput("risks", "external", "x", "general", NOW)
    assert item.as_dict() == {
        "capability": "risks",
        "reference": {"kind": "external", "id": "x", "class": "general"},
        "as_of": "2026-11-23T12:00:00.000000Z",
    }
