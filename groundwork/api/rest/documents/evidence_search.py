"""REST answers of evidence search: passages (searched and opened) and corpus sources."""

from __future__ import annotations

import msgspec

from groundwork.api.rest.documents.common import Page, Resource, Timestamp


class Span(Resource, kw_only=True):
    """Character offsets in the source text (or, for a highlight, in the passage)."""

    start: int
    end: int


class PassageSource(Resource, kw_only=True):
    """The source a passage comes from, and its version."""

    id: str
    title: str | None
    uri: str | None
    kind: str | None
    version_id: str


class Passage(Resource, kw_only=True):
    """An exact stored passage with its source, place, score, highlights and provenance."""

    id: str
    project_id: str
    source: PassageSource
    page: int | None
    paragraph: int | None
    section: str | None
    span: Span
    text: str
    score: float
    highlights: list[Span]
    provenance_quality: str | None
    segmenter_version: str | None


class StoredPassageSource(Resource, kw_only=True):
    """The source of an opened passage, with its dates."""

    id: str
    title: str | None
    uri: str | None
    kind: str | None
    classification: str | None
    version_id: str
    document_date: Timestamp | None
    document_date_source: str | None
    ingested_at: Timestamp | None


class StoredPassage(Resource, kw_only=True):
    """An opened passage: exactly as stored, with its source, place, provenance quality and neighbours."""

    id: str
    project_id: str
    source: StoredPassageSource
    page: int | None
    paragraph: int | None
    section: str | None
    span: Span
    text: str
    provenance_quality: str | None
    segmenter_version: str | None
    previous_passage_id: str | None
    next_passage_id: str | None


class CorpusSource(Resource, kw_only=True):
    """A corpus source: its serving version's dates and passage count (null until one serves)."""

    id: str
    project_id: str
    uri: str | None
    title: str | None
    kind: str | None
    classification: str | None
    active_version_id: str | None
    document_date: Timestamp | None
    document_date_source: str | None
    ingested_at: Timestamp | None
    passage_count: int | None
    created_at: Timestamp | None
    updated_at: Timestamp | None


class PassageSearchList(msgspec.Struct):
    """A page of passages that match, best first, whether hits were cut at the cap, and how many match."""

    data: list[Passage]
    page: Page
    truncated: bool
    total_count: int = msgspec.field(name="totalCount")


class StoredPassageDocument(msgspec.Struct):
    """One opened passage."""

    data: StoredPassage


class CorpusSourceList(msgspec.Struct):
    """A page of corpus sources."""

    data: list[CorpusSource]
    page: Page
