"""GraphQL enums for the closed sets of values, and the `DateTime` scalar.

Each enum is built from its domain tuple, so the schema cannot drift from what the services accept; its
values are the wire values the specs and REST use (`unread`, `ready_for_review`), so a value reads the same
on every transport. An input value arrives as a `StrEnum` member, which the services take as the string it is.
For the type checker each enum is the `str` it carries.
"""

from __future__ import annotations

from collections.abc import Sequence
from enum import EnumMeta, StrEnum
from typing import TYPE_CHECKING, Any, NewType, TypeAlias

import strawberry

from groundwork.domain.context_engine.briefing import ANSWERS
from groundwork.domain.context_engine.model import (
    AUTHORITIES,
    CONTENT_CLASSES,
    CONTRIBUTION_TYPES,
    COVERAGE_STATUSES,
    FRESHNESS_STATUSES,
    PACKAGE_STATUSES,
    PROVIDER_CLASSIFICATIONS,
    REFERENCE_KINDS,
)
from groundwork.domain.enhancement.model import ACTIONS, ARTIFACT_TYPES, DRAFT_FIELDS, RUN_STATES
from groundwork.domain.evidence_routes import EVIDENCE_KINDS
from groundwork.domain.evidence_search.corpus import PROVENANCE_QUALITIES, SUBJECT_TYPES
from groundwork.domain.evidence_search.corpus import SOURCE_KINDS as CORPUS_SOURCE_KINDS
from groundwork.domain.evidence_search.document_dates import DATE_SOURCES
from groundwork.domain.notifications.inbox import SOURCE_KINDS, VIA
from groundwork.domain.notifications.inbox import STATUSES as NOTIFICATION_STATUSES
from groundwork.domain.tenancy.administration import ROLES
from groundwork.domain.tenancy.principals import PRINCIPAL_KINDS
from groundwork.domain.times import TIMESTAMP_ACCEPTED, format_timestamp
from groundwork.domain.work_items import STATUSES as WORK_ITEM_STATUSES
from groundwork.domain.work_items import parse_version
from groundwork.services.notifications.proposals import OUTCOMES

# The two kinds of operation `GET /api/v1/operations/{id}` answers, and the statuses they report.
OPERATION_KINDS = ("work_item_enhancement", "notification_command")
OPERATION_STATUSES = ("queued", "running", "succeeded", "failed", "cancelled")


def closed_set(name: str, description: str, values: Sequence[str], meanings: dict[str, str]) -> Any:
    """A GraphQL enum of `values`, each described by `meanings` (which must describe exactly those values)."""
    if set(values) != set(meanings):
        raise ValueError(f"{name}: described {sorted(meanings)}, the domain has {sorted(values)}")
    members: EnumMeta = StrEnum(name, [(v, v) for v in values])  # type: ignore[misc]
    enum: Any = strawberry.enum(members, description=description)
    for value in enum.__strawberry_definition__.values:
        value.description = meanings[value.value]
    return enum


def _parse_datetime(value: object) -> str:
    if not isinstance(value, str):
        raise ValueError(f"must be {TIMESTAMP_ACCEPTED}")
    parse_version(value)  # the one reading of a time every transport shares; its words say what is accepted
    return value  # the services read the text themselves, as they do REST's


def _serialize_datetime(value: object) -> str:
    # The resources already render timestamps as REST shows them (RFC 3339, UTC, `Z`).
    return value if isinstance(value, str) else format_timestamp(value)  # type: ignore[arg-type]


DateTimeText = strawberry.scalar(
    NewType("DateTimeText", str),
    name="DateTime",
    description="An instant as RFC 3339 text in UTC, such as `2026-11-28T09:30:00Z` (the same text REST shows).",
    serialize=_serialize_datetime,
    parse_value=_parse_datetime,
)

if TYPE_CHECKING:
    DateTime: TypeAlias = str
    WorkItemStatus: TypeAlias = str
    PrincipalKind: TypeAlias = str
    ProjectRoleName: TypeAlias = str
    WorkItemEnhancementRunState: TypeAlias = str
    WorkItemEnhancementAction: TypeAlias = str
    WorkItemEnhancementDraftField: TypeAlias = str
    WorkItemEnhancementArtifactType: TypeAlias = str
    NotificationStatus: TypeAlias = str
    NotificationSourceKind: TypeAlias = str
    NotificationOutcome: TypeAlias = str
    Via: TypeAlias = str
    OperationKind: TypeAlias = str
    OperationStatus: TypeAlias = str
    ContextSubjectType: TypeAlias = str
    ContextPackageStatus: TypeAlias = str
    ContributionType: TypeAlias = str
    FreshnessStatus: TypeAlias = str
    CoverageStatus: TypeAlias = str
    ProviderClassification: TypeAlias = str
    ProviderAuthority: TypeAlias = str
    ContentClass: TypeAlias = str
    ReferenceKind: TypeAlias = str
    EvidenceKind: TypeAlias = str
    BriefingAnswer: TypeAlias = str
    ProvenanceQuality: TypeAlias = str
    DocumentDateSource: TypeAlias = str
    CorpusSourceKind: TypeAlias = str
else:
    DateTime = DateTimeText
    WorkItemStatus = closed_set(
        "WorkItemStatus",
        "Where a work item stands on its board.",
        WORK_ITEM_STATUSES,
        {
            "backlog": "Not planned yet.",
            "todo": "Planned, not started.",
            "in_progress": "Being worked on.",
            "in_review": "Done and waiting for review.",
            "done": "Finished.",
        },
    )
    PrincipalKind = closed_set(
        "PrincipalKind",
        "What kind of principal an API key belongs to.",
        PRINCIPAL_KINDS,
        {
            "user": "A person.",
            "service": "A service acting on its own behalf.",
            "agent": "An AI agent or assistant.",
            "provider": "A context provider that contributes packages and corpus sources.",
        },
    )
    ProjectRoleName = closed_set(
        "ProjectRoleName",
        "A principal's role on a project.",
        ROLES,
        {
            "lead": "Leads the project.",
            "contributor": "Works on the project.",
            "viewer": "Reads the project.",
            "guest": "Reads the project as an outsider.",
        },
    )
    WorkItemEnhancementRunState = closed_set(
        "WorkItemEnhancementRunState",
        "The state of an enhancement run.",
        RUN_STATES,
        {
            "queued": "Accepted, not started yet.",
            "running": "Its actions are producing drafts and artifacts.",
            "ready_for_review": "Drafts and artifacts are ready; nothing has been applied.",
            "applied": "Selected drafts were applied to the work item.",
            "failed": "The run failed; its error says why.",
            "expired": "The review window passed before any draft was applied.",
            "cancelled": "A person cancelled it: its pending actions stopped and nothing can be applied.",
        },
    )
    WorkItemEnhancementAction = closed_set(
        "WorkItemEnhancementAction",
        "A named enhancement action: what a run produces a draft (and artifacts) for.",
        ACTIONS,
        {
            "requirements": "Draft the requirements.",
            "description": "Draft the description.",
            "design": "Draft the design notes.",
            "implementation_plan": "Draft the implementation plan.",
            "acceptance_criteria": "Draft the acceptance criteria.",
            "test_plan": "Draft the test plan.",
            "estimate": "Draft an estimate.",
            "risk_check": "Check for risks and draft them.",
        },
    )
    WorkItemEnhancementDraftField = closed_set(
        "WorkItemEnhancementDraftField",
        "The work item field a draft proposes a value for.",
        DRAFT_FIELDS,
        {
            "requirements": "The requirements.",
            "description": "The description.",
            "design_notes": "The design notes.",
            "implementation_plan": "The implementation plan.",
            "acceptance_criteria": "The acceptance criteria.",
            "test_plan": "The test plan.",
            "estimate": "The estimate (a number).",
            "risks": "The risks.",
        },
    )
    WorkItemEnhancementArtifactType = closed_set(
        "WorkItemEnhancementArtifactType",
        "What an enhancement artifact is.",
        ARTIFACT_TYPES,
        {
            "requirements_trace": "Which requirement each statement traces to.",
            "design_note": "A design note.",
            "plan_outline": "An outline of the implementation plan.",
            "test_matrix": "Tests against acceptance criteria.",
            "estimate_rationale": "Why the estimate is what it is.",
            "risk_report": "The risks found and their evidence.",
            "evidence_digest": "The evidence the run used.",
        },
    )
    NotificationStatus = closed_set(
        "NotificationStatus",
        "A notification's lifecycle state: unread, read, acknowledged, dismissed.",
        NOTIFICATION_STATUSES,
        {
            "unread": "Not read yet.",
            "read": "Read by its recipient.",
            "acknowledged": "Acknowledged by its recipient.",
            "dismissed": "Dismissed by its recipient.",
        },
    )
    NotificationSourceKind = closed_set(
        "NotificationSourceKind",
        "The service a notification comes from.",
        SOURCE_KINDS,
        {
            "work_item_enhancement": "Work item enhancement runs.",
            "webhooks": "Webhook endpoints and their deliveries.",
            "context_engine": "The context engine.",
            "messages": "Message threads.",
        },
    )
    NotificationOutcome = closed_set(
        "NotificationOutcome",
        "The outcome a proposal asks for.",
        tuple(OUTCOMES),
        {
            "read": "Mark the notification read.",
            "acknowledged": "Acknowledge the notification.",
            "dismissed": "Dismiss the notification.",
            "snoozed": "Hide it until a time (`snoozeUntil`) or for a while (`snoozeFor`).",
            "unsnoozed": "Bring a snoozed notification back now.",
        },
    )
    Via = closed_set(
        "Via",
        "The door a command came through.",
        VIA,
        {
            "rest": "The REST API.",
            "graphql": "The GraphQL API.",
            "mcp": "The MCP server.",
            "email": "A signed action link in an e-mail.",
            "chat": "A signed action link in a chat message.",
            "demo": "The demo data loader.",
            "timer": "A snooze that ended.",
        },
    )
    OperationKind = closed_set(
        "OperationKind",
        "What an operation runs.",
        OPERATION_KINDS,
        {
            "work_item_enhancement": "An enhancement run (the operation's id is the run's).",
            "notification_command": "A notification command (ids `op_`).",
        },
    )
    OperationStatus = closed_set(
        "OperationStatus",
        "Where an operation stands.",
        OPERATION_STATUSES,
        {
            "queued": "Accepted, not started yet.",
            "running": "Under way.",
            "succeeded": "Finished successfully.",
            "failed": "Finished with an error.",
            "cancelled": "Cancelled before it finished.",
        },
    )
    ContextSubjectType = closed_set(
        "ContextSubjectType",
        "What a subject reference points at.",
        SUBJECT_TYPES,
        {
            "project": "A project.",
            "engagement": "A commercial engagement (its child projects the caller may read).",
            "portfolio": "A portfolio (its engagements' projects the caller may read).",
        },
    )
    ContextPackageStatus = closed_set(
        "ContextPackageStatus",
        "A context package's status.",
        PACKAGE_STATUSES,
        {
            "ready": "Current and fresh enough to use.",
            "stale": "Current but older than the freshness window.",
            "superseded": "Replaced by a later package (`supersededBy`).",
        },
    )
    ContributionType = closed_set(
        "ContributionType",
        "What a contribution (and the package it forms) states.",
        CONTRIBUTION_TYPES,
        {
            "finding": "A finding.",
            "risk": "A risk.",
            "blocker": "A blocker.",
            "decision": "A decision.",
            "dependency": "A dependency.",
            "milestone": "A milestone.",
        },
    )
    FreshnessStatus = closed_set(
        "FreshnessStatus",
        "How recent the evidence is.",
        FRESHNESS_STATUSES,
        {"fresh": "Recent.", "aging": "Getting old.", "stale": "Older than the freshness window."},
    )
    CoverageStatus = closed_set(
        "CoverageStatus",
        "How far a provider's contributions cover the subject's projects.",
        COVERAGE_STATUSES,
        {"covered": "Every project.", "partial": "Some projects.", "none": "No project."},
    )
    ProviderClassification = closed_set(
        "ProviderClassification",
        "What a context provider contributes; financial and staffing need their own scopes.",
        PROVIDER_CLASSIFICATIONS,
        {
            "delivery": "Delivery context.",
            "corpus": "Documents of the corpus.",
            "work_items": "Work items and their history.",
            "financial": "Financial context (scope `context-engine:financial`).",
            "staffing": "Staffing context (scope `context-engine:staffing`).",
        },
    )
    ProviderAuthority = closed_set(
        "ProviderAuthority",
        "How far a provider's word is authoritative.",
        AUTHORITIES,
        {"advisory": "Advice to weigh.", "canonical": "The system of record."},
    )
    ContentClass = closed_set(
        "ContentClass",
        "The class of content: financial and staffing stay separately scoped.",
        CONTENT_CLASSES,
        {
            "general": "Readable with `context-engine:read`.",
            "financial": "Needs `context-engine:financial` as well.",
            "staffing": "Needs `context-engine:staffing` as well.",
        },
    )
    ReferenceKind = closed_set(
        "ReferenceKind",
        "What an evidence reference points at.",
        REFERENCE_KINDS,
        {
            "passage": "A corpus passage.",
            "work_item": "A work item.",
            "work_item_history": "A change in a work item's history.",
            "external": "Something outside Groundwork.",
        },
    )
    EvidenceKind = closed_set(
        "EvidenceKind",
        "What a draft's or artifact's evidence reference points at.",
        EVIDENCE_KINDS,
        {
            "passage": "A corpus passage: `GET /api/v1/context/passages/{id}` opens it.",
            "work_item": "A work item: `GET /api/v1/work-items/{id}`.",
            "work_item_history": "A change in a work item's history (`<work item id>@<version after>`).",
            "context_package": "A governed context package: `GET /api/v1/context-engine/{id}`.",
            "package": "A governed context package (the name briefings use).",
            "external": "Something outside Groundwork: no route opens it.",
            "code_context": "Code context from outside Groundwork: no route opens it.",
        },
    )
    BriefingAnswer = closed_set(
        "BriefingAnswer",
        "How fully a briefing answers its question.",
        ANSWERS,
        {
            "answered": "Evidence covers every content word of the question.",
            "partial": "Some content word of the question is not covered.",
            "no_evidence": "Nothing readable answers the question.",
        },
    )
    ProvenanceQuality = closed_set(
        "ProvenanceQuality",
        "How faithfully a passage's text reproduces its source.",
        PROVENANCE_QUALITIES,
        {
            "exact_text": "The source's own text.",
            "extracted": "Text extracted from a formatted document (PDF, HTML).",
            "ocr": "Text recognised from an image.",
        },
    )
    DocumentDateSource = closed_set(
        "DocumentDateSource",
        "Where a source's document date was read.",
        DATE_SOURCES,
        {
            "date_line": "A date line in the text.",
            "html_meta": "An HTML meta element.",
            "html_time": "An HTML time element.",
            "pdf_metadata": "The PDF's metadata.",
            "title": "The title.",
            "file_name": "The file name.",
            "ingestion": "No stated date: when the source was ingested.",
        },
    )
    CorpusSourceKind = closed_set(
        "CorpusSourceKind",
        "The format a corpus source was ingested from.",
        CORPUS_SOURCE_KINDS,
        {"text": "Plain text.", "markdown": "Markdown.", "html": "An HTML page.", "pdf": "A PDF document."},
    )
