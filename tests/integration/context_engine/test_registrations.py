"""services/context_engine/registrations: a provider registers once by name (again updates what it can contribute),
never under a built-in's name or with another classification, and every workspace has the built-in providers."""

from __future__ import annotations

import pytest

from groundwork.domain.context_engine.derivation import BUILTIN_PROVIDERS
from groundwork.domain.errors import ValidationFailed
from groundwork.services.context_engine import registrations
from groundwork.services.context_engine.registrations import ProviderRegistration
from groundwork.services.tenancy.api_keys import resolve_key
from tests.conftest import Workspace


async def test_registering_again_by_name_updates_the_same_provider(workspace: Workspace) -> None:
    operator = await resolve_key(await workspace.key("ops", admin=True))
    assert operator is not None
    first, created = await registrations.register_provider(
        operator, ProviderRegistration("risk-radar", "delivery", ["risks"])
    )
    again, created_again = await registrations.register_provider(
        operator, ProviderRegistration("risk-radar", "delivery", ["risks", "blockers"], "canonical")
    )
    assert created and not created_again and again.id == first.id
    assert (again.capabilities, again.authority) == (["risks", "blockers"], "canonical")
    with pytest.raises(ValidationFailed, match="classification cannot change"):
        await registrations.register_provider(operator, ProviderRegistration("risk-radar", "staffing", ["risks"]))
    names = [p.name for p in await registrations.workspace_providers(operator)]
    assert names.count("risk-radar") == 1


@pytest.mark.parametrize(
    ("registration", "paths"),
    [
        (ProviderRegistration("Bad Name", "delivery", ["risks"]), {"name"}),
        (ProviderRegistration(next(iter(BUILTIN_PROVIDERS)), "delivery", ["risks"]), {"name"}),
        (
            ProviderRegistration("ok", "secret", ["risks", "risks"], "boss"),
            {"classification", "capabilities", "authority"},
        ),
        (ProviderRegistration("ok", "delivery", ["weather"]), {"capabilities[0]"}),
    ],
)
async def test_an_invalid_registration_names_every_bad_field_and_registers_nothing(
    workspace: Workspace, registration: ProviderRegistration, paths: set[str]
) -> None:
    operator = await resolve_key(await workspace.key("ops", admin=True))
    assert operator is not None
    before = await registrations.workspace_providers(operator)
    with pytest.raises(ValidationFailed) as refused:
        await registrations.register_provider(operator, registration)
    assert {e.path for e in refused.value.errors} == paths
    assert await registrations.workspace_providers(operator) == before


async def test_the_built_in_providers_are_registered_once_per_workspace(workspace: Workspace) -> None:
    first = await registrations.ensure_builtin_providers(workspace.id)
    again = await registrations.ensure_builtin_providers(workspace.id)
    assert set(first) == set(BUILTIN_PROVIDERS) and all(row.builtin for row in first.values())
    assert {name: row.id for name, row in again.items()} == {name: row.id for name, row in first.items()}
