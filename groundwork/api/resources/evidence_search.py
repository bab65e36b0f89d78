"""JSON shapes of evidence search resources (camelCase, as DESIGN.md names them), for every transport."""

from __future__ import annotations

from typing import Any

from groundwork.domain.times import timestamp
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
