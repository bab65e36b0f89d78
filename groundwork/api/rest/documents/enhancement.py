"""REST answers of work item enhancement: runs, drafts, artifacts and operations."""

from __future__ import annotations

from typing import Any

import msgspec
from msgspec import UNSET, UnsetType

from groundwork.api.resources.enhancement_review import ApplyResource
from groundwork.api.rest.documents.common import Page, Resource, Timestamp


class RunTarget(Resource, kw_only=True):
    """The work item a run enhances, as it was when the run started."""

    id: str
    key: str | None
    title: str | None
    version: Timestamp | None


class RunAction(Resource, kw_only=True):
    """One requested action and its own outcome."""

    action: str
    state: str
    error_code: str | None
    requested_at: Timestamp | None
    completed_at: Timestamp | None


class AllowedAction(Resource, kw_only=True):
    """What this caller may do next, and the scope it needs."""

    id: str
    label: str
    required_scope: str


class RunError(Resource, kw_only=True):
    """Why a run or an operation failed."""

    code: str
    message: str | None


class DraftRejection(Resource, kw_only=True):
    """Why a draft was rejected, by whom and when: it is never applied afterwards."""

    reason: str | None
    rejected_by: str | None
    rejected_at: Timestamp | None


class Draft(Resource, kw_only=True):
    """A proposed value for one field of the work item, with its evidence."""

    id: str
    action: str
    field: str
    proposed_value: Any
    confidence: float | None
    evidence_refs: list[dict[str, Any]]
    statements: list[dict[str, Any]]
    apply_eligible: bool
    ineligible_reason: str | None
    applied_at: Timestamp | None
    created_at: Timestamp | None
    rejection: DraftRejection | None


class Artifact(Resource, kw_only=True):
    """Review material produced by an action, with its evidence."""

    id: str
    action: str
    type: str
    title: str | None
    summary: str | None
    body: Any
    evidence_refs: list[dict[str, Any]]
    created_at: Timestamp | None


class Run(Resource, kw_only=True):
    """An enhancement run with its target, drafts, artifacts and what this caller may do next."""

    id: str
    state: str
    target: RunTarget
    requested_actions: list[str]
    actions: list[RunAction]
    instructions: str | None
    drafts: list[Draft]
    artifacts: list[Artifact]
    allowed_actions: list[AllowedAction]
    applied_draft_ids: list[str]
    requested_by: str | None
    generator: str | None
    error: RunError | None
    created_at: Timestamp | None
    updated_at: Timestamp | None
    completed_at: Timestamp | None
    review_expires_at: Timestamp | None


class TemporalWorkflow(Resource, kw_only=True):
    """The Temporal workflow behind an operation."""

    workflow_id: str | None
    run_id: str | None


class Operation(Resource, kw_only=True):
    """A long-running operation: an enhancement run (its run id) or a notification command (`op_...`)."""

    id: str
    kind: str
    status: str
    started_at: Timestamp | None
    updated_at: Timestamp | None
    completed_at: Timestamp | None
    error: RunError | None
    run_state: str | UnsetType = UNSET
    pending_actions: list[str] | UnsetType = UNSET
    temporal: TemporalWorkflow | UnsetType = UNSET
    command: str | UnsetType = UNSET
    via: str | UnsetType = UNSET
    app_id: str | UnsetType | None = UNSET
    notification_ids: list[str] | UnsetType = UNSET
    audit_references: list[str] | UnsetType = UNSET
    items: Any | UnsetType = UNSET


class RunDocument(msgspec.Struct):
    """One enhancement run."""

    data: Run


class RunList(msgspec.Struct):
    """A page of enhancement runs, newest first."""

    data: list[Run]
    page: Page


class DraftList(msgspec.Struct):
    """A page of a run's drafts."""

    data: list[Draft]
    page: Page


class ArtifactList(msgspec.Struct):
    """A page of a run's artifacts."""

    data: list[Artifact]
    page: Page


class OperationDocument(msgspec.Struct):
    """The status of one operation."""

    data: Operation


class RunApplyList(msgspec.Struct):
    """A page of a run's applies, oldest first."""

    data: list[ApplyResource]
    page: Page
