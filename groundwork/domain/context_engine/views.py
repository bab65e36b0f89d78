"""What the reads render: packages, evidence references and providers, with read-time facts filled in."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from groundwork.domain.context_engine.model import Freshness


@dataclass(frozen=True)
class Provenance:
    """Where a claim came from: the provider's name, who promoted it, when it was generated."""

    source: str
    promoter_identity: str
    generated_at: datetime


@dataclass(frozen=True)
class EvidenceView:
    """A policy-safe evidence reference: never a body or an excerpt, only what it points at."""

    id: str
    provider_id: str
    capability: str
    kind: str
    reference_id: str
    reference_class: str
    as_of: datetime
    freshness: Freshness
    provenance: Provenance


@dataclass(frozen=True)
class PackageView:
    """A context package as a caller may see it."""

    id: str
    seq: int
    status: str
    term: str
    summary: str
    contribution_type: str
    classification: str
    project_id: str
    engagement_id: str
    workspace_id: str
    freshness: Freshness
    provenance: Provenance
    evidence_count: int
    provider_count: int
    missing: tuple[str, ...]
    supersedes: str | None
    superseded_by: str | None
    created_at: datetime
    updated_at: datetime


@dataclass(frozen=True)
class ProviderView:
    """A contributing provider with its counts computed over what the caller may see."""

    id: str
    name: str
    classification: str
    capabilities: tuple[str, ...]
    contribution_count: int
    coverage_status: str
    freshness_status: str | None
    authority: str
