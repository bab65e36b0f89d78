"""Notification change proposals (GraphQL `draftNotificationChange`, MCP `draft_...`) and their apply.

A draft is persisted with its validation results, its conflicts with the notification as it is now,
and the exact command that would carry it out; it changes nothing. Its requested outcome is a status
(`read`, `acknowledged`, `dismissed`) or `snoozed` (until a time or for a duration, counted from the
apply) or `unsnoozed`. Applying one needs explicit
confirmation, the expected version and an idempotency key (the transport holds the key), and runs
the one `change_notification` command. A proposal is the drafter's own, works once, and expires
after 24 hours.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from groundwork.domain.enhancement.model import ConfirmationRequired
from groundwork.domain.errors import FieldError, GroundworkError, NotFound, ValidationFailed
from groundwork.domain.notifications.inbox import COMMANDS, OUTCOME_COMMANDS, SINK_COMMANDS, validate_command_input
from groundwork.domain.notifications.snooze import SNOOZE, SNOOZE_COMMANDS, UNSNOOZE, snooze_end, snooze_refusal
from groundwork.domain.tenancy.connected_apps import (
    AppDirectionForbidden,
    AppFieldNotAuthorized,
    check_field_authority,
)
from groundwork.domain.tenancy.principals import Principal
from groundwork.domain.times import format_timestamp
from groundwork.persistence import db
from groundwork.persistence.repositories.notifications import inbox as repo
from groundwork.persistence.repositories.notifications import proposals as proposal_repo
from groundwork.persistence.repositories.notifications.proposals import ProposalRow
from groundwork.services.notifications.inbox import CommandResult, allowed_for, change_notification, sink_only
from groundwork.services.notifications.snoozing import snooze_notification, unsnooze_notification

PROPOSAL_TTL_SECONDS = 24 * 3600
MAX_EVIDENCE_REFS = 20
# Every outcome a draft may ask for, and the command that reaches it.
OUTCOMES: dict[str, str] = {**OUTCOME_COMMANDS, "snoozed": SNOOZE.id, "unsnoozed": UNSNOOZE.id}


class ProposalExpired(GroundworkError):
    status = 409
    code = "proposal_expired"
    title = "Proposal expired"


class ProposalAlreadyApplied(GroundworkError):
    status = 409
    code = "proposal_already_applied"
    title = "Proposal already applied"


def _evidence(value: Any) -> tuple[list[dict[str, str]], list[dict[str, str]]]:
    if value is None:
        return [], []
    ok = isinstance(value, list) and len(value) <= MAX_EVIDENCE_REFS
    refs = []
    for ref in value if isinstance(value, list) else []:
        if isinstance(ref, dict) and isinstance(ref.get("kind"), str) and isinstance(ref.get("id"), str):
            refs.append({"kind": ref["kind"][:100], "id": ref["id"][:200]})
        else:
            ok = False
    if ok:
        return refs, []
    return [], [
        {
            "code": "validation_failed",
            "path": "evidenceRefs",
            "message": f"at most {MAX_EVIDENCE_REFS} references, each {{kind, id}}",
        }
    ]


def _rest_body(proposal: ProposalRow) -> dict[str, Any]:
    command = proposal.command or ""
    body: dict[str, Any] = {"expected_version": proposal.expected_version}
    if command == SNOOZE.id:
        if proposal.snooze_for is not None:
            body["for"] = proposal.snooze_for
        elif proposal.snooze_until is not None:
            body["until"] = format_timestamp(proposal.snooze_until)
    if proposal.reason:
        body["reason"] = proposal.reason
    if command == SNOOZE.id or (command in COMMANDS and COMMANDS[command].requires_confirmation):
        body["confirm"] = True
    return body


def exact_command(proposal: ProposalRow) -> dict[str, Any] | None:
    """The exact command that would carry the proposal out, in each transport's words."""
    command = proposal.command
    if command is None:
        return None
    version = proposal.expected_version
    return {
        "rest": {
            "method": "POST",
            "path": f"/api/v1/notifications/{proposal.notification_id}/{command}",
            "headers": {"Idempotency-Key": "<a new key>"},
            "body": _rest_body(proposal),
        },
        "graphql": (
            f'mutation {{ applyNotificationChange(input: {{proposalId: "{proposal.id}", '
            f'expectedVersion: {version}, idempotencyKey: "<a new key>", confirm: true}}) '
            "{ ok notification { id status version snoozedUntil } operation { id } auditReference "
            "errors { code message } } }"
        ),
        "mcp": {
            "tool": "apply_notifications_messaging_change",
            "arguments": {
                "proposal_id": proposal.id,
                "expected_version": version,
                "idempotency_key": "<a new key>",
                "confirm": True,
            },
        },
    }


def _snooze_draft(
    command: str | None, until: Any, for_: Any, now: datetime
) -> tuple[datetime | None, str | None, list[dict[str, Any]]]:
    """A drafted snooze's end (`until`) or duration (`for`), and what is wrong with them."""
    if command != SNOOZE.id:
        if until is None and for_ is None:
            return None, None, []
        path = "snoozeUntil" if until is not None else "snoozeFor"
        return None, None, [{"code": "validation_failed", "path": path, "message": "is taken by `snoozed` only"}]
    try:
        end = snooze_end(until, for_, now)
    except ValidationFailed as failure:
        paths = {"until": "snoozeUntil", "for": "snoozeFor"}
        return (
            None,
            None,
            [{"code": failure.code, "path": paths.get(e.path, e.path), "message": e.message} for e in failure.errors],
        )
    return (None, for_.strip().upper(), []) if for_ is not None else (end, None, [])


async def draft_change(
    principal: Principal,
    notification_id: str,
    requested_outcome: Any,
    expected_version: Any,
    reason: Any = None,
    evidence_refs: Any = None,
    snooze_until: Any = None,
    snooze_for: Any = None,
) -> ProposalRow:
    """Persist a proposal to move one of the caller's notifications to `requested_outcome` (a snooze until
    `snooze_until` or for `snooze_for`); changes nothing."""
    notification = await repo.get_notification(principal.id, notification_id)
    if notification is None or notification.workspace_id != principal.workspace_id:
        raise NotFound("No such notification.")
    errors: list[dict[str, Any]] = []
    conflicts: list[dict[str, Any]] = []
    command = OUTCOMES.get(requested_outcome) if isinstance(requested_outcome, str) else None
    if command is None:
        errors.append(
            {
                "code": "validation_failed",
                "path": "requestedOutcome",
                "message": f"must be one of {', '.join(OUTCOMES)}",
            }
        )
    until, duration, problems = _snooze_draft(command, snooze_until, snooze_for, datetime.now(UTC))
    errors += problems
    version: int | None = None
    text: str | None = None
    try:
        version, text = validate_command_input(expected_version, reason)
    except ValidationFailed as failure:
        errors += [{"code": failure.code, "path": _camel(e.path), "message": e.message} for e in failure.errors]
        if isinstance(expected_version, int) and not isinstance(expected_version, bool):
            version = expected_version
        text = reason if isinstance(reason, str) else None
    refs, problems = _evidence(evidence_refs)
    errors += problems
    try:
        check_field_authority(principal, ["status"])
    except AppFieldNotAuthorized as refusal:
        errors.append({"code": refusal.code, "path": "requestedOutcome", "message": refusal.detail})
    if command is not None and sink_only(principal, "") and command not in SINK_COMMANDS:
        refused = AppDirectionForbidden(principal.app.id if principal.app else "", "deliver", "A sink never dismisses.")
        errors.append({"code": refused.code, "path": "requestedOutcome", "message": refused.detail})
    if version is not None and version != notification.version:
        conflicts.append(
            {
                "code": "version_conflict",
                "message": f"The notification is at version {notification.version}, not {version}.",
                "currentVersion": notification.version,
                "expectedVersion": version,
            }
        )
    snoozed = notification.snoozed_until is not None
    if command in SNOOZE_COMMANDS:
        conflict = snooze_refusal(command, notification.status, snoozed)
    elif command is not None and COMMANDS[command].from_status != notification.status:
        conflict = f"`{command}` is not allowed while the notification is {notification.status}."
    else:
        conflict = None
    if conflict is not None:
        conflicts.append(
            {
                "code": "invalid_transition",
                "message": conflict,
                "currentStatus": notification.status,
                "allowedActions": [c.id for c in allowed_for(principal, notification.status, snoozed)],
            }
        )
    app = principal.app
    return await proposal_repo.insert_proposal(
        {
            "workspace_id": principal.workspace_id,
            "principal_id": principal.id,
            "notification_id": notification_id,
            "requested_outcome": str(requested_outcome)[:50],
            "command": command,
            "from_status": notification.status,
            "to_status": COMMANDS[command].to_status if command in COMMANDS else notification.status,
            "expected_version": version,
            "reason": text[:500] if text else None,
            "evidence_refs": refs,
            "validation_errors": errors,
            "conflicts": conflicts,
            "app_id": app.id if app else None,
            "provenance": app.provenance if app else None,
            "ttl_seconds": PROPOSAL_TTL_SECONDS,
            "snooze_until": until,
            "snooze_for": duration,
        }
    )


async def _carry_out(principal: Principal, proposal: ProposalRow, expected_version: Any, via: str) -> CommandResult:
    """Run the proposal's command, confirmed (inside the apply's transaction)."""
    command = proposal.command or ""
    if command == SNOOZE.id:
        return await snooze_notification(
            principal,
            proposal.notification_id,
            expected_version=expected_version,
            until=format_timestamp(proposal.snooze_until) if proposal.snooze_until else None,
            for_=proposal.snooze_for,
            reason=proposal.reason,
            confirm=True,
            via=via,
        )
    if command == UNSNOOZE.id:
        return await unsnooze_notification(
            principal, proposal.notification_id, expected_version=expected_version, reason=proposal.reason, via=via
        )
    return await change_notification(
        principal,
        proposal.notification_id,
        command,
        expected_version=expected_version,
        reason=proposal.reason,
        confirm=True,
        via=via,
    )


def _camel(path: str) -> str:
    head, *rest = path.split("_")
    return head + "".join(part.title() for part in rest)


async def get_proposal(principal: Principal, proposal_id: str) -> ProposalRow:
    """One of the caller's proposals."""
    proposal = await proposal_repo.get_proposal(principal.id, proposal_id)
    if proposal is None:
        raise NotFound("No such proposal.")
    return proposal


async def apply_proposal(
    principal: Principal, proposal_id: str, expected_version: Any, confirm: Any, *, via: str
) -> tuple[CommandResult, ProposalRow]:
    """Carry out one of the caller's proposals after explicit confirmation, guarded by `expected_version`."""
    async with db.transaction():
        proposal = await proposal_repo.get_proposal(principal.id, proposal_id, for_update=True)
        if proposal is None:
            raise NotFound("No such proposal.")
        if proposal.applied_at is not None:
            raise ProposalAlreadyApplied(
                "This proposal was applied already (operation " + str(proposal.operation_id) + ")."
            )
        if proposal.expired:
            raise ProposalExpired("This proposal is more than 24 hours old; draft the change again.")
        if proposal.validation_errors or proposal.command is None:
            raise ValidationFailed(
                "The proposal is not valid; draft the change again.",
                [FieldError(e["path"], e["message"]) for e in proposal.validation_errors],
            )
        if confirm is not True:
            raise ConfirmationRequired(
                "Applying changes the notification: show the user the proposal and its exact command, then apply "
                "again with `confirm: true`.",
                extra={"proposal_id": proposal_id, "exact_command": exact_command(proposal)},
            )
        result = await _carry_out(principal, proposal, expected_version, via)
        await proposal_repo.mark_proposal_applied(proposal_id, result.operation_id)
        proposal = await proposal_repo.get_proposal(principal.id, proposal_id)
        assert proposal is not None
    return result, proposal
