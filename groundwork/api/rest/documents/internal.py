"""Answers of the internal API (`/internal/v1`): registered providers, contributions and corpus sources."""

from __future__ import annotations

from typing import Any

import msgspec

from groundwork.api.rest.documents.common import Page, Resource, Timestamp


class RegisteredProvider(Resource, kw_only=True):
    """A registered provider as the internal API shows it."""

    id: str
    name: str
    classification: str | None
    capabilities: list[str]
    authority: Any
    builtin: bool
    created_at: Timestamp | None
    updated_at: Timestamp | None


class Contribution(Resource, kw_only=True):
    """A contribution: its state, the decision and the entry it concerns."""

    id: str
    state: str
    decision: str | None
    entry_id: str | None
    related_entry_id: str | None
    contribution: Any
    created_at: Timestamp | None
    decided_at: Timestamp | None
    applied_at: Timestamp | None


class SourceRecord(Resource, kw_only=True):
    """A corpus source as the provider API shows it."""

    id: str
    project_id: str
    uri: str
    title: str | None
    owner: str | None
    classification: str | None
    active_version_id: str | None
    created_at: Timestamp | None
    updated_at: Timestamp | None


class SourceVersion(Resource, kw_only=True):
    """A source-content version."""

    id: str
    source_id: str
    kind: str
    content_hash: str
    byte_size: int
    status: str
    passage_count: int | None
    created_at: Timestamp | None
    ingested_at: Timestamp | None


class SourceContribution(Resource, kw_only=True):
    """What contributing a source did, with the source and the version it concerns."""

    outcome: str
    source: SourceRecord
    version: SourceVersion


class RegisteredProviderDocument(msgspec.Struct):
    """One registered provider."""

    data: RegisteredProvider


class RegisteredProviderList(msgspec.Struct):
    """The workspace's registered providers (one page)."""

    data: list[RegisteredProvider]
    page: Page


class ContributionDocument(msgspec.Struct):
    """One contribution."""

    data: Contribution


class SourceContributionDocument(msgspec.Struct):
    """The answer to a source contribution."""

    data: SourceContribution
