"""Context engine workflows: one governed contribution, and a run of the built-in providers.

`ContextContributionWorkflow` (id `ctxc_<provider>_<fingerprint>`, so a repeat is a no-op) runs
persist → merge decision → supersede or create → index, each step one activity whose change and
outbox event commit together. `ContextProvidersRunWorkflow` (on a Temporal schedule, or by
`groundwork providers run`) derives the built-in providers' contributions from each project's data
and runs one contribution workflow per new one, as a child.
"""

from __future__ import annotations

import asyncio
import contextlib
from dataclasses import dataclass, field
from datetime import timedelta

from temporalio import workflow
from temporalio.common import RetryPolicy, SearchAttributePair, TypedSearchAttributes
from temporalio.exceptions import WorkflowAlreadyStartedError
from temporalio.workflow import ParentClosePolicy

from groundwork.workflows.search_attributes import SUBJECT, WORKSPACE

PROVIDERS_SCHEDULE_ID = "groundwork-context-providers"
PROVIDERS_INTERVAL = timedelta(minutes=15)
_TIMEOUT = timedelta(minutes=5)
# The activities heartbeat every few seconds: a worker that died mid-step is noticed within this, and the
# step retried, instead of after the whole start-to-close timeout.
_HEARTBEAT = timedelta(seconds=15)
# Database steps retry until they succeed: a contribution that was persisted is always decided and applied.
_RETRY = RetryPolicy(
    initial_interval=timedelta(milliseconds=200),
    maximum_interval=timedelta(seconds=10),
    non_retryable_error_types=["not_found"],
)
_CONCURRENT_CHILDREN = 8


def search_attributes(workspace_id: str, subject_id: str) -> TypedSearchAttributes:
    """What operators filter contributions by in the Temporal UI: the workspace and the subject (project)."""
    return TypedSearchAttributes(
        [SearchAttributePair(WORKSPACE, workspace_id), SearchAttributePair(SUBJECT, subject_id)]
    )


# The workflows' and activities' inputs and outputs: the workflows call activities by name, and they import these.


@dataclass
class ContributionWork:
    """A received, valid contribution: its canonical body and what was derived from it on receipt."""

    contribution_id: str
    workspace_id: str
    project_id: str
    body: dict[str, object]
    fingerprint: str
    content_fingerprint: str
    term_key: str
    classification: str
    authority: str
    promoter_identity: str
    received_by: str | None = None


@dataclass
class ContributionRef:
    """A persisted contribution."""

    contribution_id: str


@dataclass
class DecisionOutcome:
    """The merge decision: its kind, the entry it concerns, and the related entry."""

    decision: str
    entry_id: str
    related_entry_id: str | None = None


@dataclass
class ApplyOutcome:
    """The decision applied; `index_seq` is the package index log position that carries it."""

    index_seq: int


@dataclass
class PackageIndexTarget:
    """Bring the package index at least up to this log position."""

    up_to_seq: int


@dataclass
class ContributionResult:
    """What a contribution became."""

    contribution_id: str
    decision: str
    entry_id: str
    related_entry_id: str | None
    index_seq: int


@workflow.defn(name="ContextContributionWorkflow")
class ContextContributionWorkflow:
    """Persist → merge decision → supersede or create → index."""

    @workflow.run
    async def run(self, work: ContributionWork) -> ContributionResult:
        await workflow.execute_activity(
            "context_persist_contribution",
            work,
            start_to_close_timeout=_TIMEOUT,
            heartbeat_timeout=_HEARTBEAT,
            retry_policy=_RETRY,
        )
        ref = ContributionRef(work.contribution_id)
        decision = await workflow.execute_activity(
            "context_decide_contribution",
            ref,
            result_type=DecisionOutcome,
            start_to_close_timeout=_TIMEOUT,
            heartbeat_timeout=_HEARTBEAT,
            retry_policy=_RETRY,
        )
        applied = await workflow.execute_activity(
            "context_apply_contribution",
            ref,
            result_type=ApplyOutcome,
            start_to_close_timeout=_TIMEOUT,
            heartbeat_timeout=_HEARTBEAT,
            retry_policy=_RETRY,
        )
        await workflow.execute_activity(
            "context_index_packages",
            PackageIndexTarget(applied.index_seq),
            result_type=int,
            start_to_close_timeout=_TIMEOUT,
            heartbeat_timeout=_HEARTBEAT,
            retry_policy=_RETRY,
        )
        return ContributionResult(
            work.contribution_id, decision.decision, decision.entry_id, decision.related_entry_id, applied.index_seq
        )


@dataclass
class ProvidersRunInput:
    """Which workspace to run the built-in providers for (None: every workspace); the projects still to do."""

    workspace_id: str | None = None
    pending: list[list[str]] | None = None  # [workspace_id, project_id] pairs, set on continue-as-new
    contributed: int = 0
    unchanged: int = 0


@dataclass
class ProjectRef:
    """One project of one workspace."""

    workspace_id: str
    project_id: str


@dataclass
class DerivedWork:
    """The new contributions the built-in providers derived for a project, and how many were unchanged."""

    work: list[ContributionWork] = field(default_factory=list)
    unchanged: int = 0


@dataclass
class ProvidersRunResult:
    """How many contributions were made, and how many derived ones were already known."""

    contributed: int
    unchanged: int


# A continue-as-new keeps each run's history small however many projects there are.
_PROJECTS_PER_RUN = 50


@workflow.defn(name="ContextProvidersRunWorkflow")
class ContextProvidersRunWorkflow:
    """Derive the built-in providers' contributions per project and run each new one as a child."""

    @workflow.run
    async def run(self, params: ProvidersRunInput) -> ProvidersRunResult:
        pending = params.pending
        if pending is None:
            pending = await workflow.execute_activity(
                "context_provider_projects",
                params.workspace_id or "",
                result_type=list[list[str]],
                start_to_close_timeout=_TIMEOUT,
                heartbeat_timeout=_HEARTBEAT,
                retry_policy=_RETRY,
            )
        contributed, unchanged = params.contributed, params.unchanged
        gate = asyncio.Semaphore(_CONCURRENT_CHILDREN)

        async def child(work: ContributionWork) -> None:
            async with gate:
                # The same contribution may already be under way (from the CLI or another run).
                with contextlib.suppress(WorkflowAlreadyStartedError):
                    await workflow.execute_child_workflow(
                        ContextContributionWorkflow.run,
                        work,
                        id=work.contribution_id,
                        search_attributes=search_attributes(work.workspace_id, work.project_id),
                        parent_close_policy=ParentClosePolicy.ABANDON,
                    )

        for position, (workspace_id, project_id) in enumerate(pending):
            if position >= _PROJECTS_PER_RUN:
                workflow.continue_as_new(
                    ProvidersRunInput(params.workspace_id, pending[position:], contributed, unchanged)
                )
            derived = await workflow.execute_activity(
                "context_derive_contributions",
                ProjectRef(workspace_id, project_id),
                result_type=DerivedWork,
                start_to_close_timeout=_TIMEOUT,
                heartbeat_timeout=_HEARTBEAT,
                retry_policy=_RETRY,
            )
            # Projects one after another; a project's contributions (each a distinct term) side by side.
            await asyncio.gather(*(child(w) for w in derived.work))
            contributed += len(derived.work)
            unchanged += derived.unchanged
        return ProvidersRunResult(contributed, unchanged)


CONTEXT_WORKFLOWS: list[type] = [ContextContributionWorkflow, ContextProvidersRunWorkflow]
