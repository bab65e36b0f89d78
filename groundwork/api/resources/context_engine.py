"""JSON shapes of context engine resources (the specs' camelCase names), shared by REST, MCP and the Agent API."""

from __future__ import annotations

from typing import Any

from groundwork.domain.context_engine.briefing import Briefing, Claim
from groundwork.domain.context_engine.model import Freshness
from groundwork.domain.context_engine.views import EvidenceView, PackageView, Provenance, ProviderView
from groundwork.domain.times import format_timestamp, timestamp
from groundwork.persistence.repositories.context_engine.contributions import ContributionRow
from groundwork.persistence.repositories.context_engine.providers import ProviderRow
from groundwork.services.context_engine.contributions import ContributionAnswer
from groundwork.services.context_engine.reads import Overview, PackageSearchResult


def freshness_resource(fresh: Freshness | None) -> dict[str, Any] | None:
    """`{status, asOf, ageDays}`."""
    if fresh is None:
        return None
    return {"status": fresh.status, "asOf": format_timestamp(fresh.as_of), "ageDays": fresh.age_days}


def provenance_resource(provenance: Provenance) -> dict[str, Any]:
    """`{source, promoterIdentity, generatedAt}`."""
    return {
        "source": provenance.source,
        "promoterIdentity": provenance.promoter_identity,
        "generatedAt": format_timestamp(provenance.generated_at),
    }


def package_resource(package: PackageView) -> dict[str, Any]:
    """A context package."""
    return {
        "id": package.id,
        "status": package.status,
        "term": package.term,
        "summary": package.summary,
        "contributionType": package.contribution_type,
        "classification": package.classification,
        "scope": {
            "projectId": package.project_id,
            "engagementId": package.engagement_id,
            "adoptionWorkspaceId": package.workspace_id,
        },
        "freshness": freshness_resource(package.freshness),
        "provenance": provenance_resource(package.provenance),
        "coverage": {
            "evidenceCount": package.evidence_count,
            "providerCount": package.provider_count,
            "missing": list(package.missing),
        },
        "supersedes": package.supersedes,
        "supersededBy": package.superseded_by,
        "createdAt": format_timestamp(package.created_at),
        "updatedAt": format_timestamp(package.updated_at),
    }


def evidence_resource(evidence: EvidenceView) -> dict[str, Any]:
    """A policy-safe evidence reference: what it points at, never a body or an excerpt."""
    return {
        "id": evidence.id,
        "provider": evidence.provider_id,
        "capability": evidence.capability,
        "asOf": format_timestamp(evidence.as_of),
        "freshness": freshness_resource(evidence.freshness),
        "reference": {"kind": evidence.kind, "id": evidence.reference_id, "class": evidence.reference_class},
        "provenance": provenance_resource(evidence.provenance),
    }


def provider_resource(provider: ProviderView) -> dict[str, Any]:
    """A contributing provider with counts over what the caller may see."""
    return {
        "id": provider.id,
        "name": provider.name,
        "classification": provider.classification,
        "capabilities": list(provider.capabilities),
        "contributionCount": provider.contribution_count,
        "coverageStatus": provider.coverage_status,
        "freshnessStatus": provider.freshness_status,
        "authority": provider.authority,
    }


def search_resource(result: PackageSearchResult) -> dict[str, Any]:
    """The package search answer: `{data: {totalCount, truncated, nodes[{score, package}]}, page}`."""
    return {
        "data": {
            "totalCount": result.total_count,
            "truncated": result.truncated,
            "nodes": [{"score": score, "package": package_resource(p)} for score, p in result.nodes],
        },
        "page": result.page,
    }


def _claim(claim: Claim) -> dict[str, Any]:
    return {
        "text": claim.text,
        "packageId": claim.package_id,
        "projectId": claim.project_id,
        "term": claim.term,
        "contributionType": claim.contribution_type,
        "evidenceRefs": [evidence_resource(e) for e in claim.evidence],
        "freshness": freshness_resource(claim.freshness),
        "provenance": provenance_resource(claim.provenance),
    }


def briefing_resource(briefing: Briefing) -> dict[str, Any]:
    """The deterministic briefing: findings, risks, blockers, coverage, freshness, provenance, asOf."""
    return {
        "subject": {"type": briefing.subject_type, "id": briefing.subject_id},
        "question": briefing.question,
        "findings": [_claim(c) for c in briefing.findings],
        "risks": [_claim(c) for c in briefing.risks],
        "blockers": [_claim(c) for c in briefing.blockers],
        "coverage": {
            "evidenceCount": briefing.evidence_count,
            "providerCount": briefing.provider_count,
            "missing": list(briefing.missing),
        },
        "freshness": freshness_resource(briefing.freshness),
        "provenance": [provenance_resource(p) for p in briefing.provenance],
        "asOf": timestamp(briefing.as_of),
    }


def overview_resource(overview: Overview) -> dict[str, Any]:
    """Coverage and freshness per project, totals, and the contributing providers."""
    subject = {"type": overview.subject_type, "id": overview.subject_id} if overview.subject_type is not None else None
    return {
        "subject": subject,
        "projects": [
            {
                "projectId": p.project_id,
                "key": p.key,
                "name": p.name,
                "engagementId": p.engagement_id,
                "counts": {"byStatus": p.by_status, "byType": p.by_type},
                "coverage": {
                    "evidenceCount": p.evidence_count,
                    "providerCount": p.provider_count,
                    "missing": list(p.missing),
                },
                "freshness": freshness_resource(p.freshness),
            }
            for p in overview.projects
        ],
        "counts": {"byStatus": overview.by_status, "byType": overview.by_type},
        "coverage": {"evidenceCount": overview.evidence_count, "providerCount": overview.provider_count},
        "freshness": freshness_resource(overview.freshness),
        "providers": [provider_resource(p) for p in overview.providers],
    }


def internal_provider_resource(row: ProviderRow) -> dict[str, Any]:
    """A registered provider as the internal API shows it."""
    return {
        "id": row.id,
        "name": row.name,
        "classification": row.classification,
        "capabilities": list(row.capabilities),
        "authority": row.authority,
        "builtin": row.builtin,
        "createdAt": timestamp(row.created_at),
        "updatedAt": timestamp(row.updated_at),
    }


def contribution_resource(row: ContributionRow) -> dict[str, Any]:
    """A contribution as the internal API shows it: its state, the decision and the entry it concerns."""
    return {
        "id": row.id,
        "state": row.state,
        "decision": row.decision,
        "entryId": row.entry_id,
        "relatedEntryId": row.related_entry_id,
        "contribution": row.body,
        "createdAt": timestamp(row.created_at),
        "decidedAt": timestamp(row.decided_at),
        "appliedAt": timestamp(row.applied_at),
    }


def answer_resource(answer: ContributionAnswer) -> dict[str, Any]:
    """What a contribution request answers: the contribution as stored, or, not persisted yet, as accepted."""
    if answer.contribution is not None:
        return contribution_resource(answer.contribution)
    return {
        "id": answer.work.contribution_id,
        "state": "received",
        "decision": None,
        "entryId": None,
        "relatedEntryId": None,
        "contribution": answer.work.body,
        "createdAt": None,
        "decidedAt": None,
        "appliedAt": None,
    }
