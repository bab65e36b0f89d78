"""Context engine rows: providers, contributions, entries with their evidence, and the package index log."""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from asyncpg import Record

from groundwork.domain.context_engine.contribution import ContributionInput, EvidenceInput
from groundwork.domain.ids import new_id
from groundwork.persistence import db

# Any constants work; every process appending to the log (or deciding on a term) takes the same ones.
_INDEX_LOG_LOCK = 7_301_942_311
_TERM_LOCK_SPACE = 7_301


# -- providers --------------------------------------------------------------------------------------------


async def upsert_provider(
    *,
    workspace_id: str,
    name: str,
    classification: str,
    capabilities: list[str],
    authority: str,
    builtin: bool,
    registered_by: str | None,
) -> tuple[dict[str, Any], bool]:
    """Register a provider by name (updating capabilities and authority if it exists); (row, created now)."""
    row = await db.fetchrow(
        """
        INSERT INTO context_providers (id, workspace_id, name, classification, capabilities, authority, builtin,
                                       registered_by)
        VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
        ON CONFLICT (workspace_id, name) DO UPDATE
            SET capabilities = EXCLUDED.capabilities, authority = EXCLUDED.authority,
                updated_at = CASE WHEN context_providers.capabilities = EXCLUDED.capabilities
                                   AND context_providers.authority = EXCLUDED.authority
                                  THEN context_providers.updated_at ELSE clock_timestamp() END
        RETURNING *, (xmax = 0) AS created
        """,
        new_id("prov"),
        workspace_id,
        name,
        classification,
        capabilities,
        authority,
        builtin,
        registered_by,
    )
    assert row is not None
    result = dict(row)
    return result, bool(result.pop("created"))


async def get_provider(provider_id: str) -> dict[str, Any] | None:
    """A provider by id."""
    row = await db.fetchrow("SELECT * FROM context_providers WHERE id = $1", provider_id)
    return dict(row) if row else None


async def get_provider_by_name(workspace_id: str, name: str) -> dict[str, Any] | None:
    """A provider of the workspace by name."""
    row = await db.fetchrow("SELECT * FROM context_providers WHERE workspace_id = $1 AND name = $2", workspace_id, name)
    return dict(row) if row else None


async def providers_of_workspace(workspace_id: str) -> list[dict[str, Any]]:
    """Every provider of a workspace, by name."""
    rows = await db.fetch("SELECT * FROM context_providers WHERE workspace_id = $1 ORDER BY name", workspace_id)
    return [dict(r) for r in rows]


async def workspaces() -> list[dict[str, Any]]:
    """Every workspace (id, slug), for the built-in providers' runs."""
    return [dict(r) for r in await db.fetch("SELECT id, slug FROM workspaces ORDER BY slug")]


async def projects_of_workspace(workspace_id: str) -> list[dict[str, Any]]:
    """Every project of a workspace (id, key), by key."""
    rows = await db.fetch("SELECT id, key FROM projects WHERE workspace_id = $1 ORDER BY key", workspace_id)
    return [dict(r) for r in rows]


# -- contributions ----------------------------------------------------------------------------------------


async def insert_contribution(
    *,
    contribution_id: str,
    workspace_id: str,
    contribution: ContributionInput,
    fingerprint: str,
    content_fingerprint: str,
    term_key: str,
    classification: str,
    promoter_identity: str,
    received_by: str | None,
) -> bool:
    """Persist a contribution once; False when it was already persisted."""
    row = await db.fetchrow(
        """
        INSERT INTO context_contributions (id, workspace_id, provider_id, project_id, fingerprint, content_fingerprint,
            body, term_key, contribution_type, classification, promoter_identity, generated_at, state, received_by)
        VALUES ($1, $2, $3, $4, $5, $6, $7::jsonb, $8, $9, $10, $11, $12, 'persisted', $13)
        ON CONFLICT (provider_id, fingerprint) DO NOTHING RETURNING id
        """,
        contribution_id,
        workspace_id,
        contribution.provider_id,
        contribution.project_id,
        fingerprint,
        content_fingerprint,
        json.dumps(contribution.as_dict()),
        term_key,
        contribution.contribution_type,
        classification,
        promoter_identity,
        contribution.generated_at,
        received_by,
    )
    return row is not None


def _contribution(row: Any) -> dict[str, Any]:
    result = dict(row)
    result["body"] = json.loads(result["body"])
    return result


async def get_contribution(contribution_id: str, *, for_update: bool = False) -> dict[str, Any] | None:
    """A contribution by id; `for_update` locks it until commit."""
    lock = " FOR UPDATE" if for_update else ""
    row = await db.fetchrow(f"SELECT * FROM context_contributions WHERE id = $1{lock}", contribution_id)
    return _contribution(row) if row else None


async def existing_contribution_ids(ids: list[str]) -> set[str]:
    """The subset of `ids` already persisted."""
    rows = await db.fetch("SELECT id FROM context_contributions WHERE id = ANY($1::text[])", ids)
    return {r["id"] for r in rows}


async def latest_contributions_by_key(provider_id: str, project_id: str) -> dict[tuple[str, str, str], dict[str, Any]]:
    """A provider's newest contribution in a project per (normalised term, type, class), with its entry's status."""
    rows = await db.fetch(
        """
        SELECT DISTINCT ON (c.term_key, c.contribution_type, c.classification)
               c.id, c.term_key, c.contribution_type, c.classification, c.content_fingerprint, c.entry_id,
               e.status AS entry_status
        FROM context_contributions c LEFT JOIN context_entries e ON e.id = c.entry_id
        WHERE c.provider_id = $1 AND c.project_id = $2
        ORDER BY c.term_key, c.contribution_type, c.classification, c.created_at DESC, c.id DESC
        """,
        provider_id,
        project_id,
    )
    return {(r["term_key"], r["contribution_type"], r["classification"]): dict(r) for r in rows}


async def set_contribution_decided(
    contribution_id: str, decision: str, entry_id: str, related_entry_id: str | None
) -> None:
    """Record the merge decision and the entry it concerns."""
    await db.execute(
        "UPDATE context_contributions SET state = 'decided', decision = $2, entry_id = $3, related_entry_id = $4,"
        " decided_at = clock_timestamp() WHERE id = $1",
        contribution_id,
        decision,
        entry_id,
        related_entry_id,
    )


async def set_contribution_applied(contribution_id: str) -> None:
    """The decision is applied: the entry serves (or the merge is in)."""
    await db.execute(
        "UPDATE context_contributions SET state = 'applied', applied_at = clock_timestamp() WHERE id = $1",
        contribution_id,
    )


# -- entries ----------------------------------------------------------------------------------------------


async def lock_term(project_id: str, term_key: str) -> None:
    """Serialise merge decisions on one term of one project until commit."""
    await db.execute("SELECT pg_advisory_xact_lock($1, hashtext($2))", _TERM_LOCK_SPACE, f"{project_id}/{term_key}")


async def current_entries_with_term(project_id: str, term_key: str) -> list[dict[str, Any]]:
    """Pending and ready entries of a project with this normalised term."""
    rows = await db.fetch(
        "SELECT id, project_id, term_key, contribution_type, classification, authority, status FROM context_entries"
        " WHERE project_id = $1 AND term_key = $2 AND status IN ('pending', 'ready') ORDER BY id",
        project_id,
        term_key,
    )
    return [dict(r) for r in rows]


async def get_entry(entry_id: str, *, for_update: bool = False) -> dict[str, Any] | None:
    """An entry by id, any status; `for_update` locks it until commit."""
    lock = " FOR UPDATE" if for_update else ""
    row = await db.fetchrow(f"SELECT * FROM context_entries WHERE id = $1{lock}", entry_id)
    return dict(row) if row else None


async def entry_project_id(entry_id: str) -> str | None:
    """The project an entry belongs to (the notifications service finds its leads by it)."""
    row = await db.fetchrow("SELECT project_id FROM context_entries WHERE id = $1", entry_id)
    return row["project_id"] if row else None


async def insert_entry(
    *,
    entry_id: str,
    workspace_id: str,
    contribution: ContributionInput,
    term_key: str,
    classification: str,
    authority: str,
    promoter_identity: str,
    supersedes: str | None,
) -> None:
    """A new `pending` entry (it serves once the decision is applied)."""
    await db.execute(
        """
        INSERT INTO context_entries (id, workspace_id, project_id, term, term_key, summary, contribution_type,
            classification, authority, status, provider_id, promoter_identity, generated_at, as_of, supersedes)
        VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, 'pending', $10, $11, $12, $13, $14)
        ON CONFLICT (id) DO NOTHING
        """,
        entry_id,
        workspace_id,
        contribution.project_id,
        contribution.term,
        term_key,
        contribution.summary,
        contribution.contribution_type,
        classification,
        authority,
        contribution.provider_id,
        promoter_identity,
        contribution.generated_at,
        max(e.as_of for e in contribution.evidence),
        supersedes,
    )


async def add_evidence(
    entry_id: str, contribution_id: str, provider_id: str, evidence: tuple[EvidenceInput, ...]
) -> None:
    """Attach a contribution's evidence to an entry and refresh the entry's counts and `as_of`."""
    await db.execute(
        """
        INSERT INTO context_evidence (id, entry_id, contribution_id, provider_id, capability, reference_kind,
            reference_id, reference_class, as_of)
        SELECT u.id, $2, $3, $4, u.capability, u.kind, u.ref_id, u.ref_class, u.as_of
        FROM unnest($1::text[], $5::text[], $6::text[], $7::text[], $8::text[], $9::timestamptz[])
            AS u(id, capability, kind, ref_id, ref_class, as_of)
        ON CONFLICT (entry_id, contribution_id, capability, reference_kind, reference_id) DO NOTHING
        """,
        [new_id("ev") for _ in evidence],
        entry_id,
        contribution_id,
        provider_id,
        [e.capability for e in evidence],
        [e.kind for e in evidence],
        [e.reference_id for e in evidence],
        [e.reference_class for e in evidence],
        [e.as_of for e in evidence],
    )
    await db.execute(
        """
        UPDATE context_entries e SET evidence_count = s.n, provider_ids = s.providers, as_of = s.as_of,
            updated_at = clock_timestamp()
        FROM (SELECT count(*) AS n, array_agg(DISTINCT provider_id ORDER BY provider_id) AS providers,
                     max(as_of) AS as_of FROM context_evidence WHERE entry_id = $1) s
        WHERE e.id = $1
        """,
        entry_id,
    )


async def set_entry_ready(entry_id: str) -> bool:
    """A pending entry starts serving; False if it was not pending (already ready, or superseded meanwhile)."""
    row = await db.fetchrow(
        "UPDATE context_entries SET status = 'ready', updated_at = clock_timestamp()"
        " WHERE id = $1 AND status = 'pending' RETURNING id",
        entry_id,
    )
    return row is not None


async def supersede_entry(old_id: str, successor_id: str) -> bool:
    """Mark a current entry superseded by its successor; False if it was no longer current."""
    row = await db.fetchrow(
        "UPDATE context_entries SET status = 'superseded', superseded_by = $2, superseded_at = clock_timestamp(),"
        " updated_at = clock_timestamp() WHERE id = $1 AND status IN ('pending', 'ready') RETURNING id",
        old_id,
        successor_id,
    )
    return row is not None


# -- the package index change log ---------------------------------------------------------------------------


async def append_index_entries(entry_ids: list[str]) -> int:
    """Log that these entries changed (call in the transaction of the change); returns the log position."""
    await db.execute("SELECT pg_advisory_xact_lock($1)", _INDEX_LOG_LOCK)
    row = await db.fetchrow(
        "INSERT INTO context_entry_index_log (entry_ids) VALUES ($1::text[]) RETURNING seq", sorted(set(entry_ids))
    )
    assert row is not None
    return int(row["seq"])


async def index_changes_after(seq: int, limit: int) -> list[tuple[int, list[str]]]:
    """Logged changes after `seq`, in order."""
    rows = await db.fetch(
        "SELECT seq, entry_ids FROM context_entry_index_log WHERE seq > $1 ORDER BY seq LIMIT $2", seq, limit
    )
    return [(int(r["seq"]), list(r["entry_ids"])) for r in rows]


async def last_index_change() -> int:
    """The newest log position (0 when empty)."""
    row = await db.fetchrow("SELECT coalesce(max(seq), 0) AS seq FROM context_entry_index_log")
    return int(row["seq"]) if row else 0


@dataclass(frozen=True, slots=True)
class IndexableEntryRow:
    """An entry as the package index holds it: its key (`seq`), what a query matches, what search filters on."""

    seq: int
    entry_id: str
    workspace_id: str
    project_id: str
    term: str
    summary: str
    contribution_type: str
    classification: str
    status: str


_INDEXABLE = (
    "SELECT id AS entry_id, seq, workspace_id, project_id, term, summary, contribution_type, classification, status"
    " FROM context_entries"
)


def _indexable(row: Record) -> IndexableEntryRow:
    return IndexableEntryRow(
        seq=row["seq"],
        entry_id=row["entry_id"],
        workspace_id=row["workspace_id"],
        project_id=row["project_id"],
        term=row["term"],
        summary=row["summary"],
        contribution_type=row["contribution_type"],
        classification=row["classification"],
        status=row["status"],
    )


async def indexable_entries(entry_ids: list[str]) -> list[IndexableEntryRow]:
    """The given entries as the index needs them (any status: the follower keeps only `ready`)."""
    rows = await db.fetch(_INDEXABLE + " WHERE id = ANY($1::text[])", entry_ids)
    return [_indexable(r) for r in rows]


async def ready_entries_after(after_seq: int, limit: int) -> list[IndexableEntryRow]:
    """The next ready entries, for a rebuild."""
    rows = await db.fetch(_INDEXABLE + " WHERE status = 'ready' AND seq > $1 ORDER BY seq LIMIT $2", after_seq, limit)
    return [_indexable(r) for r in rows]


async def count_ready_entries() -> int:
    """How many entries a rebuild writes."""
    row = await db.fetchrow("SELECT count(*) AS n FROM context_entries WHERE status = 'ready'")
    return int(row["n"]) if row else 0


# -- reads --------------------------------------------------------------------------------------------------

_ENTRY_COLUMNS = """
    e.id, e.seq, e.workspace_id, e.project_id, p.engagement_id, e.term, e.summary, e.contribution_type,
    e.classification, e.authority, e.status, e.provider_id, v.name AS provider_name, e.promoter_identity,
    e.generated_at, e.as_of, e.evidence_count, e.provider_ids, e.supersedes, e.superseded_by, e.created_at,
    e.updated_at
"""
_ENTRY_FROM = """
    FROM context_entries e
    JOIN projects p ON p.id = e.project_id
    JOIN context_providers v ON v.id = e.provider_id
"""


@dataclass(frozen=True)
class EntryFilter:
    """Which entries a read may return: the caller's projects and classes, and the list filters."""

    workspace_id: str
    project_ids: list[str]
    classes: list[str]
    statuses: list[str]  # of ready, stale, superseded
    contribution_type: str | None
    stale_before: datetime  # `as_of` at or before this instant makes a ready entry stale


def _status_clause(first: int) -> str:
    # ready/stale are the stored `ready` split by age at read time; superseded is stored.
    return f"""(
        (e.status = 'superseded' AND 'superseded' = ANY(${first}::text[]))
        OR (e.status = 'ready' AND e.as_of > ${first + 1} AND 'ready' = ANY(${first}::text[]))
        OR (e.status = 'ready' AND e.as_of <= ${first + 1} AND 'stale' = ANY(${first}::text[])))"""


async def list_entries(where: EntryFilter, *, after_id: str | None, limit: int) -> list[dict[str, Any]]:
    """Visible entries, newest first, after the keyset position `after_id`."""
    rows = await db.fetch(
        f"""
        SELECT {_ENTRY_COLUMNS} {_ENTRY_FROM}
        WHERE e.workspace_id = $1 AND e.project_id = ANY($2::text[]) AND e.classification = ANY($3::text[])
          AND {_status_clause(4)}
          AND ($6::text IS NULL OR e.contribution_type = $6) AND ($7::text IS NULL OR e.id < $7)
        ORDER BY e.id DESC LIMIT $8
        """,
        where.workspace_id,
        where.project_ids,
        where.classes,
        where.statuses,
        where.stale_before,
        where.contribution_type,
        after_id,
        limit,
    )
    return [dict(r) for r in rows]


async def entry_for_read(workspace_id: str, entry_id: str) -> dict[str, Any] | None:
    """One shown entry (ready or superseded) of the workspace; visibility is the caller's to check."""
    row = await db.fetchrow(
        f"SELECT {_ENTRY_COLUMNS} {_ENTRY_FROM} WHERE e.id = $1 AND e.workspace_id = $2 AND e.status <> 'pending'",
        entry_id,
        workspace_id,
    )
    return dict(row) if row else None


async def entries_by_seq(
    workspace_id: str, seqs: list[int], project_ids: list[str], classes: list[str]
) -> dict[int, dict[str, Any]]:
    """Ready entries for index hits, re-checked against PostgreSQL (the truth) and the caller's reach."""
    rows = await db.fetch(
        f"""
        SELECT {_ENTRY_COLUMNS} {_ENTRY_FROM}
        WHERE e.seq = ANY($2::bigint[]) AND e.workspace_id = $1 AND e.project_id = ANY($3::text[])
          AND e.classification = ANY($4::text[]) AND e.status = 'ready'
        """,
        workspace_id,
        seqs,
        project_ids,
        classes,
    )
    return {int(r["seq"]): dict(r) for r in rows}


_EVIDENCE_COLUMNS = """
    x.id, x.seq, x.entry_id, x.provider_id, v.name AS provider_name, x.capability, x.reference_kind, x.reference_id,
    x.reference_class, x.as_of, c.promoter_identity, c.generated_at
"""
_EVIDENCE_FROM = """
    FROM context_evidence x
    JOIN context_providers v ON v.id = x.provider_id
    JOIN context_contributions c ON c.id = x.contribution_id
"""


async def evidence_of_entries(entry_ids: list[str]) -> dict[str, list[dict[str, Any]]]:
    """Every evidence reference of the given entries, newest first."""
    rows = await db.fetch(
        f"SELECT {_EVIDENCE_COLUMNS} {_EVIDENCE_FROM} WHERE x.entry_id = ANY($1::text[]) ORDER BY x.seq DESC",
        entry_ids,
    )
    result: dict[str, list[dict[str, Any]]] = {entry_id: [] for entry_id in entry_ids}
    for row in rows:
        result[row["entry_id"]].append(dict(row))
    return result


async def evidence_page(entry_id: str, *, after_seq: int | None, limit: int) -> list[dict[str, Any]]:
    """One entry's evidence references, newest first, after the keyset position."""
    rows = await db.fetch(
        f"SELECT {_EVIDENCE_COLUMNS} {_EVIDENCE_FROM}"
        " WHERE x.entry_id = $1 AND ($2::bigint IS NULL OR x.seq < $2) ORDER BY x.seq DESC LIMIT $3",
        entry_id,
        after_seq,
        limit,
    )
    return [dict(r) for r in rows]


async def provider_activity(workspace_id: str, project_ids: list[str], classes: list[str]) -> list[dict[str, Any]]:
    """Per provider and project: applied contributions to entries of allowed classes, and the newest one."""
    rows = await db.fetch(
        """
        SELECT c.provider_id, c.project_id, count(*) AS contributions, max(c.generated_at) AS newest
        FROM context_contributions c
        WHERE c.workspace_id = $1 AND c.project_id = ANY($2::text[]) AND c.classification = ANY($3::text[])
          AND c.state = 'applied'
        GROUP BY c.provider_id, c.project_id
        """,
        workspace_id,
        project_ids,
        classes,
    )
    return [dict(r) for r in rows]


async def providers_by_project(project_ids: list[str], classes: list[str]) -> list[tuple[str, str]]:
    """(project, provider) pairs with applied contributions of the allowed classes."""
    rows = await db.fetch(
        "SELECT DISTINCT project_id, provider_id FROM context_contributions"
        " WHERE project_id = ANY($1::text[]) AND classification = ANY($2::text[]) AND state = 'applied'",
        project_ids,
        classes,
    )
    return [(r["project_id"], r["provider_id"]) for r in rows]


async def project_overview(
    workspace_id: str, project_ids: list[str], classes: list[str], stale_before: datetime
) -> list[dict[str, Any]]:
    """Per project and type: entries by status (ready, stale, superseded), evidence, providers, newest `as_of`."""
    rows = await db.fetch(
        """
        SELECT e.project_id, e.contribution_type,
               count(*) FILTER (WHERE e.status = 'ready' AND e.as_of > $4) AS ready,
               count(*) FILTER (WHERE e.status = 'ready' AND e.as_of <= $4) AS stale,
               count(*) FILTER (WHERE e.status = 'superseded') AS superseded,
               coalesce(sum(e.evidence_count) FILTER (WHERE e.status = 'ready'), 0) AS evidence,
               max(e.as_of) FILTER (WHERE e.status = 'ready') AS as_of,
               array_remove(array_agg(DISTINCT p.provider) FILTER (WHERE e.status = 'ready'), NULL) AS providers
        FROM context_entries e LEFT JOIN LATERAL unnest(e.provider_ids) AS p(provider) ON true
        WHERE e.workspace_id = $1 AND e.project_id = ANY($2::text[]) AND e.classification = ANY($3::text[])
          AND e.status <> 'pending'
        GROUP BY e.project_id, e.contribution_type
        """,
        workspace_id,
        project_ids,
        classes,
        stale_before,
    )
    return [dict(r) for r in rows]


async def projects_by_id(project_ids: list[str]) -> list[dict[str, Any]]:
    """Projects with their engagement, by key."""
    rows = await db.fetch(
        "SELECT id, key, name, engagement_id FROM projects WHERE id = ANY($1::text[]) ORDER BY key", project_ids
    )
    return [dict(r) for r in rows]


# -- what the built-in providers read ----------------------------------------------------------------------


async def work_items_with_history(project_id: str) -> list[dict[str, Any]]:
    """A project's work items, each with its changes after creation (oldest first)."""
    rows = await db.fetch(
        """
        SELECT w.id, w.key, w.title, w.status, w.sprint, w.version, w.fields,
               coalesce((SELECT json_agg(json_build_object('version_after', c.version_after, 'changed_at', c.changed_at,
                                                          'changes', c.changes) ORDER BY c.id)
                         FROM work_item_changes c WHERE c.work_item_id = w.id AND c.version_before IS NOT NULL),
                        '[]'::json) AS history
        FROM work_items w WHERE w.project_id = $1 ORDER BY w.key
        """,
        project_id,
    )
    result = []
    for r in rows:
        item = dict(r)
        item["fields"] = json.loads(item["fields"])
        item["history"] = json.loads(item["history"])
        result.append(item)
    return result


async def active_passages(project_id: str) -> list[dict[str, Any]]:
    """The passages of a project that serve: active source versions cut by the active segmenter version."""
    rows = await db.fetch(
        """
        SELECT p.id, p.source_id, s.title AS source_title, s.classification, p.section, p.ordinal, p.text,
               v.ingested_at AS as_of
        FROM corpus_passages p
        JOIN corpus_source_versions v ON v.id = p.source_version_id AND v.status = 'active'
        JOIN corpus_segmenters g ON g.id = p.segmenter_id AND g.active
        JOIN corpus_sources s ON s.id = p.source_id
        WHERE p.project_id = $1
        ORDER BY p.source_id, p.ordinal
        """,
        project_id,
    )
    return [dict(r) for r in rows]


# -- references a contribution cites --------------------------------------------------------------------------


async def passage_classes(project_id: str, passage_ids: list[str]) -> dict[str, str]:
    """The class (its source's classification) of each given passage of the project."""
    rows = await db.fetch(
        "SELECT p.id, s.classification FROM corpus_passages p JOIN corpus_sources s ON s.id = p.source_id"
        " WHERE p.project_id = $1 AND p.id = ANY($2::text[])",
        project_id,
        passage_ids,
    )
    return {r["id"]: r["classification"] for r in rows}


async def work_item_ids_in_project(project_id: str, ids: list[str]) -> set[str]:
    """The subset of `ids` that are work items of the project."""
    rows = await db.fetch("SELECT id FROM work_items WHERE project_id = $1 AND id = ANY($2::text[])", project_id, ids)
    return {r["id"] for r in rows}


async def work_item_history_ids(project_id: str, refs: list[tuple[str, datetime]]) -> set[tuple[str, datetime]]:
    """The subset of (work item, version after) pairs that are history entries of the project's items."""
    rows = await db.fetch(
        """
        SELECT c.work_item_id, c.version_after FROM work_item_changes c JOIN work_items w ON w.id = c.work_item_id
        WHERE w.project_id = $1 AND (c.work_item_id, c.version_after) IN (
            SELECT * FROM unnest($2::text[], $3::timestamptz[]))
        """,
        project_id,
        [r[0] for r in refs],
        [r[1] for r in refs],
    )
    return {(r["work_item_id"], r["version_after"]) for r in rows}
