"""services/context_engine/agent_read_models: the Agent API answers directional signals only: a walk over every
response of every endpoint finds nothing but allow-listed field names, and no rate, money, invoice data, name, e-mail
or principal id."""

from __future__ import annotations

import re
from typing import Any

import httpx

from groundwork.services.context_engine.providers import run_builtin_providers
from tests.conftest import Workspace, idem
from tests.integration.context_engine.helpers import body, contribute, get, register

ALLOWED_FIELDS = {
    "data",
    "page",
    "nextCursor",
    "hasMore",
    "next_cursor",
    "has_more",
    "id",
    "key",
    "projectId",
    "engagementId",
    "health",
    "throughputTrend",
    "riskTrend",
    "windowDays",
    "workItems",
    "total",
    "open",
    "byStatus",
    "backlog",
    "todo",
    "in_progress",
    "in_review",
    "done",
    "doneRatio",
    "inProgressRatio",
    "notStartedRatio",
    "throughput",
    "completedRecent",
    "completedPrevious",
    "trend",
    "scope",
    "addedRecent",
    "addedPrevious",
    "changedRecent",
    "changedPrevious",
    "blockers",
    "blockedRatio",
    "sprint",
    "risks",
    "dependencies",
    "stale",
    "newRecent",
    "newPrevious",
}
ENUMS = {"health": {"on_track", "at_risk", "off_track"}, "trend": {"rising", "steady", "falling"}}
EMAIL = re.compile(r"[^@\s]+@[^@\s]+\.[a-z]{2,}", re.IGNORECASE)
MONEY = re.compile(r"[£$€]|\b(?:EUR|GBP|USD)\b|invoice|rate", re.IGNORECASE)


def _walk(value: Any, path: str, found: list[str], names: set[str]) -> None:
    if isinstance(value, dict):
        for name, child in value.items():
            if name not in ALLOWED_FIELDS:
                found.append(f"{path}.{name}: field not allowed")
            if (name.endswith("Trend") or name == "trend") and child not in ENUMS["trend"]:
                found.append(f"{path}.{name}: {child!r} is not a trend")
            if name == "health" and child not in ENUMS["health"]:
                found.append(f"{path}.{name}: {child!r} is not a health")
            _walk(child, f"{path}.{name}", found, names)
    elif isinstance(value, list):
        for index, child in enumerate(value):
            _walk(child, f"{path}[{index}]", found, names)
    elif isinstance(value, str):
        if EMAIL.search(value) or value.startswith(("prn_", "key_")) or MONEY.search(value):
            found.append(f"{path}: {value!r} looks like a person or money")
        if any(name.lower() in value.lower() for name in names):
            found.append(f"{path}: {value!r} names a person")
    elif isinstance(value, float) and not 0.0 <= value <= 1.0:
        found.append(f"{path}: {value!r} is a number that is not a ratio")


async def _seed(client: httpx.AsyncClient, workspace: Workspace) -> str:
    admin = await workspace.key("owner", admin=True)
    await workspace.key("maya.okafor", memberships={"ALPHA": "lead"})
    watcher = workspace.principals["maya.okafor"]
    for title, status, sprint in (
        ("Invoice run for Maya Okafor (maya@example.com), rate £950/day", "in_progress", "2026-S23"),
        ("Pay supplier invoice INV-204", "done", "2026-S23"),
        ("Blocked rollout", "todo", "2026-S23"),
        ("Backlog idea", "backlog", None),
    ):
        response = await client.post(
            "/api/v1/work-items",
            json={
                "project_id": workspace.projects["ALPHA"],
                "title": title,
                "status": status,
                "sprint": sprint,
                "watchers": [watcher],
                "fields": {
                    "description": "Blocked by Maya Okafor's approval of the £12,000 invoice.",
                    "risks": "Day rate of £950 may rise; maya@example.com owns it.",
                },
            },
            headers=workspace.headers(admin, **idem()),
        )
        assert response.status_code == 201, response.text
    await run_builtin_providers(workspace.slug, client=None, task_queue="")
    ledger = await register(workspace, "ledger", "financial", ["risks"])
    await contribute(workspace, body(ledger, workspace.projects["ALPHA"], "Budget", "Invoice £40k overdue."))
    return admin


async def test_every_agent_api_response_holds_only_allow_listed_signals(
    client: httpx.AsyncClient, workspace: Workspace, worker: Any
) -> None:
    admin = await _seed(client, workspace)
    agent = await workspace.key("bot", ["agent:read", "context-engine:financial"], admin=True)
    projects = await get(client, workspace, agent, "/api/agent/v1/projects")
    assert {p["key"] for p in projects["data"]} == {"ALPHA", "BETA"}
    responses = [projects]
    for project in projects["data"]:
        for suffix in ("delivery", "sprints/current", "risks"):
            responses.append(await get(client, workspace, agent, f"/api/agent/v1/projects/{project['id']}/{suffix}"))
    found: list[str] = []
    names = {"maya", "okafor"}
    for response in responses:
        _walk(response, "$", found, names)
    assert found == []

    alpha = next(p for p in projects["data"] if p["key"] == "ALPHA")
    delivery = (await get(client, workspace, agent, f"/api/agent/v1/projects/{alpha['id']}/delivery"))["data"]
    assert delivery["workItems"]["total"] == 4 and delivery["workItems"]["byStatus"]["done"] == 1
    assert delivery["workItems"]["doneRatio"] == 0.25 and delivery["blockers"]["open"] >= 1
    assert delivery["health"] in ("at_risk", "off_track")
    sprint = (await get(client, workspace, agent, f"/api/agent/v1/projects/{alpha['id']}/sprints/current"))["data"]
    assert sprint["sprint"] == "2026-S23" and sprint["workItems"]["total"] == 3
    risks = (await get(client, workspace, agent, f"/api/agent/v1/projects/{alpha['id']}/risks"))["data"]
    assert risks["risks"]["open"] == 4  # three work items' risks and the ledger's (the key holds :financial)
    beta = next(p for p in projects["data"] if p["key"] == "BETA")
    empty = (await get(client, workspace, agent, f"/api/agent/v1/projects/{beta['id']}/sprints/current"))["data"]
    assert empty == {"projectId": beta["id"], "sprint": None, "health": "on_track", "workItems": None, "blockers": 0}
    assert admin


async def test_the_agent_api_needs_its_scope_and_the_projects_visibility(
    client: httpx.AsyncClient, workspace: Workspace, worker: Any
) -> None:
    await _seed(client, workspace)
    viewer = await workspace.key("viewer-bot", ["agent:read"], memberships={"ALPHA": "viewer", "BETA": "guest"})
    projects = (await get(client, workspace, viewer, "/api/agent/v1/projects"))["data"]
    assert [p["key"] for p in projects] == ["ALPHA"]
    risks = (await get(client, workspace, viewer, f"/api/agent/v1/projects/{workspace.projects['ALPHA']}/risks"))[
        "data"
    ]
    assert risks["risks"]["open"] == 3  # the ledger's financial risk needs context-engine:financial
    for suffix in ("delivery", "sprints/current", "risks"):
        hidden = await get(
            client, workspace, viewer, f"/api/agent/v1/projects/{workspace.projects['BETA']}/{suffix}", expect=404
        )
        assert hidden["code"] == "not_found"
    reader = await workspace.key("reader", ["context-engine:read"], admin=True)
    refused = await get(client, workspace, reader, "/api/agent/v1/projects", expect=403)
    assert refused["required_scope"] == "agent:read"
