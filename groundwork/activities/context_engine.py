"""Activities of the context engine's workflows: thin steps over `services.context_contributions` and providers."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from temporalio import activity

from groundwork.activities.heartbeats import beating
from groundwork.services.context_engine import contributions as steps
from groundwork.services.context_engine.providers import derive_contributions, provider_projects
from groundwork.workflows.context_engine import (
    ApplyOutcome,
    ContributionRef,
    ContributionWork,
    DecisionOutcome,
    DerivedWork,
    PackageIndexTarget,
    ProjectRef,
)


@activity.defn(name="context_persist_contribution")
async def persist_contribution(work: ContributionWork) -> bool:
    """Persist the contribution and its `contribution_persisted` event (once)."""
    async with beating():
        return await steps.persist_contribution(work)


@activity.defn(name="context_decide_contribution")
async def decide_contribution(ref: ContributionRef) -> DecisionOutcome:
    """Commit the merge decision with its change and `merge_decided`."""
    async with beating():
        return await steps.decide_contribution(ref.contribution_id)


@activity.defn(name="context_apply_contribution")
async def apply_contribution(ref: ContributionRef) -> ApplyOutcome:
    """Make the new entry serve, or supersede the old one with `entry_superseded`."""
    async with beating():
        return await steps.apply_contribution(ref.contribution_id)


@activity.defn(name="context_index_packages")
async def index_packages(target: PackageIndexTarget) -> int:
    """Bring this worker's package index up to the change and commit; readers reload."""
    async with beating():
        return await steps.index_packages(target.up_to_seq)


@activity.defn(name="context_provider_projects")
async def list_provider_projects(workspace_id: str) -> list[list[str]]:
    """The (workspace, project) pairs a providers run covers ("" for every workspace)."""
    async with beating():
        return await provider_projects(workspace_id or None)


@activity.defn(name="context_derive_contributions")
async def derive(ref: ProjectRef) -> DerivedWork:
    """What the built-in providers contribute to one project now (only what changed)."""
    async with beating():
        return await derive_contributions(ref.workspace_id, ref.project_id)


CONTEXT_ACTIVITIES: list[Callable[..., Any]] = [
    persist_contribution,
    decide_contribution,
    apply_contribution,
    index_packages,
    list_provider_projects,
    derive,
]
