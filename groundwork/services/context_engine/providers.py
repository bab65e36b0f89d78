"""The built-in providers: `work-items` and `corpus` contribute what they derive from each project's data.

A run derives every contribution from the data as it is now and keeps only what changed since the
provider's last contribution for that term (a changed one supersedes the provider's earlier entry),
so a second run over unchanged data writes nothing and emits nothing. Runs come from a Temporal
schedule, from `groundwork providers run`, and from the demo seeder.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, replace

from temporalio.client import Client
from temporalio.common import WorkflowIDConflictPolicy

from groundwork.domain.context_engine.contribution import ContributionInput, fingerprint
from groundwork.domain.context_engine.derivation import (
    CORPUS_PROVIDER,
    WORK_ITEMS_PROVIDER,
    Derived,
    derive_from_passages,
    derive_from_work_items,
)
from groundwork.domain.errors import NotFound
from groundwork.persistence.repositories.context_engine import contributions as contribution_rows
from groundwork.persistence.repositories.context_engine import provider_sources
from groundwork.persistence.repositories.tenancy import workspaces as tenancy
from groundwork.services.context_engine.contributions import (
    catch_up_packages_here,
    contribute_in_process,
    ensure_builtin_providers,
    work_for,
)
from groundwork.workflows.context_engine import (
    ContextProvidersRunWorkflow,
    DerivedWork,
    ProvidersRunInput,
    ProvidersRunResult,
)
from groundwork.workflows.search_attributes import workspace_attributes

log = logging.getLogger(__name__)


async def provider_projects(workspace_id: str | None) -> list[list[str]]:
    """Every (workspace, project) pair the built-in providers run over, registering them where missing."""
    spaces = [w.id for w in await tenancy.all_workspaces()] if workspace_id is None else [workspace_id]
    pairs = []
    for space in spaces:
        await ensure_builtin_providers(space)
        pairs += [[space, p.id] for p in await tenancy.projects_of_workspace(space)]
    return pairs


async def derive_contributions(workspace_id: str, project_id: str) -> DerivedWork:
    """What the built-in providers would contribute to a project now, less what they already have."""
    providers = await ensure_builtin_providers(workspace_id)
    project = next((p for p in await tenancy.projects_of_workspace(workspace_id) if p.id == project_id), None)
    if project is None:
        return DerivedWork()
    derived: dict[str, list[Derived]] = {
        WORK_ITEMS_PROVIDER: derive_from_work_items(
            project.key, await provider_sources.work_items_with_history(project_id)
        ),
        CORPUS_PROVIDER: derive_from_passages(await provider_sources.active_passages(project_id)),
    }
    result = DerivedWork()
    for name, found in derived.items():
        provider = providers[name]
        latest = await contribution_rows.latest_contributions_by_key(provider.id, project_id)
        candidates = []
        for item in found:
            contribution = ContributionInput(
                provider_id=provider.id,
                project_id=project_id,
                term=item.term,
                summary=item.summary,
                contribution_type=item.contribution_type,
                evidence=item.evidence,
                generated_at=item.generated_at,
            )
            previous = latest.get(item.key)
            if previous is not None and previous.content_fingerprint == fingerprint(contribution):
                result.unchanged += 1
                continue
            # Changed since the provider last spoke on this term: the new one succeeds its entry.
            if previous is not None and previous.entry_status in ("pending", "ready"):
                contribution = replace(contribution, supersedes=previous.entry_id)
            candidates.append(work_for(contribution, provider, workspace_id, None))
        known = await contribution_rows.existing_contribution_ids([w.contribution_id for w in candidates])
        result.unchanged += len(known)
        result.work += [w for w in candidates if w.contribution_id not in known]
    return result


@dataclass(frozen=True)
class ProvidersRun:
    """What a run of the built-in providers did."""

    contributed: int
    unchanged: int
    through_worker: bool


async def run_builtin_providers(
    workspace_slug: str | None, *, client: Client | None, task_queue: str, index: bool = True
) -> ProvidersRun:
    """Run the built-in providers now: through the worker (`ContextProvidersRunWorkflow`), or here if none polls."""
    workspace_id = None
    if workspace_slug is not None:
        workspace = await tenancy.get_workspace_by_slug(workspace_slug)
        if workspace is None:
            raise NotFound(f"No workspace with the slug {workspace_slug!r}.")
        workspace_id = workspace.id
    if client is not None:
        result: ProvidersRunResult = await client.execute_workflow(
            ContextProvidersRunWorkflow.run,
            ProvidersRunInput(workspace_id),
            id=f"groundwork-context-providers-now-{workspace_id or 'all'}",
            task_queue=task_queue,
            search_attributes=workspace_attributes(workspace_id),
            id_conflict_policy=WorkflowIDConflictPolicy.USE_EXISTING,
        )
        return ProvidersRun(result.contributed, result.unchanged, True)
    contributed = unchanged = 0
    for space, project_id in await provider_projects(workspace_id):
        derived = await derive_contributions(space, project_id)
        for work in derived.work:
            await contribute_in_process(work, index=False)
        contributed += len(derived.work)
        unchanged += derived.unchanged
    if index and contributed:
        await catch_up_packages_here()
    return ProvidersRun(contributed, unchanged, False)
