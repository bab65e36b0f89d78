"""The governed commit path: provider registration, and contributions persisted, decided, applied, indexed.

It is the only writer of context packages. The internal API (`/internal/v1/context-engine/...`),
`groundwork contribute` and the built-in providers all receive through `receive_contribution` and run
`ContextContributionWorkflow` (or, with no worker polling, the same steps in one transaction here).
Each step writes its change and its outbox event in one transaction, and each is idempotent.
"""

from __future__ import annotations

import asyncio
import logging
import re
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import Any

from temporalio.client import Client, WorkflowFailureError
from temporalio.common import WorkflowIDConflictPolicy, WorkflowIDReusePolicy
from temporalio.exceptions import ApplicationError, WorkflowAlreadyStartedError
from temporalio.service import RPCError

from groundwork.domain.context_engine.contribution import (
    ContributionInput,
    EvidenceInput,
    contribution_class,
    contribution_id,
    fingerprint,
    parse_contribution,
    provider_rule_errors,
)
from groundwork.domain.context_engine.derivation import BUILTIN_PROVIDERS
from groundwork.domain.context_engine.merge import ContributionFacts, EntryFacts, decide
from groundwork.domain.context_engine.model import (
    AUTHORITIES,
    CAPABILITIES,
    EVENT_MERGE_DECIDED,
    EVENT_PERSISTED,
    EVENT_SUPERSEDED,
    EVOLUTION_RESOURCE,
    PROVIDER_CLASSIFICATIONS,
    normalise_term,
)
from groundwork.domain.errors import FieldError, NotFound, ServiceUnavailable, ValidationFailed
from groundwork.domain.ids import new_id
from groundwork.domain.tenancy.principals import Principal
from groundwork.domain.times import format_timestamp
from groundwork.domain.work_items import parse_version
from groundwork.persistence import db
from groundwork.persistence.repositories.context_engine import contributions as contribution_rows
from groundwork.persistence.repositories.context_engine import entries as entry_rows
from groundwork.persistence.repositories.context_engine import entry_index_log
from groundwork.persistence.repositories.context_engine import providers as provider_rows
from groundwork.persistence.repositories.context_engine.contributions import ContributionRow
from groundwork.persistence.repositories.context_engine.providers import ProviderRow
from groundwork.persistence.repositories.platform import outbox
from groundwork.persistence.repositories.tenancy import workspaces as tenancy
from groundwork.platform.search_replica.package_projection import catch_up_package_index
from groundwork.platform.temporal.client import TemporalConnection
from groundwork.search.generations import IndexBusy
from groundwork.search.package_index import package_index
from groundwork.services.tenancy.project_access import CONTEXT_WRITE, can_see_project, require_project_permission
from groundwork.workflows.context_engine import (
    ApplyOutcome,
    ContextContributionWorkflow,
    ContributionResult,
    ContributionWork,
    DecisionOutcome,
    search_attributes,
)

log = logging.getLogger(__name__)
_NAME = re.compile(r"^[a-z0-9][a-z0-9-]{0,62}$")


def _now() -> datetime:
    return datetime.now(UTC)


# -- providers ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ProviderRegistration:
    """A provider as its registration asks for it."""

    name: str
    classification: str
    capabilities: list[str]
    authority: str = "advisory"


def _registration_errors(registration: ProviderRegistration) -> list[FieldError]:
    errors = []
    if not _NAME.match(registration.name or ""):
        errors.append(FieldError("name", "must be 1 to 63 lowercase letters, digits and dashes, starting alphanumeric"))
    elif registration.name in BUILTIN_PROVIDERS:
        errors.append(FieldError("name", "is a built-in provider's name"))
    if registration.classification not in PROVIDER_CLASSIFICATIONS:
        errors.append(FieldError("classification", f"must be one of {', '.join(PROVIDER_CLASSIFICATIONS)}"))
    if not registration.capabilities or len(set(registration.capabilities)) != len(registration.capabilities):
        errors.append(FieldError("capabilities", "must list one or more distinct capabilities"))
    for index, capability in enumerate(registration.capabilities):
        if capability not in CAPABILITIES:
            errors.append(FieldError(f"capabilities[{index}]", f"must be one of {', '.join(CAPABILITIES)}"))
    if registration.authority not in AUTHORITIES:
        errors.append(FieldError("authority", f"must be one of {', '.join(AUTHORITIES)}"))
    return errors


async def register_provider(principal: Principal, registration: ProviderRegistration) -> tuple[ProviderRow, bool]:
    """Register a provider of the caller's workspace (by name: again updates capabilities and authority)."""
    if errors := _registration_errors(registration):
        raise ValidationFailed("The provider is not valid.", errors)
    async with db.transaction():
        existing = await provider_rows.get_provider_by_name(principal.workspace_id, registration.name)
        if existing is not None and existing.classification != registration.classification:
            raise ValidationFailed(
                "A provider's classification cannot change.",
                [FieldError("classification", f"the provider is registered as {existing.classification}")],
            )
        return await provider_rows.upsert_provider(
            workspace_id=principal.workspace_id,
            name=registration.name,
            classification=registration.classification,
            capabilities=list(registration.capabilities),
            authority=registration.authority,
            builtin=False,
            registered_by=principal.id or None,
        )


async def ensure_builtin_providers(workspace_id: str) -> dict[str, ProviderRow]:
    """Register the built-in providers of a workspace if they are not yet; returns them by name."""
    found = {}
    for name, (classification, capabilities, authority) in BUILTIN_PROVIDERS.items():
        row = await provider_rows.get_provider_by_name(workspace_id, name)
        if row is None or list(row.capabilities) != list(capabilities) or row.authority != authority:
            row, _ = await provider_rows.upsert_provider(
                workspace_id=workspace_id,
                name=name,
                classification=classification,
                capabilities=list(capabilities),
                authority=authority,
                builtin=True,
                registered_by=None,
            )
        found[name] = row
    return found


async def workspace_providers(principal: Principal) -> list[ProviderRow]:
    """Every provider registered in the caller's workspace (the internal listing)."""
    return await provider_rows.providers_of_workspace(principal.workspace_id)


# -- receiving a contribution ---------------------------------------------------------------------------------


def _history_ref(reference_id: str) -> tuple[str, datetime] | None:
    work_item_id, _, version = reference_id.partition("@")
    try:
        return (work_item_id, parse_version(version)) if work_item_id and version else None
    except ValueError:
        return None


async def _reference_errors(contribution: ContributionInput) -> list[FieldError]:
    """Evidence must point at what exists in the project, and a passage carries its source's class."""
    errors: list[FieldError] = []
    project = contribution.project_id
    by_kind: dict[str, list[tuple[int, EvidenceInput]]] = {}
    for index, item in enumerate(contribution.evidence):
        by_kind.setdefault(item.kind, []).append((index, item))
    if passages := by_kind.get("passage"):
        classes = await contribution_rows.passage_classes(project, [e.reference_id for _, e in passages])
        for index, item in passages:
            if item.reference_id not in classes:
                errors.append(FieldError(f"evidence[{index}].reference.id", "no such passage in the project"))
            elif classes[item.reference_id] != item.reference_class:
                errors.append(
                    FieldError(
                        f"evidence[{index}].reference.class",
                        f"must be {classes[item.reference_id]}: the passage's source is classified so",
                    )
                )
    if items := by_kind.get("work_item"):
        known = await contribution_rows.work_item_ids_in_project(project, [e.reference_id for _, e in items])
        errors += [
            FieldError(f"evidence[{i}].reference.id", "no such work item in the project")
            for i, e in items
            if e.reference_id not in known
        ]
    if history := by_kind.get("work_item_history"):
        parsed = {i: _history_ref(e.reference_id) for i, e in history}
        known_changes = await contribution_rows.work_item_history_ids(
            project, [p for p in parsed.values() if p is not None]
        )
        errors += [
            FieldError(f"evidence[{i}].reference.id", "must be <work item id>@<version after> of a change in history")
            for i, p in parsed.items()
            if p is None or p not in known_changes
        ]
    return errors


def work_for(
    contribution: ContributionInput, provider: ProviderRow, workspace_id: str, received_by: str | None
) -> ContributionWork:
    """The workflow input for a contribution that passed every rule."""
    print_ = fingerprint(contribution)
    return ContributionWork(
        contribution_id=contribution_id(provider.id, print_),
        workspace_id=workspace_id,
        project_id=contribution.project_id,
        body=contribution.as_dict(),
        fingerprint=print_,
        content_fingerprint=fingerprint(replace(contribution, supersedes=None)),
        term_key=normalise_term(contribution.term),
        classification=contribution_class(contribution, provider.classification),
        authority=provider.authority,
        promoter_identity=contribution.promoter_identity or provider.name,
        received_by=received_by,
    )


async def receive_contribution(
    workspace_id: str, record: Any, *, received_by: str | None, builtin_allowed: bool = False
) -> ContributionWork:
    """Check a contribution body against every rule (shape, provider, project, references, successor)."""
    contribution = parse_contribution(record, now=_now())
    provider = await provider_rows.get_provider(contribution.provider_id)
    if provider is None or provider.workspace_id != workspace_id:
        raise ValidationFailed("Unknown provider.", [FieldError("provider_id", "no such provider in this workspace")])
    if provider.builtin and not builtin_allowed:
        raise ValidationFailed(
            "Built-in providers contribute only from project data.",
            [FieldError("provider_id", "is a built-in provider")],
        )
    project = await tenancy.project_by_id(contribution.project_id)
    errors = provider_rule_errors(contribution, tuple(provider.capabilities), provider.classification)
    if project is None or project.workspace_id != workspace_id:
        errors.append(FieldError("project_id", "no such project in this workspace"))
    if errors:
        raise ValidationFailed("The contribution is not valid.", errors)
    work = work_for(contribution, provider, workspace_id, received_by)
    if await contribution_rows.get_contribution(work.contribution_id) is not None:
        # A repeat: it passed every rule when first received (its successor may have superseded it since).
        return work
    errors += await _reference_errors(contribution)
    if contribution.supersedes is not None:
        named = await entry_rows.get_entry(contribution.supersedes)
        if named is None or named.project_id != contribution.project_id:
            errors.append(FieldError("supersedes", "no such context package in the project"))
        elif named.status == "superseded":
            errors.append(FieldError("supersedes", f"is already superseded by {named.superseded_by}"))
    if errors:
        raise ValidationFailed("The contribution is not valid.", errors)
    return work


# -- the workflow's steps ------------------------------------------------------------------------------------------


def _canonical(body: dict[str, Any]) -> ContributionInput:
    """A persisted canonical body back as a contribution (it passed every rule when it was received)."""
    return ContributionInput(
        provider_id=body["provider_id"],
        project_id=body["project_id"],
        term=body["term"],
        summary=body["summary"],
        contribution_type=body["contribution_type"],
        evidence=tuple(
            EvidenceInput(
                e["capability"],
                e["reference"]["kind"],
                e["reference"]["id"],
                e["reference"]["class"],
                parse_version(e["as_of"]),
            )
            for e in body["evidence"]
        ),
        generated_at=parse_version(body["generated_at"]),
        promoter_identity=body.get("promoter_identity"),
        supersedes=body.get("supersedes"),
    )


async def _evolution_event(
    event_type: str,
    workspace_id: str,
    project_id: str,
    subject_id: str,
    related: str | None,
    kind: str,
    actor: str | None,
) -> None:
    now = _now()
    await outbox.append_event(
        type=event_type,
        workspace_id=workspace_id,
        project_id=project_id,
        resource_type=EVOLUTION_RESOURCE,
        resource_id=subject_id,
        actor_id=actor,
        payload={
            "subject_id": subject_id,
            "related_entry_id": related,
            "evolution_kind": kind,
            "occurred_at": format_timestamp(now),
        },
        occurred_at=now,
    )


async def persist_contribution(work: ContributionWork) -> bool:
    """Step 1: store the contribution with `contribution_persisted`; False when it was already stored."""
    contribution = _canonical(work.body)
    async with db.transaction():
        inserted = await contribution_rows.insert_contribution(
            contribution_id=work.contribution_id,
            workspace_id=work.workspace_id,
            contribution=contribution,
            fingerprint=work.fingerprint,
            content_fingerprint=work.content_fingerprint,
            term_key=work.term_key,
            classification=work.classification,
            promoter_identity=work.promoter_identity,
            received_by=work.received_by,
        )
        if inserted:
            # No entry exists before the decision: the evolution's subject is the contribution itself.
            await _evolution_event(
                EVENT_PERSISTED,
                work.workspace_id,
                contribution.project_id,
                work.contribution_id,
                contribution.supersedes,
                "contribution_persisted",
                work.received_by,
            )
    return inserted


async def decide_contribution(contribution_id_: str) -> DecisionOutcome:
    """Step 2: the merge decision and its change (the new pending entry, or evidence merged), with `merge_decided`."""
    async with db.transaction():
        row = await contribution_rows.get_contribution(contribution_id_, for_update=True)
        if row is None:
            raise ApplicationError(f"no contribution {contribution_id_}", type="not_found", non_retryable=True)
        if row.state != "persisted":  # a retry after the commit
            assert row.decision is not None and row.entry_id is not None
            return DecisionOutcome(row.decision, row.entry_id, row.related_entry_id)
        contribution = _canonical(row.body)
        provider = await provider_rows.get_provider(row.provider_id)
        assert provider is not None
        await entry_rows.lock_term(contribution.project_id, row.term_key)
        same_term = await entry_rows.current_entries_with_term(contribution.project_id, row.term_key)
        named = None
        if contribution.supersedes is not None:
            entry = await entry_rows.get_entry(contribution.supersedes)
            if entry is not None and entry.project_id == contribution.project_id:
                named = EntryFacts(
                    entry.id,
                    entry.project_id,
                    entry.term_key,
                    entry.contribution_type,
                    entry.classification,
                    entry.authority,
                    entry.status,
                )
        facts = ContributionFacts(
            contribution.project_id,
            row.term_key,
            contribution.contribution_type,
            row.classification,
            provider.authority,
            contribution.supersedes,
        )
        decision = decide(facts, same_term, named)
        if decision.creates_entry:
            entry_id = new_id("pkg")
            await entry_rows.insert_entry(
                entry_id=entry_id,
                workspace_id=row.workspace_id,
                contribution=contribution,
                term_key=row.term_key,
                classification=row.classification,
                authority=provider.authority,
                promoter_identity=contribution.promoter_identity or provider.name,
                supersedes=decision.related_entry_id if decision.kind == "superseded" else None,
            )
        else:
            assert decision.target_entry_id is not None
            entry_id = decision.target_entry_id
        await entry_rows.add_evidence(entry_id, contribution_id_, provider.id, contribution.evidence)
        await contribution_rows.set_contribution_decided(
            contribution_id_, decision.kind, entry_id, decision.related_entry_id
        )
        await _evolution_event(
            EVENT_MERGE_DECIDED,
            row.workspace_id,
            contribution.project_id,
            entry_id,
            decision.related_entry_id,
            decision.evolution_kind,
            row.received_by,
        )
        return DecisionOutcome(decision.kind, entry_id, decision.related_entry_id)


async def apply_contribution(contribution_id_: str) -> ApplyOutcome:
    """Step 3: create (the entry serves) or supersede (the old entry steps down, `entry_superseded`)."""
    async with db.transaction():
        row = await contribution_rows.get_contribution(contribution_id_, for_update=True)
        if row is None:
            raise ApplicationError(f"no contribution {contribution_id_}", type="not_found", non_retryable=True)
        if row.state == "applied":  # a retry after the commit
            return ApplyOutcome(await entry_index_log.last_index_change())
        if row.state != "decided":
            raise ApplicationError(f"contribution {contribution_id_} is not decided yet", type="not_decided")
        assert row.entry_id is not None  # a decided contribution names its entry
        changed = [row.entry_id]
        if row.decision != "merged":
            await entry_rows.set_entry_ready(row.entry_id)
        if (
            row.decision == "superseded"
            and row.related_entry_id is not None
            and await entry_rows.supersede_entry(row.related_entry_id, row.entry_id)
        ):
            changed.append(row.related_entry_id)
            await _evolution_event(
                EVENT_SUPERSEDED,
                row.workspace_id,
                _canonical(row.body).project_id,
                row.related_entry_id,
                row.entry_id,
                "superseded",
                row.received_by,
            )
        await contribution_rows.set_contribution_applied(contribution_id_)
        return ApplyOutcome(await entry_index_log.append_index_entries(changed))


async def index_packages(up_to_seq: int) -> int:
    """Step 4: bring this process's package index up to the log position (readers reload after the commit)."""
    try:
        applied = await catch_up_package_index(package_index())
    except IndexBusy as exc:
        raise ApplicationError(str(exc), type="index_busy") from None
    if applied < up_to_seq:
        raise ApplicationError(f"package index reached {applied}, not {up_to_seq}", type="index_behind")
    return applied


async def contribute_in_process(work: ContributionWork, *, index: bool = True) -> ContributionResult:
    """The workflow's steps in one transaction here (no worker polling), so nothing is ever half-written."""
    async with db.transaction():
        await persist_contribution(work)
        decision = await decide_contribution(work.contribution_id)
        applied = await apply_contribution(work.contribution_id)
    if index:
        await catch_up_packages_here()
    return ContributionResult(
        work.contribution_id, decision.decision, decision.entry_id, decision.related_entry_id, applied.index_seq
    )


async def catch_up_packages_here() -> bool:
    """Bring the package index up to date in this process unless another process (a worker) writes it."""
    index = package_index()
    try:
        await catch_up_package_index(index)
    except IndexBusy:
        log.info("a running worker holds the package index; it applies the changes itself")
        return False
    finally:
        index.release_writer()
    return True


# -- contributing through Temporal -----------------------------------------------------------------------------


async def start_contribution(client: Client, task_queue: str, work: ContributionWork) -> Any:
    """Start (or join) the contribution's workflow.

    Callers check first that the contribution is not applied yet; a closed workflow with this id then
    ended early (terminated by an operator, say), and every step is idempotent, so it runs again.
    """
    return await client.start_workflow(
        ContextContributionWorkflow.run,
        work,
        id=work.contribution_id,
        task_queue=task_queue,
        id_conflict_policy=WorkflowIDConflictPolicy.USE_EXISTING,
        id_reuse_policy=WorkflowIDReusePolicy.ALLOW_DUPLICATE,
        search_attributes=search_attributes(work.workspace_id, work.project_id),
    )


@dataclass(frozen=True)
class ContributionAnswer:
    """What a provider's contribution did: the status it deserves and the contribution as it stands (None while
    it is not persisted yet: then `work` is what was accepted)."""

    status_code: int
    contribution: ContributionRow | None
    work: ContributionWork


class ContributionUnavailable(ServiceUnavailable):
    """Temporal cannot be reached: nothing was written, so the same request can simply be sent again."""


async def contribute(
    principal: Principal, record: Any, *, temporal: TemporalConnection, task_queue: str, wait_seconds: float
) -> ContributionAnswer:
    """Receive a provider's contribution and run its workflow, waiting up to `wait_seconds` for the outcome.

    201 when it was applied within the wait, 202 while it is still under way, 200 when the same
    contribution was already received (its workflow id is its fingerprint, so it never runs twice).
    """
    project_id = record.get("project_id") if isinstance(record, dict) else None
    if isinstance(project_id, str):  # anything else is refused with the body's other errors below
        await require_project_permission(principal, project_id, CONTEXT_WRITE, "contributing to its context")
    work = await receive_contribution(principal.workspace_id, record, received_by=principal.id)
    known = await contribution_rows.get_contribution(work.contribution_id)
    if known is not None and known.state == "applied":
        return ContributionAnswer(200, known, work)
    try:
        handle = await start_contribution(await temporal.get(), task_queue, work)
    except WorkflowAlreadyStartedError:
        handle = None  # closed earlier: the row says how it ended
    except (RPCError, OSError, TimeoutError, RuntimeError) as exc:
        raise ContributionUnavailable(f"The contribution cannot start now ({exc}); send it again later.") from None
    status = 200 if known is not None else 202
    if handle is not None and wait_seconds > 0:
        try:
            await asyncio.wait_for(handle.result(), wait_seconds)
            status = 200 if known is not None else 201
        except TimeoutError:
            pass
        except (WorkflowFailureError, RPCError) as exc:
            log.warning("contribution %s did not complete: %s", work.contribution_id, exc)
    return ContributionAnswer(status, await contribution_rows.get_contribution(work.contribution_id), work)


async def get_contribution(principal: Principal, contribution_id_: str) -> ContributionRow:
    """A contribution to a project the caller sees, with its state and decision (else 404, as if absent)."""
    row = await contribution_rows.get_contribution(contribution_id_) if contribution_id_.startswith("ctxc_") else None
    if row is None or row.workspace_id != principal.workspace_id:
        raise NotFound("No such contribution.")
    if not await can_see_project(principal, row.project_id):
        raise NotFound("No such contribution.")
    return row
