"""`GET /api/v1/operations/{id}`: an enhancement run's operation (its run id) or a notification command's (`op_`)."""

from __future__ import annotations

from typing import Any

from groundwork.domain.enhancement.model import SCOPE_READ as ENHANCEMENT_READ
from groundwork.domain.notifications.inbox import SCOPE_READ as NOTIFICATIONS_READ
from groundwork.domain.tenancy.connected_apps import scope_refusal
from groundwork.domain.tenancy.principals import Principal
from groundwork.services.enhancement import runs as enhancement
from groundwork.services.notifications import inbox as notifications


def required_scope(operation_id: str) -> str:
    """The scope reading this operation needs: `notifications:read` for `op_` ids, else the run's."""
    return NOTIFICATIONS_READ if operation_id.startswith("op_") else ENHANCEMENT_READ


async def operation_status(principal: Principal, operation_id: str) -> dict[str, Any]:
    """The operation with this id, if the caller holds the scope of its kind and may see it."""
    scope = required_scope(operation_id)
    if not principal.has_scope(scope):
        raise scope_refusal(principal, scope)
    if operation_id.startswith("op_"):
        return await notifications.operation(principal, operation_id)
    return await enhancement.operation_status(principal, operation_id)
