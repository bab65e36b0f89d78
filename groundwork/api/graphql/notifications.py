"""GraphQL for notifications (contract v0.2, preview): the caller's inbox, drafts and confirmed applies.

`notification(id)` is null for anything that is not the caller's; `draftNotificationChange`
persists a proposal and changes nothing; `applyNotificationChange` runs the proposal through the one
lifecycle command, once per idempotency key, only with `confirm: true`.
"""

from __future__ import annotations

from typing import Any

import strawberry
from strawberry.scalars import JSON
from strawberry.types import Info

from groundwork.api.graphql.connections import Edge, PageInfo, connection_fields
from groundwork.api.graphql.context import GraphQLContext, as_graphql_error, authorize, require
from groundwork.api.graphql.enums import (
    DateTime,
    NotificationOutcome,
    NotificationSourceKind,
    NotificationStatus,
    Via,
)
from groundwork.api.graphql.mutation_errors import MutationError, mutation_errors, refused
from groundwork.api.graphql.operations import Operation
from groundwork.api.resources.notifications import history_entry, notification_resource, proposal_resource
from groundwork.domain.errors import GroundworkError
from groundwork.domain.notifications.inbox import SCOPE_OPERATE, SCOPE_READ, SCOPE_WRITE
from groundwork.domain.tenancy.principals import Principal
from groundwork.persistence.repositories.notifications.inbox import NotificationAuditRow, NotificationRow
from groundwork.persistence.repositories.notifications.proposals import ProposalRow
from groundwork.platform.idempotency.calls import call_once
from groundwork.services.notifications import inbox as service
from groundwork.services.notifications import proposals
from groundwork.services.notifications.summary import summary
from groundwork.services.operations import status as operations

PREVIEW = "Contract v0.2 (preview). "


@strawberry.type
class NotificationAction:
    id: str
    label: str
    requires_confirmation: bool


@strawberry.type
class NotificationSource:
    kind: NotificationSourceKind
    external_id: str


@strawberry.type
class NotificationResourceRef:
    type: str
    id: strawberry.ID


@strawberry.type
class NotificationHistoryEntry:
    audit_reference: str
    command: str
    actor_id: str
    via: Via
    app_id: str | None
    provenance: str | None
    from_status: NotificationStatus
    to_status: NotificationStatus
    version: int
    snoozed_until: DateTime | None
    reason: str | None
    operation_id: str
    occurred_at: DateTime


@strawberry.type(description=PREVIEW + "A notification of the caller; `allowedActions` lists what it may do next.")
class Notification:
    id: strawberry.ID
    status: NotificationStatus
    version: int
    updated_at: DateTime
    allowed_actions: list[NotificationAction]
    source: NotificationSource
    title: str
    body: str
    resource: NotificationResourceRef
    event_type: str
    created_at: DateTime
    snoozed_until: DateTime | None = strawberry.field(
        default=None, description="While snoozed: when it comes back (it is left out of lists until then)."
    )
    history: list[NotificationHistoryEntry] | None = None

    @classmethod
    def of(
        cls, row: NotificationRow, principal: Principal, history: list[NotificationAuditRow] | None = None
    ) -> Notification:
        data = notification_resource(row, principal)
        return cls(
            id=strawberry.ID(data["id"]),
            status=data["status"],
            version=data["version"],
            updated_at=data["updatedAt"],
            allowed_actions=[
                NotificationAction(id=a["id"], label=a["label"], requires_confirmation=a["requiresConfirmation"])
                for a in data["allowedActions"]
            ],
            source=NotificationSource(kind=data["source"]["kind"], external_id=data["source"]["externalId"]),
            title=data["title"],
            body=data["body"],
            resource=NotificationResourceRef(type=data["resource"]["type"], id=strawberry.ID(data["resource"]["id"])),
            event_type=data["eventType"],
            created_at=data["createdAt"],
            snoozed_until=data["snoozedUntil"],
            history=None
            if history is None
            else [
                NotificationHistoryEntry(
                    audit_reference=h["auditReference"],
                    command=h["command"],
                    actor_id=h["actorId"],
                    via=h["via"],
                    app_id=h["appId"],
                    provenance=h["provenance"],
                    from_status=h["from"],
                    to_status=h["to"],
                    version=h["version"],
                    snoozed_until=h["snoozedUntil"],
                    reason=h["reason"],
                    operation_id=h["operationId"],
                    occurred_at=h["occurredAt"],
                )
                for h in (history_entry(e) for e in history)
            ],
        )


@strawberry.input
class NotificationFilter:
    status: NotificationStatus | None = None
    source_kind: NotificationSourceKind | None = None
    since: DateTime | None = None
    snoozed: bool | None = strawberry.field(
        default=None, description="true: only snoozed notifications (left out otherwise)"
    )


@strawberry.input
class PaginationInput:
    first: int | None = None
    after: str | None = None


@strawberry.type(description=PREVIEW + "A page of the caller's notifications, newest first.")
class NotificationConnection:
    unread_count: int
    edges: list[Edge[Notification]]
    nodes: list[Notification]
    page_info: PageInfo
    _principal: strawberry.Private[Principal]
    _filter: strawberry.Private[NotificationFilter]

    @strawberry.field(description="How many of the caller's notifications match the filter (counted on request).")
    async def total_count(self) -> int:
        return await service.count_notifications(
            self._principal,
            status=self._filter.status,
            source_kind=self._filter.source_kind,
            since=self._filter.since,
            snoozed=self._filter.snoozed,
        )


@strawberry.type
class NotificationValidationError:
    code: str
    message: str
    path: str | None


@strawberry.type(
    description=PREVIEW + "A persisted proposal: it changes nothing until applied with confirmation. When no "
    "proposal could be drafted (`ok: false`: no usable key or scope, an unknown notification), `errors` says why "
    "and the proposal's own fields are null."
)
class NotificationChangeProposal:
    ok: bool = True
    errors: list[MutationError] = strawberry.field(default_factory=list)
    id: strawberry.ID | None = None
    notification_id: strawberry.ID | None = None
    requested_outcome: NotificationOutcome | None = None
    command: str | None = None
    from_status: NotificationStatus | None = None
    to_status: NotificationStatus | None = None
    expected_version: int | None = None
    snooze_until: DateTime | None = None
    snooze_for: str | None = None
    reason: str | None = None
    evidence_refs: JSON | None = None
    valid: bool | None = None
    validation_errors: list[NotificationValidationError] | None = None
    conflicts: JSON | None = None
    exact_command: JSON | None = None
    expires_at: DateTime | None = None
    applied_at: DateTime | None = None
    operation_id: str | None = None

    @classmethod
    def of(cls, proposal: ProposalRow) -> NotificationChangeProposal:
        data = proposal_resource(proposal)
        return cls(
            id=strawberry.ID(data["id"]),
            notification_id=strawberry.ID(data["notificationId"]),
            requested_outcome=data["requestedOutcome"],
            command=data["command"],
            from_status=data["fromStatus"],
            to_status=data["toStatus"],
            expected_version=data["expectedVersion"],
            snooze_until=data["snoozeUntil"],
            snooze_for=data["snoozeFor"],
            reason=data["reason"],
            evidence_refs=data["evidenceRefs"],
            valid=data["valid"],
            validation_errors=[
                NotificationValidationError(code=e["code"], message=e["message"], path=e.get("path"))
                for e in data["validationErrors"]
            ],
            conflicts=data["conflicts"],
            exact_command=data["exactCommand"],
            expires_at=data["expiresAt"],
            applied_at=data["appliedAt"],
            operation_id=data["operationId"],
        )


@strawberry.type
class NotificationPayload:
    ok: bool
    idempotency_replayed: bool
    notification: Notification | None
    operation: Operation | None
    audit_reference: str | None
    errors: list[MutationError]


@strawberry.input
class NotificationEvidenceRefInput:
    kind: str
    id: str


@strawberry.input
class DraftNotificationChangeInput:
    notification_id: strawberry.ID
    requested_outcome: NotificationOutcome = strawberry.field(
        description="read, acknowledged, dismissed, snoozed or unsnoozed"
    )
    expected_version: int | None = None
    reason: str | None = None
    evidence_refs: list[NotificationEvidenceRefInput] | None = None
    snooze_until: DateTime | None = strawberry.field(default=None, description="snoozed: until this time")
    snooze_for: str | None = strawberry.field(
        default=None, description="snoozed: for this ISO 8601 duration (PT30M, P1D), counted from the apply"
    )


@strawberry.input
class ApplyNotificationChangeInput:
    proposal_id: strawberry.ID
    expected_version: int
    idempotency_key: str | None = None
    confirm: bool | None = None


@strawberry.type
class NotificationSummaryItem:
    kind: str
    resource_type: str
    resource_id: strawberry.ID
    occurred_at: DateTime
    title: str


@strawberry.type(description=PREVIEW + "What changed since a time in what the caller requested, watches or is in.")
class NotificationSummary:
    since: DateTime
    as_of: DateTime
    counts: JSON
    items: list[NotificationSummaryItem]
    truncated: bool


# ---------------------------------------------------------------------------------------------- resolvers


async def notification(info: Info[GraphQLContext, Any], id: strawberry.ID) -> Notification | None:
    """One of the caller's notifications with its history, or null."""
    principal = require(info, SCOPE_READ)
    try:
        row, history = await service.get_notification(principal, str(id))
    except GroundworkError as error:
        if error.code == "not_found":
            return None
        raise as_graphql_error(error) from None
    return Notification.of(row, principal, history)


async def notification_list(
    info: Info[GraphQLContext, Any],
    filter: NotificationFilter | None = None,
    pagination: PaginationInput | None = None,
) -> NotificationConnection:
    """The caller's notifications, newest first, with the unread count."""
    principal = require(info, SCOPE_READ)
    chosen = filter or NotificationFilter()
    page = pagination or PaginationInput()
    try:
        rows, info_page, unread = await service.list_notifications(
            principal,
            status=chosen.status,
            source_kind=chosen.source_kind,
            since=chosen.since,
            limit=page.first,
            cursor=page.after,
            snoozed=chosen.snoozed,
        )
    except GroundworkError as error:
        raise as_graphql_error(error) from None
    return NotificationConnection(
        unread_count=unread,
        **connection_fields([Notification.of(r, principal) for r in rows], info_page),
        _principal=principal,
        _filter=chosen,
    )


async def notification_summary(info: Info[GraphQLContext, Any], since: DateTime | None = None) -> NotificationSummary:
    """What changed since `since` (default: 24 hours ago) in what the caller may see."""
    try:
        data = await summary(require(info, SCOPE_READ), since)
    except GroundworkError as error:
        raise as_graphql_error(error) from None
    return NotificationSummary(
        since=data["since"],
        as_of=data["asOf"],
        counts=data["counts"],
        items=[
            NotificationSummaryItem(
                kind=i["kind"],
                resource_type=i["resourceType"],
                resource_id=strawberry.ID(i["resourceId"]),
                occurred_at=i["occurredAt"],
                title=i["title"],
            )
            for i in data["items"]
        ],
        truncated=data["truncated"],
    )


async def operation(info: Info[GraphQLContext, Any], id: strawberry.ID) -> Operation | None:
    """An operation: a notification command's (`op_`) or an enhancement run's (its run id); null if not visible."""
    # The scope follows the id (as REST's operation route): any usable key gets this far.
    principal = require(info, None)
    try:
        return Operation.of(await operations.operation_status(principal, str(id)))
    except GroundworkError as error:
        if error.code == "not_found":
            return None
        raise as_graphql_error(error) from None


async def draft_notification_change(
    info: Info[GraphQLContext, Any], input: DraftNotificationChangeInput
) -> NotificationChangeProposal:
    """Persist a proposal with validation results, conflicts and the exact command; changes nothing."""
    try:
        proposal = await proposals.draft_change(
            authorize(info, SCOPE_WRITE),
            str(input.notification_id),
            input.requested_outcome,
            input.expected_version,
            input.reason,
            [{"kind": r.kind, "id": r.id} for r in input.evidence_refs] if input.evidence_refs is not None else None,
            input.snooze_until,
            input.snooze_for,
        )
    except GroundworkError as error:
        return NotificationChangeProposal(ok=False, errors=refused(error))
    return NotificationChangeProposal.of(proposal)


def _not_applied(errors: list[MutationError], replayed: bool = False) -> NotificationPayload:
    return NotificationPayload(
        ok=False,
        idempotency_replayed=replayed,
        notification=None,
        operation=None,
        audit_reference=None,
        errors=errors,
    )


async def apply_notification_change(
    info: Info[GraphQLContext, Any], input: ApplyNotificationChangeInput
) -> NotificationPayload:
    """Apply a proposal after explicit confirmation, guarded by the version, once per idempotency key."""
    request = info.context.request
    key = input.idempotency_key or (request.headers.get("idempotency-key") if request is not None else None)
    call = {"proposal_id": str(input.proposal_id), "expected_version": input.expected_version, "confirm": input.confirm}
    try:
        principal = authorize(info, SCOPE_OPERATE)

        async def apply() -> dict[str, Any]:
            result, _ = await proposals.apply_proposal(
                principal, str(input.proposal_id), input.expected_version, input.confirm, via="graphql"
            )
            return {**result.answer(), "audit_reference": result.audit_reference}

        outcome, replayed = await call_once(principal, key, "applyNotificationChange", call, apply)
    except GroundworkError as error:
        return _not_applied(refused(error))
    if "error" in outcome:
        return _not_applied(mutation_errors(outcome), replayed)
    row, history = await service.get_notification(principal, outcome["id"])
    return NotificationPayload(
        ok=True,
        idempotency_replayed=replayed,
        notification=Notification.of(row, principal, history),
        operation=Operation.of(await service.operation(principal, outcome["operation_id"])),
        audit_reference=outcome["audit_reference"],
        errors=[],
    )
