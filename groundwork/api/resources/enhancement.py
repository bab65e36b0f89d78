"""JSON shapes of resources (the specs' camelCase names), shared by REST and MCP."""

from __future__ import annotations

from typing import Any

from litestar.serialization import encode_json

from groundwork.domain.evidence_routes import with_route
from groundwork.domain.times import timestamp
from groundwork.domain.work_items import WorkItem, format_version, full_fields
from groundwork.persistence.repositories.enhancement.outputs import ArtifactRow, DraftRow
from groundwork.persistence.repositories.tenancy.workspaces import VisibleProjectRow
from groundwork.persistence.repositories.work_items import WorkItemChangeRow
from groundwork.services.enhancement.run_views import RunView


def work_item_resource(item: WorkItem) -> dict[str, Any]:
    """The canonical work item resource."""
    return {
        "id": item.id,
        "key": item.key,
        "title": item.title,
        "status": item.status,
        "sprint": item.sprint,
        "projectId": item.project_id,
        "version": format_version(item.version),
        "watchers": list(item.watchers),
        "fields": full_fields(item.fields),
        "source": item.source,
    }


def project_resource(row: VisibleProjectRow) -> dict[str, Any]:
    """A project with the engagement and portfolio it belongs to."""
    return {
        "id": row.id,
        "key": row.key,
        "name": row.name,
        "engagement": {"id": row.engagement_id, "name": row.engagement_name},
        "portfolio": {"id": row.portfolio_id, "name": row.portfolio_name},
    }


def change_resource(row: WorkItemChangeRow) -> dict[str, Any]:
    """One entry of a work item's change history."""
    return {
        "actorId": row.actor_id,
        "source": row.source,
        "changes": row.changes,
        "versionBefore": timestamp(row.version_before),
        "versionAfter": timestamp(row.version_after),
        "changedAt": timestamp(row.changed_at),
    }


def draft_resource(draft: DraftRow, eligible: bool, ineligible_reason: str | None = None) -> dict[str, Any]:
    """A draft: a proposed value for one field, with its evidence, and why it cannot be applied (if so)."""
    return {
        "id": draft.id,
        "action": draft.action,
        "field": draft.field,
        "proposedValue": draft.proposed_value,
        "confidence": draft.confidence,
        "evidenceRefs": [with_route(r) for r in draft.evidence_refs],
        "statements": [
            {**statement, "evidenceRefs": [with_route(r) for r in statement.get("evidenceRefs", [])]}
            for statement in draft.statements
        ],
        "applyEligible": eligible,
        "ineligibleReason": ineligible_reason,
        "appliedAt": timestamp(draft.applied_at),
        "rejection": (
            {
                "reason": draft.rejection_reason,
                "rejectedBy": draft.rejected_by,
                "rejectedAt": timestamp(draft.rejected_at),
            }
            if draft.rejected_at is not None
            else None
        ),
        "createdAt": timestamp(draft.created_at),
    }


def artifact_resource(artifact: ArtifactRow) -> dict[str, Any]:
    """An artifact: review material with its evidence."""
    return {
        "id": artifact.id,
        "action": artifact.action,
        "type": artifact.type,
        "title": artifact.title,
        "summary": artifact.summary,
        "body": artifact.body,
        "evidenceRefs": [with_route(r) for r in artifact.evidence_refs],
        "createdAt": timestamp(artifact.created_at),
    }


def run_document(view: RunView) -> bytes:
    """`{"data": run}` encoded as JSON, once per view (a view is reused while its run is unchanged)."""
    document: bytes | None = view.renderings.get("rest")
    if document is None:
        document = view.renderings["rest"] = encode_json({"data": run_resource(view)})
    return document


def run_resource(view: RunView) -> dict[str, Any]:
    """An enhancement run with its target, drafts, artifacts and what this caller may do next."""
    run = view.run
    return {
        "id": run.id,
        "state": run.state,
        "target": {
            "id": run.target_id,
            "key": run.target_key,
            "title": run.target_title,
            "version": format_version(run.target_version),
        },
        "requestedActions": [a.action for a in view.actions],
        # Each requested action with its own outcome: a failed review-time action leaves the run reviewable.
        "actions": [
            {
                "action": a.action,
                "state": a.state,
                "errorCode": a.error_code,
                "requestedAt": timestamp(a.created_at),
                "completedAt": timestamp(a.completed_at),
            }
            for a in view.actions
        ],
        "instructions": run.instructions,
        "drafts": [draft_resource(d, view.eligible[d.id], view.ineligible_reasons.get(d.id)) for d in view.drafts],
        "artifacts": [artifact_resource(a) for a in view.artifacts],
        "allowedActions": [
            {"id": a.id, "label": a.label, "requiredScope": a.required_scope} for a in view.allowed_actions()
        ],
        "appliedDraftIds": [d.id for d in view.drafts if d.applied_at is not None],
        "requestedBy": run.requested_by,
        "generator": run.generator,
        "error": {"code": run.error_code, "message": run.error_message} if run.error_code else None,
        "createdAt": timestamp(run.created_at),
        "updatedAt": timestamp(run.updated_at),
        "completedAt": timestamp(run.completed_at),
        "reviewExpiresAt": timestamp(run.review_expires_at),
    }
