"""GraphQL `Operation`: one type for both kinds `GET /api/v1/operations/{id}` answers.

An enhancement run's operation (`kind: work_item_enhancement`) carries its run state, pending
actions and Temporal execution; a notification command's (`kind: notification_command`, ids `op_`)
carries the command, the door it came through, the notifications it moved and their audit references.
"""

from __future__ import annotations

from typing import Any

import strawberry

from groundwork.api.graphql.enums import DateTime, OperationKind, OperationStatus, Via, WorkItemEnhancementRunState


@strawberry.type
class OperationError:
    code: str
    message: str | None


@strawberry.type
class TemporalExecution:
    workflow_id: str
    run_id: str | None


@strawberry.type
class Operation:
    id: strawberry.ID
    kind: OperationKind
    status: OperationStatus
    run_state: WorkItemEnhancementRunState | None
    started_at: DateTime | None
    updated_at: DateTime | None
    completed_at: DateTime | None
    pending_actions: list[str]
    error: OperationError | None
    temporal: TemporalExecution | None
    command: str | None
    via: Via | None
    notification_ids: list[strawberry.ID]
    audit_references: list[str]

    @classmethod
    def of(cls, data: dict[str, Any]) -> Operation:
        """The type from the REST resource of either kind."""
        failure = data.get("error")
        temporal = data.get("temporal")
        return cls(
            id=strawberry.ID(data["id"]),
            kind=data["kind"],
            status=data["status"],
            run_state=data.get("runState"),
            started_at=data.get("startedAt"),
            updated_at=data.get("updatedAt"),
            completed_at=data.get("completedAt"),
            pending_actions=data.get("pendingActions", []),
            error=OperationError(code=failure["code"], message=failure["message"]) if failure else None,
            temporal=TemporalExecution(workflow_id=temporal["workflowId"], run_id=temporal["runId"])
            if temporal
            else None,
            command=data.get("command"),
            via=data.get("via"),
            notification_ids=[strawberry.ID(i) for i in data.get("notificationIds", [])],
            audit_references=data.get("auditReferences", []),
        )
