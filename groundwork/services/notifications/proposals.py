"""Notification change proposals (GraphQL `draftNotificationChange`, MCP `draft_...`) and their apply.

A draft is persisted with its validation results, its conflicts with the notification as it is now,
and the exact command that would carry it out; it changes nothing. Applying one needs explicit
confirmation, the expected version and an idempotency key (the transport holds the key), and runs
the one `change_notification` command. A proposal is the drafter's own, works once, and expires
after 24 hours.
"""

from __future__ import annotations

from typing import Any

from groundwork.domain.enhancement.model import ConfirmationRequired
from groundwork.domain.errors import FieldError, GroundworkError, NotFound, ValidationFailed
from groundwork.domain.notifications.inbox import COMMANDS, OUTCOME_COMMANDS, SINK_COMMANDS, validate_command_input
from groundwork.domain.tenancy.connected_apps import (
    AppDirectionForbidden,
    AppFieldNotAuthorized,
    check_field_authority,
)
from groundwork.domain.tenancy.principals import Principal
from groundwork.persistence import db
from groundwork.persistence.repositories.notifications import inbox as repo
from groundwork.persistence.repositories.notifications import proposals as proposal_repo
from groundwork.persistence.repositories.notifications.proposals import ProposalRow
from groundwork.services.notifications.inbox import CommandResult, allowed_for, change_notification, sink_only

PROPOSAL_TTL_SECONDS = 24 * 3600
MAX_EVIDENCE_REFS = 20


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


def exact_command(proposal: ProposalRow) -> dict[str, Any] | None:
    """The exact command that would carry the proposal out, in each transport's words."""
    command = proposal.command
    if command is None:
        return None
    body: dict[str, Any] = {"expected_version": proposal.expected_version}
    if proposal.reason:
        body["reason"] = proposal.reason
    if COMMANDS[command].requires_confirmation:
        body["confirm"] = True
    version = proposal.expected_version
    return {
        "rest": {
            "method": "POST",
            "path": f"/api/v1/notifications/{proposal.notification_id}/{command}",
            "headers": {"Idempotency-Key": "<a new key>"},
            "body": body,
        },
        "graphql": (
            f'mutation {{ applyNotificationChange(input: {{proposalId: "{proposal.id}", '
            f'expectedVersion: {version}, idempotencyKey: "<a new key>", confirm: true}}) '
            "{ ok notification { id status version } operation { id } auditReference errors { code message } } }"
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


async def draft_change(
    principal: Principal,
    notification_id: str,
    requested_outcome: Any,
    expected_version: Any,
    reason: Any = None,
    evidence_refs: Any = None,
) -> ProposalRow:
    """Persist a proposal to move one of the caller's notifications to `requested_outcome`; changes nothing."""
    notification = await repo.get_notification(principal.id, notification_id)
    if notification is None or notification.workspace_id != principal.workspace_id:
        raise NotFound("No such notification.")
    errors: list[dict[str, Any]] = []
    conflicts: list[dict[str, Any]] = []
    command = OUTCOME_COMMANDS.get(requested_outcome) if isinstance(requested_outcome, str) else None
    if command is None:
        errors.append(
            {
                "code": "validation_failed",
                "path": "requestedOutcome",
                "message": f"must be one of {', '.join(OUTCOME_COMMANDS)}",
            }
        )
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
    if command is not None and COMMANDS[command].from_status != notification.status:
        conflicts.append(
            {
                "code": "invalid_transition",
                "message": f"`{command}` is not allowed while the notification is {notification.status}.",
                "currentStatus": notification.status,
                "allowedActions": [c.id for c in allowed_for(principal, notification.status)],
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
            "to_status": COMMANDS[command].to_status if command else None,
            "expected_version": version,
            "reason": text[:500] if text else None,
            "evidence_refs": refs,
            "validation_errors": errors,
            "conflicts": conflicts,
            "app_id": app.id if app else None,
            "provenance": app.provenance if app else None,
            "ttl_seconds": PROPOSAL_TTL_SECONDS,
        }
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
        result = await change_notification(
            principal,
            proposal.notification_id,
            proposal.command,
            expected_version=expected_version,
            reason=proposal.reason,
            confirm=True,
            via=via,
        )
        await proposal_repo.mark_proposal_applied(proposal_id, result.operation_id)
        proposal = await proposal_repo.get_proposal(principal.id, proposal_id)
        assert proposal is not None
    return result, proposal
