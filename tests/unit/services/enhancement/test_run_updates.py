"""services/enhancement/run_updates: a rejected or failed Update reaches every transport as the error its rule names,
never a generic 400."""

from __future__ import annotations

import pytest
from temporalio.client import WorkflowUpdateFailedError
from temporalio.exceptions import ApplicationError

from groundwork.domain.errors import ValidationFailed
from groundwork.services.enhancement.run_updates import update_error
from groundwork.services.enhancement.runs import check_wait


@pytest.mark.parametrize(
    ("kind", "status", "code"),
    [
        ("invalid_action", 422, "invalid_action"),
        ("run_not_reviewable", 409, "run_not_reviewable"),
        ("validation_failed", 422, "validation_failed"),
    ],
)
def test_an_update_refused_by_the_run_maps_to_its_code(kind: str, status: int, code: str) -> None:
    error = update_error(WorkflowUpdateFailedError(ApplicationError("design is already pending", type=kind)))
    assert (error.status, error.code) == (status, code)
    assert "already pending" in error.detail


def test_validators_of_runs_started_before_this_version_map_by_their_message_prefix() -> None:
    error = update_error(WorkflowUpdateFailedError(ValueError("invalid_action: unknown action 'poetry'")))
    assert (error.status, error.code) == (422, "invalid_action")


@pytest.mark.parametrize("wait", [-1, 31, True, 2.5, "10"])
def test_wait_out_of_range_or_of_another_type_is_validation_failed(wait: object) -> None:
    with pytest.raises(ValidationFailed) as refused:
        check_wait(wait)
    assert refused.value.errors[0].path == "wait"
    assert check_wait(None) == 10 and check_wait(0) == 0 and check_wait(30) == 30
