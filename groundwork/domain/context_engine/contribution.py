"""A provider contribution: its exact body, the rules it must meet, its class and its fingerprint.

Body (DESIGN.md): `{provider_id, project_id, term, summary, contribution_type, evidence: [{capability,
reference: {kind, id, class}, as_of}], generated_at, promoter_identity?, supersedes?}`. Wrong shapes are
`invalid_request` (400); well-formed values that break a rule are `validation_failed` (422).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from groundwork.domain.context_engine.model import (
    CAPABILITY_TYPES,
    CONTENT_CLASSES,
    CONTRIBUTION_TYPES,
    REFERENCE_KINDS,
    RESTRICTED_SCOPES,
    content_class_of_provider,
)
from groundwork.domain.errors import FieldError, InvalidRequest, ValidationFailed
from groundwork.domain.times import TIMESTAMP_ACCEPTED, format_timestamp
from groundwork.domain.work_items import parse_version

MAX_TERM_CHARS = 200
MAX_SUMMARY_CHARS = 2000
MAX_EVIDENCE = 50
MAX_REFERENCE_ID_CHARS = 300
MAX_PROMOTER_CHARS = 200
# Clocks drift: a time up to this far ahead of ours is accepted, anything later is a mistake.
FUTURE_TOLERANCE = timedelta(minutes=5)
FIELDS = (
    "provider_id",
    "project_id",
    "term",
    "summary",
    "contribution_type",
    "evidence",
    "generated_at",
    "promoter_identity",
    "supersedes",
)
_EVIDENCE_FIELDS = ("capability", "reference", "as_of")
_REFERENCE_FIELDS = ("kind", "id", "class")


@dataclass(frozen=True, order=True)
class EvidenceInput:
    """One evidence reference as contributed: what found it, what it points at, how old it is."""

    capability: str
    kind: str
    reference_id: str
    reference_class: str
    as_of: datetime

    def as_dict(self) -> dict[str, Any]:
        """The body form (snake_case, canonical timestamp)."""
        return {
            "capability": self.capability,
            "reference": {"kind": self.kind, "id": self.reference_id, "class": self.reference_class},
            "as_of": format_timestamp(self.as_of),
        }


@dataclass(frozen=True)
class ContributionInput:
    """A contribution that passed the shape and value rules (provider rules are checked separately)."""

    provider_id: str
    project_id: str
    term: str
    summary: str
    contribution_type: str
    evidence: tuple[EvidenceInput, ...]
    generated_at: datetime
    promoter_identity: str | None = None
    supersedes: str | None = None

    def as_dict(self) -> dict[str, Any]:
        """The canonical body: evidence sorted, timestamps in the one spelling, absent options as null."""
        return {
            "provider_id": self.provider_id,
            "project_id": self.project_id,
            "term": self.term,
            "summary": self.summary,
            "contribution_type": self.contribution_type,
            "evidence": [e.as_dict() for e in self.evidence],
            "generated_at": format_timestamp(self.generated_at),
            "promoter_identity": self.promoter_identity,
            "supersedes": self.supersedes,
        }


def fingerprint(contribution: ContributionInput) -> str:
    """What makes two contributions the same: SHA-256 over the canonical body (32 hex characters)."""
    raw = json.dumps(contribution.as_dict(), sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(raw.encode()).hexdigest()[:32]


def contribution_id(provider_id: str, print_: str) -> str:
    """The contribution's id, which is also its workflow id: `ctxc_<provider>_<fingerprint>`."""
    return f"ctxc_{provider_id}_{print_}"


def _text(value: Any, path: str, shape: list[FieldError]) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str):
        shape.append(FieldError(path, "must be a string"))
        return None
    return value


def _bounded(value: str | None, path: str, limit: int, rules: list[FieldError], *, required: bool = True) -> str:
    if value is None:
        if required:
            rules.append(FieldError(path, "is required"))
        return ""
    stripped = value.strip()
    if not stripped or len(stripped) > limit or any(ord(c) < 32 and c not in "\n\t" for c in stripped):
        rules.append(FieldError(path, f"must be 1 to {limit} characters, without control characters"))
    return stripped


def _instant(value: Any, path: str, now: datetime, shape: list[FieldError], rules: list[FieldError]) -> datetime:
    if not isinstance(value, str):
        (shape if value is not None else rules).append(
            FieldError(path, f"must be {TIMESTAMP_ACCEPTED}" if value is not None else "is required")
        )
        return now
    try:
        instant = parse_version(value)
    except ValueError as exc:
        rules.append(FieldError(path, str(exc)))
        return now
    if instant > now + FUTURE_TOLERANCE:
        rules.append(FieldError(path, "must not be in the future"))
    return instant


def _unknown(record: dict[str, Any], allowed: tuple[str, ...], prefix: str, shape: list[FieldError]) -> None:
    for name in sorted(set(record) - set(allowed)):
        shape.append(FieldError(f"{prefix}{name}", "is not a known field"))


def _evidence(raw: Any, now: datetime, shape: list[FieldError], rules: list[FieldError]) -> tuple[EvidenceInput, ...]:
    if raw is None:
        rules.append(FieldError("evidence", "is required: at least one evidence reference"))
        return ()
    if not isinstance(raw, list):
        shape.append(FieldError("evidence", "must be an array"))
        return ()
    if not 1 <= len(raw) <= MAX_EVIDENCE:
        rules.append(FieldError("evidence", f"must hold 1 to {MAX_EVIDENCE} references"))
    items: list[EvidenceInput] = []
    for index, item in enumerate(raw[:MAX_EVIDENCE]):
        path = f"evidence[{index}]"
        if not isinstance(item, dict):
            shape.append(FieldError(path, "must be an object"))
            continue
        _unknown(item, _EVIDENCE_FIELDS, f"{path}.", shape)
        capability = _text(item.get("capability"), f"{path}.capability", shape)
        if capability is not None and capability not in CAPABILITY_TYPES:
            rules.append(FieldError(f"{path}.capability", f"must be one of {', '.join(CAPABILITY_TYPES)}"))
        reference = item.get("reference")
        if not isinstance(reference, dict):
            (shape if reference is not None else rules).append(
                FieldError(f"{path}.reference", "must be an object" if reference is not None else "is required")
            )
            continue
        _unknown(reference, _REFERENCE_FIELDS, f"{path}.reference.", shape)
        kind = _text(reference.get("kind"), f"{path}.reference.kind", shape)
        if kind is not None and kind not in REFERENCE_KINDS:
            rules.append(FieldError(f"{path}.reference.kind", f"must be one of {', '.join(REFERENCE_KINDS)}"))
        ref_id = _bounded(
            _text(reference.get("id"), f"{path}.reference.id", shape),
            f"{path}.reference.id",
            MAX_REFERENCE_ID_CHARS,
            rules,
        )
        ref_class = _text(reference.get("class"), f"{path}.reference.class", shape) or "general"
        if ref_class not in CONTENT_CLASSES:
            rules.append(FieldError(f"{path}.reference.class", f"must be one of {', '.join(CONTENT_CLASSES)}"))
        as_of = _instant(item.get("as_of"), f"{path}.as_of", now, shape, rules)
        items.append(EvidenceInput(capability or "", kind or "", ref_id, ref_class, as_of))
    if len(set(items)) != len(items):
        rules.append(FieldError("evidence", "lists the same reference twice"))
    return tuple(sorted(set(items)))


def parse_contribution(record: Any, *, now: datetime) -> ContributionInput:
    """Check a contribution body; 400 for wrong shapes, 422 for values that break a rule."""
    if not isinstance(record, dict):
        raise InvalidRequest("A contribution is a JSON object.", [FieldError("body", "must be an object")])
    shape: list[FieldError] = []
    rules: list[FieldError] = []
    _unknown(record, FIELDS, "", shape)
    provider_id = _bounded(_text(record.get("provider_id"), "provider_id", shape), "provider_id", 100, rules)
    project_id = _bounded(_text(record.get("project_id"), "project_id", shape), "project_id", 100, rules)
    term = _bounded(_text(record.get("term"), "term", shape), "term", MAX_TERM_CHARS, rules)
    summary = _bounded(_text(record.get("summary"), "summary", shape), "summary", MAX_SUMMARY_CHARS, rules)
    kind = _text(record.get("contribution_type"), "contribution_type", shape)
    if kind not in CONTRIBUTION_TYPES and not (kind is None and shape):
        rules.append(FieldError("contribution_type", f"must be one of {', '.join(CONTRIBUTION_TYPES)}"))
    evidence = _evidence(record.get("evidence"), now, shape, rules)
    generated_at = _instant(record.get("generated_at"), "generated_at", now, shape, rules)
    promoter = _text(record.get("promoter_identity"), "promoter_identity", shape)
    promoter_identity = (
        _bounded(promoter, "promoter_identity", MAX_PROMOTER_CHARS, rules) if promoter is not None else None
    )
    supersedes = _text(record.get("supersedes"), "supersedes", shape)
    if supersedes is not None and not supersedes.startswith("pkg_"):
        rules.append(FieldError("supersedes", "must be the id of a context package (pkg_...)"))
    if shape:
        raise InvalidRequest("The contribution is not valid.", shape)
    if rules:
        raise ValidationFailed("The contribution is not valid.", rules)
    return ContributionInput(
        provider_id=provider_id,
        project_id=project_id,
        term=term,
        summary=summary,
        contribution_type=kind or "",
        evidence=evidence,
        generated_at=generated_at,
        promoter_identity=promoter_identity,
        supersedes=supersedes,
    )


def provider_rule_errors(
    contribution: ContributionInput, capabilities: tuple[str, ...], classification: str
) -> list[FieldError]:
    """What the contribution asks that its provider may not: capabilities it lacks, mixed restricted classes."""
    errors: list[FieldError] = []
    for index, item in enumerate(contribution.evidence):
        if item.capability not in capabilities:
            errors.append(FieldError(f"evidence[{index}].capability", "is not a capability of the provider"))
        elif CAPABILITY_TYPES[item.capability] != contribution.contribution_type:
            errors.append(
                FieldError(
                    f"evidence[{index}].capability",
                    f"finds {CAPABILITY_TYPES[item.capability]} contributions, not {contribution.contribution_type}",
                )
            )
    if len(restricted_classes(contribution, classification)) > 1:
        errors.append(FieldError("evidence", "mixes financial and staffing content: contribute each separately"))
    return errors


def restricted_classes(contribution: ContributionInput, provider_classification: str) -> set[str]:
    """The restricted classes the contribution carries, from its provider and its evidence."""
    found = {e.reference_class for e in contribution.evidence if e.reference_class in RESTRICTED_SCOPES}
    provider_class = content_class_of_provider(provider_classification)
    if provider_class != "general":
        found.add(provider_class)
    return found


def contribution_class(contribution: ContributionInput, provider_classification: str) -> str:
    """The class of the entry a contribution feeds: its one restricted class, else `general`."""
    found = restricted_classes(contribution, provider_classification)
    return next(iter(found)) if len(found) == 1 else "general"


def newest_evidence(contribution: ContributionInput) -> datetime:
    """The newest `as_of` among the evidence (every contribution has at least one)."""
    return max(e.as_of for e in contribution.evidence)
