"""Output schemas of the context engine and evidence search tools (groundwork.api.resources.context_engine and
evidence_search)."""

from __future__ import annotations

from groundwork.api.mcp.schemas.shapes import (
    BOOLEAN,
    INTEGER,
    NUMBER,
    OPEN_OBJECT,
    OPTIONAL_TIME,
    PAGE,
    STRING,
    SUBJECT,
    TEXT,
    TIME,
    Schema,
    array,
    described,
    enum,
    listing,
    nullable,
    obj,
    one,
)
from groundwork.domain.context_engine.model import CONTRIBUTION_TYPES, PACKAGE_STATUSES
from groundwork.domain.evidence_search.corpus import SOURCE_KINDS

FRESHNESS = nullable(obj({"status": STRING, "asOf": OPTIONAL_TIME, "ageDays": nullable(INTEGER)}, "How current it is."))
PROVENANCE = obj(
    {"source": TEXT, "promoterIdentity": TEXT, "generatedAt": OPTIONAL_TIME}, "Where it came from and when."
)
COVERAGE = obj(
    {
        "evidenceCount": INTEGER,
        "providerCount": INTEGER,
        "missing": described(array(STRING), "What nothing covers."),
    },
    "How well evidence covers it.",
)
PACKAGE = obj(
    {
        "id": STRING,
        "status": enum(PACKAGE_STATUSES),
        "term": STRING,
        "summary": STRING,
        "contributionType": enum(CONTRIBUTION_TYPES),
        "classification": STRING,
        "scope": obj({"projectId": TEXT, "engagementId": TEXT, "adoptionWorkspaceId": TEXT}),
        "freshness": FRESHNESS,
        "provenance": PROVENANCE,
        "coverage": COVERAGE,
        "supersedes": TEXT,
        "supersededBy": TEXT,
        "createdAt": TIME,
        "updatedAt": TIME,
    },
    "A governed context package: a term and its summary, with scope, freshness, provenance and coverage.",
)
EVIDENCE = obj(
    {
        "id": STRING,
        "provider": STRING,
        "capability": STRING,
        "asOf": OPTIONAL_TIME,
        "freshness": FRESHNESS,
        "reference": obj(
            {"kind": STRING, "id": STRING, "class": STRING, "href": TEXT},
            "What the evidence points at, and where to open it.",
        ),
        "provenance": PROVENANCE,
    },
    "A policy-safe evidence reference: what it points at, never a body or an excerpt.",
)
PROVIDER = obj(
    {
        "id": STRING,
        "name": STRING,
        "classification": STRING,
        "capabilities": array(STRING),
        "contributionCount": INTEGER,
        "coverageStatus": STRING,
        "freshnessStatus": TEXT,
        "authority": STRING,
    },
    "A provider contributing context, with counts over what the caller may see.",
)
CLAIM = obj(
    {
        "text": STRING,
        "packageId": STRING,
        "projectId": TEXT,
        "term": STRING,
        "contributionType": STRING,
        "relevance": NUMBER,
        "evidenceRefs": array(EVIDENCE),
        "freshness": FRESHNESS,
        "provenance": PROVENANCE,
    },
    "A claim: a context package's summary with its evidence references.",
)
BRIEFING = obj(
    {
        "subject": SUBJECT,
        "question": STRING,
        "answer": TEXT,
        "findings": array(CLAIM),
        "risks": array(CLAIM),
        "blockers": array(CLAIM),
        "coverage": COVERAGE,
        "freshness": FRESHNESS,
        "provenance": array(PROVENANCE),
        "asOf": OPTIONAL_TIME,
    },
    "A deterministic, evidence-backed briefing.",
)
COUNTS = obj({"byStatus": OPEN_OBJECT, "byType": OPEN_OBJECT}, "Packages by status and by contribution type.")
OVERVIEW = obj(
    {
        "subject": nullable(SUBJECT),
        "projects": array(
            obj(
                {
                    "projectId": STRING,
                    "key": STRING,
                    "name": STRING,
                    "engagementId": TEXT,
                    "counts": COUNTS,
                    "coverage": COVERAGE,
                    "freshness": FRESHNESS,
                }
            )
        ),
        "counts": COUNTS,
        "coverage": obj({"evidenceCount": INTEGER, "providerCount": INTEGER}),
        "freshness": FRESHNESS,
        "providers": array(PROVIDER),
    },
    "Coverage and freshness per project, totals, and the contributing providers.",
)
SPAN = obj({"start": INTEGER, "end": INTEGER}, "Character offsets in the passage's document.")
PLACE: dict[str, Schema] = {
    "page": nullable(INTEGER),
    "paragraph": nullable(INTEGER),
    "section": TEXT,
    "span": SPAN,
    "text": described(STRING, "The passage exactly as stored."),
}
PASSAGE_HIT = obj(
    {
        "id": STRING,
        "projectId": STRING,
        "source": obj({"id": STRING, "title": TEXT, "uri": TEXT, "kind": enum(SOURCE_KINDS), "versionId": STRING}),
        **PLACE,
        "score": NUMBER,
        "highlights": array(SPAN),
        "provenanceQuality": STRING,
        "segmenterVersion": TEXT,
    },
    "A ranked passage: exact stored text with its source, place, score and highlights.",
)
DOCUMENT_DATE: dict[str, Schema] = {
    "documentDate": described(OPTIONAL_TIME, "The document's own date, else when it was ingested."),
    "documentDateSource": described(TEXT, "Where `documentDate` came from."),
    "ingestedAt": OPTIONAL_TIME,
}
PASSAGE = obj(
    {
        "id": STRING,
        "projectId": STRING,
        "source": obj(
            {
                "id": STRING,
                "title": TEXT,
                "uri": TEXT,
                "kind": enum(SOURCE_KINDS),
                "classification": STRING,
                "versionId": STRING,
                **DOCUMENT_DATE,
            }
        ),
        **PLACE,
        "provenanceQuality": STRING,
        "segmenterVersion": TEXT,
        "previousPassageId": TEXT,
        "nextPassageId": TEXT,
    },
    "An opened passage: exactly as stored, with its source, place, provenance quality and neighbours.",
)
SOURCE = obj(
    {
        "id": STRING,
        "projectId": STRING,
        "uri": TEXT,
        "title": TEXT,
        "kind": enum(SOURCE_KINDS, optional=True),
        "classification": STRING,
        "activeVersionId": TEXT,
        **DOCUMENT_DATE,
        "passageCount": nullable(INTEGER),
        "createdAt": TIME,
        "updatedAt": TIME,
    },
    "A corpus source with its serving version's dates and passage count.",
)

OUTPUTS: dict[str, Schema] = {
    "query_context": one(BRIEFING, "The briefing."),
    "get_context_overview": one(OVERVIEW, "The overview."),
    "list_context_packages": listing(PACKAGE, "A page of context packages, newest first."),
    "get_context_package": one(PACKAGE, "One context package."),
    "get_package_evidence": listing(EVIDENCE, "A page of a package's evidence references."),
    "list_context_providers": listing(PROVIDER, "A page of contributing providers."),
    "search_context_packages": obj(
        {
            "data": obj(
                {
                    "totalCount": INTEGER,
                    "truncated": BOOLEAN,
                    "nodes": array(obj({"score": NUMBER, "package": PACKAGE})),
                }
            ),
            "page": PAGE,
        },
        "Ranked context packages.",
    ),
    "get_passage": one(PASSAGE, "The passage."),
    "list_sources": listing(SOURCE, "A page of corpus sources, newest first."),
    "search_context": listing(
        PASSAGE_HIT,
        "A page of ranked passages.",
        truncated=described(BOOLEAN, "Whether the matches were cut at the ranking cap."),
        totalCount=described(INTEGER, "How many passages match (up to the cap)."),
    ),
}
