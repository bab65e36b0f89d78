"""Eligibility, allowed actions, validation and versions: the rules transports rely on."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from groundwork.domain.enhancement.model import (
    ConfirmationRequired,
    DraftState,
    InvalidAction,
    allowed_actions,
    apply_eligible,
    check_confirm,
    draft_ineligibility,
    not_reviewable_reason,
    review_expired,
    state_after_action,
    validate_actions,
    validate_draft_ids,
)
from groundwork.domain.errors import InvalidRequest, ValidationFailed
from groundwork.domain.idempotency import check_key, fingerprint
from groundwork.domain.pagination import encode_cursor, page_request
from groundwork.domain.work_items import format_version, parse_version

A = DraftState("draft_a", "description", applied=False)
B = DraftState("draft_b", "description", applied=False)
C = DraftState("draft_c", "estimate", applied=True)


def test_a_field_already_applied_makes_its_other_drafts_ineligible() -> None:
    drafts = [A, DraftState("draft_x", "estimate", False), C]
    assert apply_eligible(A, drafts, "applied", expired=False) is True
    assert apply_eligible(drafts[1], drafts, "applied", expired=False) is False
    assert apply_eligible(A, drafts, "ready_for_review", expired=True) is False
    assert apply_eligible(A, drafts, "running", expired=False) is False


def test_ineligibility_reasons_cover_foreign_applied_and_same_field() -> None:
    reasons = draft_ineligibility(
        ["draft_a", "draft_b", "draft_c", "draft_zz"], {d.id: d for d in (A, B, C)}, "ready_for_review", expired=False
    )
    assert reasons == {
        "draft_b": "draft_a in this request also sets description",
        "draft_c": "already applied",
        "draft_zz": "not a draft of this run",
    }


def test_allowed_actions_follow_the_state() -> None:
    assert [a.id for a in allowed_actions("ready_for_review", True)] == ["read", "run_action", "apply"]
    assert [a.id for a in allowed_actions("applied", False)] == ["read", "run_action"]
    assert [a.id for a in allowed_actions("failed", True)] == ["read"]
    assert allowed_actions("ready_for_review", True)[2].required_scope == "work-item-enhance:apply"


def test_action_validation() -> None:
    assert validate_actions(["estimate", "design"]) == ["estimate", "design"]
    for bad in ([], ["estimate", "estimate"], ["nope"], ["estimate"] * 9, "estimate"):
        with pytest.raises((InvalidAction, InvalidRequest)):
            validate_actions(bad)
    with pytest.raises(ConfirmationRequired):
        check_confirm(None)
    with pytest.raises(ConfirmationRequired):
        check_confirm("true")


def test_versions_are_instants_in_any_utc_spelling() -> None:
    instant = datetime(2026, 11, 22, 1, 27, 24, 123456, tzinfo=UTC)
    assert format_version(instant) == "2026-11-22T01:27:24.123456Z"
    for spelling in (
        "2026-11-22T01:27:24.123456Z",
        "2026-11-22T01:27:24.123456+00:00",
        "2026-11-22T02:27:24.123456+01:00",
    ):
        assert parse_version(spelling) == instant
    for bad in ("2026-11-22T01:27:24", "tuesday", ""):
        with pytest.raises(ValueError):
            parse_version(bad)


def test_fingerprint_ignores_json_key_order_and_spacing_but_not_content() -> None:
    assert fingerprint("POST", "/x", b'{"a":1,"b":2}') == fingerprint("post", "/x", b'{ "b": 2, "a": 1 }')
    assert fingerprint("POST", "/x", b'{"a":1}') != fingerprint("POST", "/x", b'{"a":2}')
    assert fingerprint("POST", "/x", b"{}") != fingerprint("POST", "/y", b"{}")
    with pytest.raises(InvalidRequest):
        check_key("k" * 256)


def test_cursors_round_trip_and_garbage_is_rejected() -> None:
    assert page_request(5, encode_cursor({"id": "wi_9"})).after == {"id": "wi_9"}
    with pytest.raises(InvalidRequest):
        page_request(5, "%%%")
    with pytest.raises(InvalidRequest):
        page_request(0, None)


def test_absurd_cursors_are_400s() -> None:
    import base64

    nested = base64.urlsafe_b64encode(b"[" * 5000 + b"]" * 5000).decode()
    for cursor in ("x" * 5000, nested):
        with pytest.raises(InvalidRequest):
            page_request(5, cursor)


def test_a_run_is_expired_by_its_state_or_by_its_passed_deadline() -> None:
    now = datetime(2026, 11, 23, tzinfo=UTC)
    assert review_expired("expired", None, now) is True
    assert review_expired("ready_for_review", now - timedelta(microseconds=1), now) is True
    assert review_expired("ready_for_review", now, now) is True
    assert review_expired("ready_for_review", now + timedelta(seconds=1), now) is False
    assert review_expired("queued", None, now) is False


def test_only_a_live_reviewable_run_takes_actions_and_applies() -> None:
    assert not_reviewable_reason("ready_for_review", expired=False) is None
    assert not_reviewable_reason("applied", expired=False) is None
    for state in ("queued", "running", "failed", "expired"):
        assert not_reviewable_reason(state, expired=False) is not None
    assert "review window" in (not_reviewable_reason("applied", expired=True) or "")


def test_a_settled_action_returns_the_run_to_applied_once_anything_was_applied() -> None:
    assert state_after_action(has_applies=False) == "ready_for_review"
    assert state_after_action(has_applies=True) == "applied"


@pytest.mark.parametrize("draft_ids", [None, [], "draft_a", [1], ["draft_a", "draft_a"], [f"d{i}" for i in range(51)]])
def test_an_apply_names_one_to_fifty_distinct_drafts(draft_ids: object) -> None:
    with pytest.raises(ValidationFailed):
        validate_draft_ids(draft_ids)
    assert validate_draft_ids([f"d{i}" for i in range(50)]) == [f"d{i}" for i in range(50)]


def test_a_draft_value_a_patch_would_refuse_is_not_eligible_and_says_why() -> None:
    from groundwork.domain.enhancement.model import apply_ineligible_reason, draft_value_problem

    assert draft_value_problem("estimate", 8) is None
    assert draft_value_problem("estimate", True) == "the proposed value must be a number of story points"
    assert draft_value_problem("estimate", 5000) == "the proposed value must be between 0 and 1000"
    assert draft_value_problem("description", "x" * 50_001) == "the proposed value must be at most 50000 characters"
    assert draft_value_problem("mood", "happy") == "mood is not a field of a work item"
    bad = DraftState("draft_z", "estimate", applied=False, value_problem=draft_value_problem("estimate", -1))
    assert apply_eligible(bad, [bad], "ready_for_review", expired=False) is False
    assert apply_ineligible_reason(bad, [bad], "ready_for_review", expired=False) == (
        "the proposed value must be between 0 and 1000"
    )
    assert draft_ineligibility(["draft_z"], {"draft_z": bad}, "ready_for_review", expired=False) == {
        "draft_z": "the proposed value must be between 0 and 1000"
    }


def test_review_time_actions_obey_the_create_rules_over_the_runs_life() -> None:
    from groundwork.domain.enhancement.model import MAX_ACTIONS_PER_RUN, check_new_action

    assert check_new_action("design", ["estimate"], 3) == "design"
    for action, pending, total in (("design", ["design"], 2), ("poetry", [], 1), ("design", [], MAX_ACTIONS_PER_RUN)):
        with pytest.raises(InvalidAction):
            check_new_action(action, pending, total)


def test_every_failure_maps_to_a_documented_code() -> None:
    from groundwork.domain.enhancement.model import ACTION_ERROR_CODES, action_error_code

    for code in ACTION_ERROR_CODES:
        assert action_error_code(code) == code
        assert code == code.lower() and " " not in code
    for foreign in ("KeyError", "GenerationFailed", None, ""):
        assert action_error_code(foreign) == "internal_error"


def test_request_ids_derive_from_key_idempotency_key_and_request() -> None:
    from groundwork.domain.enhancement.model import derive_request_id

    first = derive_request_id("apply", "key_1", "idem-1", "wie_1", "draft_a")
    assert first == derive_request_id("apply", "key_1", "idem-1", "wie_1", "draft_a")
    assert first.startswith("apply_") and len(first) == len("apply_") + 26
    assert first != derive_request_id("apply", "key_2", "idem-1", "wie_1", "draft_a")
    assert first != derive_request_id("apply", "key_1", "idem-2", "wie_1", "draft_a")
    assert first != derive_request_id("apply", "key_1", "idem-1", "wie_1", "draft_b")


def test_allowed_actions_follow_the_callers_rights_and_the_cap() -> None:
    from groundwork.domain.enhancement.model import MAX_ACTIONS_PER_RUN, CallerRights

    viewer = CallerRights(can_read=True, can_run=True, can_apply=False)
    assert [a.id for a in allowed_actions("ready_for_review", True, viewer)] == ["read", "run_action"]
    reader = CallerRights(can_read=True, can_run=False, can_apply=False)
    assert [a.id for a in allowed_actions("applied", True, reader)] == ["read"]
    full = CallerRights.everything()
    assert [a.id for a in allowed_actions("ready_for_review", True, full, MAX_ACTIONS_PER_RUN)] == ["read", "apply"]
