"""The demo context engine: the built-in providers run once, and the demo's own providers contribute.

The demo's providers and their contributions are `data/providers.jsonl` and `data/contributions.jsonl`
(a `financial` provider, so a key without `context-engine:financial` sees fewer packages), so a new
user's first overview and briefing show packages. Everything runs in-process (the seeder runs before
Temporal and the worker start); the worker's package index follower indexes it on start.
"""

from __future__ import annotations

from groundwork.demo.records import WORKSPACE_SLUG, records
from groundwork.domain.tenancy.principals import Principal
from groundwork.domain.times import format_timestamp
from groundwork.persistence.repositories.context_engine import provider_sources
from groundwork.persistence.repositories.context_engine.providers import ProviderRow
from groundwork.persistence.repositories.tenancy import workspaces as tenancy
from groundwork.services.context_engine.contributions import (
    ProviderRegistration,
    contribute_in_process,
    receive_contribution,
    register_provider,
)
from groundwork.services.context_engine.providers import ProvidersRun, run_builtin_providers


async def seed_demo_context() -> ProvidersRun:
    """Run the built-in providers over the demo workspace and contribute the demo providers' entries."""
    workspace = await tenancy.get_workspace_by_slug(WORKSPACE_SLUG)
    assert workspace is not None, "seed the demo data first"
    run = await run_builtin_providers(WORKSPACE_SLUG, client=None, task_queue="", index=False)
    operator = Principal("", workspace.id, "demo", "provider", False, "", frozenset())
    providers: dict[str, ProviderRow] = {}
    for registration in records("providers"):
        provider, _ = await register_provider(operator, ProviderRegistration(**registration))
        providers[registration["name"]] = provider
    for item in records("contributions"):
        project = await tenancy.project_by_key(WORKSPACE_SLUG, item["project"])
        assert project is not None
        # As recent as the project's data, so a fresh demo shows fresh packages and a re-seed repeats exactly.
        as_of = format_timestamp(max(w.version for w in await provider_sources.work_items_with_history(project.id)))
        work = await receive_contribution(
            workspace.id,
            {
                "provider_id": providers[item["provider"]].id,
                "project_id": project.id,
                "term": item["term"],
                "summary": item["summary"],
                "contribution_type": item["contribution_type"],
                "evidence": [{**evidence, "as_of": as_of} for evidence in item["evidence"]],
                "generated_at": as_of,
            },
            received_by=None,
        )
        await contribute_in_process(work, index=False)
    return run
