"""services/operations/status: an operation id is read with the scope of its kind, and only by whom may see it."""

from __future__ import annotations

import pytest

from groundwork.domain.errors import GroundworkError, NotFound
from groundwork.services.operations import status
from groundwork.services.tenancy.api_keys import resolve_key
from tests.conftest import Workspace


def test_notification_operations_need_the_notifications_scope_and_runs_the_enhancement_one() -> None:
    assert status.required_scope("op_0123") == "notifications:read"
    assert status.required_scope("run_0123") == "work-item-enhance:read"


async def test_a_caller_without_the_kind_s_scope_is_refused_before_any_lookup(workspace: Workspace) -> None:
    caller = await resolve_key(await workspace.key("nia", ["work-item-enhance:read"]))
    assert caller is not None
    with pytest.raises(GroundworkError) as refused:
        await status.operation_status(caller, "op_doesnotexist")
    assert refused.value.status == 403 and refused.value.code == "insufficient_scope"


async def test_an_unknown_operation_of_either_kind_is_not_found(workspace: Workspace) -> None:
    caller = await resolve_key(await workspace.key("ned", None))
    assert caller is not None
    for operation_id in ("op_doesnotexist", "run_doesnotexist"):
        with pytest.raises(NotFound):
            await status.operation_status(caller, operation_id)
