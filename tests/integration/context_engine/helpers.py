"""Helpers for context engine tests: register providers and contribute through the internal API, read via REST."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import httpx

from groundwork.domain.times import format_timestamp
from groundwork.persistence import db
from tests.conftest import Workspace, idem

CONTEXT_EVENTS = (
    "context_engine.contribution_persisted",
    "context_engine.merge_decided",
    "context_engine.entry_superseded",
)


def days_ago(days: float) -> str:
    """An ISO timestamp `days` before now."""
    return format_timestamp(datetime.now(UTC) - timedelta(days=days))


async def register(
    workspace: Workspace,
    name: str,
    classification: str = "delivery",
    capabilities: list[str] | None = None,
    authority: str = "advisory",
    expect: int = 201,
) -> dict[str, Any]:
    """Register a provider through the internal API as the workspace's provider principal; its `data`."""
    response = await workspace.internal.post(
        "/internal/v1/context-engine/providers",
        json={
            "name": name,
            "classification": classification,
            "capabilities": capabilities or ["risks", "findings", "blockers", "decisions"],
            "authority": authority,
        },
        headers=workspace.headers(await workspace.provider_key(), **idem()),
    )
    assert response.status_code == expect, response.text
    return response.json()["data"]


def evidence(
    capability: str = "risks",
    ref: str = "ext-1",
    kind: str = "external",
    cls: str = "general",
    as_of: str | None = None,
) -> dict[str, Any]:
    """One evidence reference of a contribution body."""
    return {
        "capability": capability,
        "reference": {"kind": kind, "id": ref, "class": cls},
        "as_of": as_of or days_ago(1),
    }


def body(
    provider: dict[str, Any],
    project_id: str,
    term: str,
    summary: str,
    contribution_type: str = "risk",
    items: list[dict[str, Any]] | None = None,
    **extra: Any,
) -> dict[str, Any]:
    """A contribution body."""
    items = items or [evidence()]
    return {
        "provider_id": provider["id"],
        "project_id": project_id,
        "term": term,
        "summary": summary,
        "contribution_type": contribution_type,
        "evidence": items,
        "generated_at": max(i["as_of"] for i in items),
        **extra,
    }


async def contribute(workspace: Workspace, payload: dict[str, Any], expect: int = 201) -> dict[str, Any]:
    """POST a contribution to the internal API (waiting for it) and return the answer's `data`."""
    response = await workspace.internal.post(
        "/internal/v1/context-engine/contributions",
        params={"wait": 30},
        json=payload,
        headers=workspace.headers(await workspace.provider_key(), **idem()),
    )
    assert response.status_code == expect, response.text
    return response.json()["data"]


async def get(
    client: httpx.AsyncClient, workspace: Workspace, key: str, path: str, expect: int = 200, **params: Any
) -> Any:
    """GET a context engine path and return the JSON answer."""
    response = await client.get(
        path, params={k: v for k, v in params.items() if v is not None}, headers=workspace.headers(key)
    )
    assert response.status_code == expect, response.text
    return response.json()


async def brief(
    client: httpx.AsyncClient, workspace: Workspace, key: str, question: str, expect: int = 200, **target: Any
) -> httpx.Response:
    """POST /api/v1/context/query and return the raw response."""
    response = await client.post(
        "/api/v1/context/query", json={"question": question, **target}, headers=workspace.headers(key)
    )
    assert response.status_code == expect, response.text
    return response


async def context_events(workspace: Workspace) -> list[dict[str, Any]]:
    """The context engine's outbox events of the workspace, in commit order."""
    rows = await db.fetch(
        "SELECT type, resource_type, resource_id, workspace_id, payload FROM outbox"
        " WHERE workspace_id = $1 AND type LIKE 'context_engine.%' ORDER BY id",
        workspace.id,
    )
    import json

    return [{**dict(r), "payload": json.loads(r["payload"])} for r in rows]


async def outbox_size(workspace: Workspace) -> int:
    """How many events the workspace has, of any type."""
    row = await db.fetchrow("SELECT count(*) AS n FROM outbox WHERE workspace_id = $1", workspace.id)
    assert row is not None
    return int(row["n"])


async def engagement_of(workspace: Workspace) -> str:
    """The engagement both test projects belong to."""
    row = await db.fetchrow("SELECT engagement_id FROM projects WHERE id = $1", workspace.projects["ALPHA"])
    assert row is not None
    return str(row["engagement_id"])
