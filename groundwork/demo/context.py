"""The demo context engine: the built-in providers run once, and one demo `financial` provider contributes.

So a new user's first overview and briefing show packages, and a key without
`context-engine:financial` sees fewer of them. Everything runs in-process (the seeder runs before
Temporal and the worker start); the worker's package index follower indexes it on start.
"""

from __future__ import annotations

from dataclasses import dataclass

from groundwork.demo import catalog
from groundwork.domain.tenancy.principals import Principal
from groundwork.domain.times import format_timestamp
from groundwork.persistence.repositories.context_engine import provider_sources
from groundwork.persistence.repositories.tenancy import workspaces as tenancy
from groundwork.services.context_engine.contributions import (
    ProviderRegistration,
    contribute_in_process,
    receive_contribution,
    register_provider,
)
from groundwork.services.context_engine.providers import ProvidersRun, run_builtin_providers

FINANCIAL_PROVIDER = ProviderRegistration("finance-ledger", "financial", ["risks", "findings"], "advisory")


@dataclass(frozen=True)
class DemoContribution:
    project_key: str
    term: str
    summary: str
    contribution_type: str
    capability: str
    reference: str


FINANCIAL_CONTRIBUTIONS: tuple[DemoContribution, ...] = (
    DemoContribution(
        "PAY",
        "PAY budget burn",
        "Budget burn on the payments modernisation is at 82% with about 60% of the agreed scope delivered; "
        "the token migration and the PCI re-assessment are forecast to overrun their budget line.",
        "risk",
        "risks",
        "ledger:PAY-2026-Q3",
    ),
    DemoContribution(
        "PAY",
        "Unfunded Finance reporting requests",
        "Chargeback ageing, FX gain/loss for the Irish stores and the monthly VAT summary have no funded "
        "change order; work on them needs a signed change request first.",
        "finding",
        "findings",
        "ledger:PAY-change-orders",
    ),
    DemoContribution(
        "FLT",
        "FLT telematics hardware cost",
        "Telematics unit costs are 14% over the contracted price after the supplier's currency adjustment; "
        "the remaining 1,100 vans are at risk of a budget overrun.",
        "risk",
        "risks",
        "ledger:FLT-hardware",
    ),
)


async def seed_demo_context() -> ProvidersRun:
    """Run the built-in providers over the demo workspace and contribute the demo financial provider's entries."""
    workspace = await tenancy.get_workspace_by_slug(catalog.WORKSPACE_SLUG)
    assert workspace is not None, "seed the demo data first"
    run = await run_builtin_providers(catalog.WORKSPACE_SLUG, client=None, task_queue="", index=False)
    operator = Principal("", workspace.id, "demo", "provider", False, "", frozenset())
    provider, _ = await register_provider(operator, FINANCIAL_PROVIDER)
    for item in FINANCIAL_CONTRIBUTIONS:
        project = await tenancy.project_by_key(catalog.WORKSPACE_SLUG, item.project_key)
        assert project is not None
        # As recent as the project's data, so a fresh demo shows fresh packages and a re-seed repeats exactly.
        as_of = format_timestamp(max(w.version for w in await provider_sources.work_items_with_history(project.id)))
        work = await receive_contribution(
            workspace.id,
            {
                "provider_id": provider.id,
                "project_id": project.id,
                "term": item.term,
                "summary": item.summary,
                "contribution_type": item.contribution_type,
                "evidence": [
                    {
                        "capability": item.capability,
                        "reference": {"kind": "external", "id": item.reference, "class": "financial"},
                        "as_of": as_of,
                    }
                ],
                "generated_at": as_of,
            },
            received_by=None,
        )
        await contribute_in_process(work, index=False)
    return run
