"""JSON shapes of evidence search resources (camelCase, as DESIGN.md names them), for every transport."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from groundwork.domain.evidence_search.document_dates import INGESTION
from groundwork.domain.times import timestamp
from groundwork.persistence.repositories.evidence_search.corpus_reads import SourceListRow, StoredPassageRow
from groundwork.persistence.repositories.evidence_search.sources import VersionSummaryRow
from groundwork.search.passages import PassageHit
from groundwork.services.evidence_search.search import CorpusSearchResult


def passage_resource(hit: PassageHit) -> dict[str, Any]:
    """An exact stored passage with its source, place, score, highlights and provenance."""
    return {
        "id": hit.id,
        "projectId": hit.project_id,
        "source": {
            "id": hit.source_id,
            "title": hit.source_title,
            "uri": hit.source_uri,
            "kind": hit.source_kind,
            "versionId": hit.version_id,
        },
        "page": hit.page,
        "paragraph": hit.paragraph,
        "section": hit.section,
        "span": {"start": hit.char_start, "end": hit.char_end},
        "text": hit.text,
        "score": round(hit.score, 6),
        "highlights": [{"start": start, "end": end} for start, end in hit.highlights],
        "provenanceQuality": hit.provenance_quality,
        "segmenterVersion": hit.segmenter_version,
    }


def search_answer(result: CorpusSearchResult) -> dict[str, Any]:
    """The list answer of a corpus search: passages, keyset page, `truncated` and the match count."""
    return {
        "data": [passage_resource(p) for p in result.passages],
        "page": result.page,
        "truncated": result.truncated,
        "totalCount": result.total_count,
    }


def source_resource(summary: VersionSummaryRow) -> dict[str, Any]:
    """A corpus source as the provider API shows it."""
    return {
        "id": summary.source_id,
        "projectId": summary.project_id,
        "uri": summary.uri,
        "title": summary.title,
        "owner": summary.owner,
        "classification": summary.classification,
        "activeVersionId": summary.active_version_id,
        "createdAt": timestamp(summary.source_created_at),
        "updatedAt": timestamp(summary.source_updated_at),
    }


def version_resource(summary: VersionSummaryRow) -> dict[str, Any]:
    """A source-content version as the provider API shows it."""
    return {
        "id": summary.id,
        "sourceId": summary.source_id,
        "kind": summary.kind,
        "contentHash": summary.content_hash,
        "byteSize": summary.byte_size,
        "status": summary.status,
        "passageCount": summary.passage_count,
        "createdAt": timestamp(summary.created_at),
        "ingestedAt": timestamp(summary.ingested_at),
    }


def _document_date(stated: datetime | None, source: str | None, ingested_at: datetime | None) -> dict[str, Any]:
    """`documentDate` (the document's own date, else when it was ingested) and `documentDateSource` (which)."""
    if stated is not None and source is not None:
        return {"documentDate": timestamp(stated), "documentDateSource": source}
    return {"documentDate": timestamp(ingested_at), "documentDateSource": INGESTION}


def stored_passage_resource(passage: StoredPassageRow) -> dict[str, Any]:
    """An opened passage: exactly as stored, with its source, place, provenance quality and neighbours."""
    return {
        "id": passage.id,
        "projectId": passage.project_id,
        "source": {
            "id": passage.source_id,
            "title": passage.source_title,
            "uri": passage.source_uri,
            "kind": passage.source_kind,
            "classification": passage.classification,
            "versionId": passage.version_id,
            **_document_date(passage.document_date, passage.document_date_source, passage.ingested_at),
            "ingestedAt": timestamp(passage.ingested_at),
        },
        "page": passage.page,
        "paragraph": passage.paragraph,
        "section": passage.section,
        "span": {"start": passage.char_start, "end": passage.char_end},
        "text": passage.text,
        "provenanceQuality": passage.provenance_quality,
        "segmenterVersion": passage.segmenter_id,
        "previousPassageId": passage.previous_id,
        "nextPassageId": passage.next_id,
    }


def listed_source_resource(source: SourceListRow) -> dict[str, Any]:
    """A corpus source as a reader lists it: its serving version's dates and passage count (null until one serves)."""
    dates = (
        _document_date(source.document_date, source.document_date_source, source.ingested_at)
        if source.active_version_id is not None
        else {"documentDate": None, "documentDateSource": None}
    )
    return {
        "id": source.id,
        "projectId": source.project_id,
        "uri": source.uri,
        "title": source.title,
        "kind": source.kind,
        "classification": source.classification,
        "activeVersionId": source.active_version_id,
        **dates,
        "ingestedAt": timestamp(source.ingested_at),
        "passageCount": source.passage_count,
        "createdAt": timestamp(source.created_at),
        "updatedAt": timestamp(source.updated_at),
    }
