"""Output schemas of the work item, people and enhancement tools (groundwork.api.resources.enhancement and tenancy)."""

from __future__ import annotations

from groundwork.api.mcp.schemas.shapes import (
    ANY,
    BOOLEAN,
    ERROR,
    NAMED,
    NUMBER,
    OPEN_OBJECT,
    OPTIONAL_TIME,
    STRING,
    TEXT,
    TIME,
    Schema,
    array,
    described,
    enum,
    listing,
    nullable,
    obj,
    one,
)
from groundwork.domain.enhancement.model import ACTIONS, ARTIFACT_TYPES, DRAFT_FIELDS, RUN_STATES
from groundwork.domain.work_items import STATUSES

WHOAMI = one(
    obj(
        {
            "id": STRING,
            "name": STRING,
            "kind": STRING,
            "workspaceId": STRING,
            "isAdmin": BOOLEAN,
            "scopes": described(array(STRING), "The scopes of this connection's API key."),
        },
        "The principal behind this connection's API key.",
    ),
    "The caller.",
)

WORK_ITEM = obj(
    {
        "id": STRING,
        "key": STRING,
        "title": STRING,
        "status": enum(STATUSES),
        "sprint": TEXT,
        "projectId": STRING,
        "version": described(STRING, "The version to send back as `expected_version` when changing it."),
        "watchers": array(STRING),
        "fields": described(OPEN_OBJECT, "The work item's fields (description, requirements, estimate...)."),
        "source": described(nullable(OPEN_OBJECT), "Where an imported item came from; null for items made here."),
    },
    "A canonical work item.",
)
PROJECT = obj(
    {"id": STRING, "key": STRING, "name": STRING, "engagement": NAMED, "portfolio": NAMED},
    "A project with the engagement and portfolio it belongs to.",
)
DIRECTORY_ENTRY = obj({"id": STRING, "name": STRING, "kind": STRING}, "A principal the caller may address.")

EVIDENCE_REF = described(OPEN_OBJECT, "An evidence reference: its kind, id and where to open it (`href`).")
DRAFT = obj(
    {
        "id": STRING,
        "action": enum(ACTIONS),
        "field": enum(DRAFT_FIELDS),
        "proposedValue": described(ANY, "The value proposed for the field."),
        "confidence": NUMBER,
        "evidenceRefs": array(EVIDENCE_REF),
        "statements": described(array(OPEN_OBJECT), "Each statement of the value with its evidence references."),
        "applyEligible": BOOLEAN,
        "ineligibleReason": TEXT,
        "appliedAt": OPTIONAL_TIME,
        "rejection": described(
            nullable(obj({"reason": STRING, "rejectedBy": STRING, "rejectedAt": TIME})),
            "Why, by whom and when a reviewer rejected the draft (null unless rejected): it is never applied.",
        ),
        "createdAt": TIME,
    },
    "A draft: a proposed value for one work item field, with its evidence.",
)
ARTIFACT = obj(
    {
        "id": STRING,
        "action": enum(ACTIONS),
        "type": enum(ARTIFACT_TYPES),
        "title": STRING,
        "summary": STRING,
        "body": STRING,
        "evidenceRefs": array(EVIDENCE_REF),
        "createdAt": TIME,
    },
    "An artifact: review material an action produced, with its evidence.",
)
RUN = obj(
    {
        "id": STRING,
        "state": enum(RUN_STATES),
        "target": obj({"id": STRING, "key": STRING, "title": STRING, "version": STRING}, "The target work item."),
        "requestedActions": array(enum(ACTIONS)),
        "actions": array(
            obj(
                {
                    "action": enum(ACTIONS),
                    "state": STRING,
                    "errorCode": TEXT,
                    "requestedAt": OPTIONAL_TIME,
                    "completedAt": OPTIONAL_TIME,
                },
                "A requested action with its own outcome.",
            )
        ),
        "instructions": TEXT,
        "drafts": array(DRAFT),
        "artifacts": array(ARTIFACT),
        "allowedActions": described(
            array(obj({"id": STRING, "label": STRING, "requiredScope": STRING})), "What this caller may do next."
        ),
        "appliedDraftIds": array(STRING),
        "requestedBy": TEXT,
        "generator": ANY,
        "error": ERROR,
        "createdAt": TIME,
        "updatedAt": OPTIONAL_TIME,
        "completedAt": OPTIONAL_TIME,
        "reviewExpiresAt": OPTIONAL_TIME,
    },
    "An enhancement run with its target, drafts, artifacts and allowed next actions.",
)
OPERATION = obj(
    {
        "id": STRING,
        "kind": enum(("work_item_enhancement", "notification_command")),
        "status": STRING,
        "runState": enum(RUN_STATES),
        "command": STRING,
        "via": STRING,
        "appId": TEXT,
        "notificationIds": array(STRING),
        "auditReferences": array(STRING),
        "items": ANY,
        "startedAt": OPTIONAL_TIME,
        "updatedAt": OPTIONAL_TIME,
        "completedAt": OPTIONAL_TIME,
        "pendingActions": array(enum(ACTIONS)),
        "error": ERROR,
        "temporal": obj({"workflowId": STRING, "runId": TEXT}),
    },
    "An operation and its status.",
    optional=(
        "runState",
        "pendingActions",
        "temporal",
        "command",
        "via",
        "appId",
        "notificationIds",
        "auditReferences",
        "items",
    ),
)
DIFF = obj(
    {
        "diff": array(
            obj(
                {"field": STRING, "currentValue": ANY, "proposedValue": ANY, "draftId": STRING},
                "One field: its value now and the value applying would write.",
            )
        ),
        "currentVersion": described(STRING, "Send back as `expected_target_version` to apply_drafts."),
    },
    "What applying the drafts would change.",
)


APPLY = obj(
    {
        "operationId": described(STRING, "The apply's id (`apply_...`), its Update's id."),
        "actorId": described(STRING, "The principal who applied."),
        "appliedAt": TIME,
        "draftIds": array(STRING),
        "targetVersionBefore": described(STRING, "The work item's version the apply was guarded by."),
        "targetVersionAfter": described(STRING, "The work item's version the apply created."),
        "changes": array(
            obj(
                {"field": enum(DRAFT_FIELDS), "draftId": TEXT, "before": ANY, "after": ANY},
                "One field the apply wrote, its value before and after.",
            )
        ),
    },
    "One apply of a run's drafts to its work item.",
)


def _run_change(description: str) -> Schema:
    return one(
        RUN,
        description,
        idempotencyReplayed=described(BOOLEAN, "true when this answers an earlier call with the same key."),
        pending=described(BOOLEAN, "Present and true when the wait ended first: the operation goes on."),
        operation=described(STRING, "With `pending`: the operation to poll."),
    ) | {"required": ["data", "idempotencyReplayed"]}


OUTPUTS: dict[str, Schema] = {
    "whoami": WHOAMI,
    "list_projects": listing(PROJECT, "The projects this caller can see.", paged=False),
    "list_work_items": listing(WORK_ITEM, "A page of work items, newest first."),
    "get_work_item": one(WORK_ITEM, "One work item."),
    "list_principals": listing(DIRECTORY_ENTRY, "A page of people this caller may address, by name."),
    "list_enhancement_runs": listing(RUN, "A page of enhancement runs, newest first."),
    "create_enhancement_run": _run_change("The run created (or, on a replay, the run the first call created)."),
    "get_enhancement_run": one(RUN, "One enhancement run."),
    "run_enhancement_action": _run_change("The run with the action added."),
    "list_enhancement_drafts": listing(DRAFT, "A page of a run's drafts."),
    "list_enhancement_artifacts": listing(ARTIFACT, "A page of a run's artifacts."),
    "get_operation_status": one(OPERATION, "The run's operation."),
    "prepare_apply": one(DIFF, "The field-level difference to show the user, and the version to confirm with."),
    "apply_drafts": _run_change("The run after the apply."),
    "list_run_applies": listing(APPLY, "A page of a run's applies, oldest first."),
    "reject_draft": _run_change("The run with the draft rejected."),
    "cancel_enhancement_run": _run_change("The run cancelled (or, with `pending`, being cancelled)."),
}
