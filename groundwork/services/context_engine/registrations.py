"""Registering a workspace's context providers, and the built-in ones every workspace has."""

from __future__ import annotations

import re
from dataclasses import dataclass

from groundwork.domain.context_engine.derivation import BUILTIN_PROVIDERS
from groundwork.domain.context_engine.model import (
    AUTHORITIES,
    CAPABILITIES,
    PROVIDER_CLASSIFICATIONS,
)
from groundwork.domain.errors import FieldError, ValidationFailed
from groundwork.domain.tenancy.principals import Principal
from groundwork.persistence import db
from groundwork.persistence.repositories.context_engine import providers as provider_rows
from groundwork.persistence.repositories.context_engine.providers import ProviderRow

_NAME = re.compile(r"^[a-z0-9][a-z0-9-]{0,62}$")


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
