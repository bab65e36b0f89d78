"""The evidence a run's actions draw on: gathered once per run and stored, and a project's reference items."""

from __future__ import annotations

import json
from typing import Any

from groundwork.domain.enhancement.enhancer import CorpusRarity, Evidence, ReferenceItem
from groundwork.domain.enhancement.model import EvidenceRef
from groundwork.persistence import db

StoredEvidence = tuple[list[Evidence], list[ReferenceItem], CorpusRarity | None]


async def store_run_evidence(
    run_id: str, evidence: list[Evidence], references: list[ReferenceItem], rarity: CorpusRarity | None = None
) -> StoredEvidence | None:
    """Keep what a run's actions draw on; the first gathering wins (a retry or a racing one changes nothing).

    Returns the stored copy, exactly as `get_run_evidence` will read it, when this call stored it; None when
    another had already.
    """
    items = [
        {"kind": e.ref.kind, "id": e.ref.id, "text": e.text, "label": e.label, "section": e.section} for e in evidence
    ]
    refs = [{"id": r.id, "key": r.key, "title": r.title, "estimate": r.estimate, "text": r.text} for r in references]
    counted = (
        None
        if rarity is None
        else {"passages": rarity.passages, "frequencies": [[w, n] for w, n in rarity.frequencies]}
    )
    stored = await db.fetchrow(
        "INSERT INTO enhancement_run_evidence (run_id, items, reference_items, rarity)"
        " VALUES ($1, $2::jsonb, $3::jsonb, $4::jsonb) ON CONFLICT (run_id) DO NOTHING RETURNING true AS stored",
        run_id,
        json.dumps(items),
        json.dumps(refs),
        None if counted is None else json.dumps(counted),
    )
    return _run_evidence(items, refs, counted) if stored is not None else None


async def get_run_evidence(run_id: str) -> StoredEvidence | None:
    """The evidence stored for a run, or None when it was never gathered."""
    row = await db.fetchrow(
        "SELECT items, reference_items, rarity FROM enhancement_run_evidence WHERE run_id = $1", run_id
    )
    if row is None:
        return None
    counted = json.loads(row["rarity"]) if row["rarity"] is not None else None
    return _run_evidence(json.loads(row["items"]), json.loads(row["reference_items"]), counted)


def _run_evidence(
    items: list[dict[str, Any]], refs: list[dict[str, Any]], counted: dict[str, Any] | None
) -> StoredEvidence:
    evidence = [Evidence(EvidenceRef(i["kind"], i["id"]), i["text"], i["label"], i.get("section")) for i in items]
    references = [ReferenceItem(r["id"], r["key"], r["title"], float(r["estimate"]), r["text"]) for r in refs]
    rarity = (
        None
        if counted is None
        else CorpusRarity(int(counted["passages"]), tuple((str(w), int(n)) for w, n in counted["frequencies"]))
    )
    return evidence, references, rarity


async def reference_items(project_id: str, exclude_id: str, limit: int = 20) -> list[ReferenceItem]:
    """Done work items of a project with a numeric estimate, newest first: an estimate's reference class."""
    rows = await db.fetch(
        """SELECT id, key, title, fields FROM work_items
        WHERE project_id = $1 AND id <> $2 AND status = 'done' AND jsonb_typeof(fields->'estimate') = 'number'
        ORDER BY id DESC LIMIT $3""",
        project_id,
        exclude_id,
        limit,
    )
    result = []
    for row in rows:
        fields = json.loads(row["fields"]) if isinstance(row["fields"], str) else dict(row["fields"])
        text = "\n\n".join(f"## {k}\n\n{v}" for k, v in fields.items() if isinstance(v, str) and v.strip())
        result.append(ReferenceItem(row["id"], row["key"], row["title"], float(fields["estimate"]), text))
    return result
