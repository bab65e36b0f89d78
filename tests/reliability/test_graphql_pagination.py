"""Every connection of the schema, found by introspection, walked page by page with `pageInfo` as a Relay
client does: one item per page, `after: endCursor` until `hasNextPage` is false. The walk must list exactly
what one large page lists, and every edge's cursor must resume the list right after its node."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import httpx
import pytest
from graphql import GraphQLObjectType, get_named_type

from groundwork.api.graphql.schema import schema
from groundwork.domain.times import format_timestamp
from groundwork.persistence.repositories.tenancy import workspaces as tenancy
from groundwork.worker import outbox_relay
from tests.conftest import Workspace, idem

WORD = uuid.uuid4().hex[:10]


@dataclass
class World:
    """A workspace with two or more of everything a connection lists, and the keys that read them."""

    workspace: Workspace
    owner: str
    recipient: str
    ids: dict[str, str]


def _ok(response: httpx.Response) -> dict[str, Any]:
    assert response.status_code < 300, response.text
    return dict(response.json()["data"])


async def _run(client: httpx.AsyncClient, ws: Workspace, owner: str, item_id: str) -> str:
    run = _ok(
        await client.post(
            "/api/v1/work-item-enhancements?wait=30",
            json={
                "target": {"type": "work_item", "id": item_id},
                "actions": ["requirements", "acceptance_criteria", "test_plan"],
                "confirm": True,
            },
            headers=ws.headers(owner, **idem()),
        )
    )
    assert run["state"] == "ready_for_review", run
    return str(run["id"])


async def _contribute(
    internal: httpx.AsyncClient, ws: Workspace, key: str, provider: str, project: str, n: int
) -> None:
    now = format_timestamp(datetime.now(UTC))
    _ok(
        await internal.post(
            "/internal/v1/context-engine/contributions",
            params={"wait": 30},
            json={
                "provider_id": provider,
                "project_id": project,
                "term": f"pkg{WORD} term{n}",
                "summary": f"The pkg{WORD} vendor {n} may slip.",
                "contribution_type": "risk",
                "evidence": [
                    {
                        "capability": "risks",
                        "reference": {"kind": "external", "id": f"ext-{WORD}-{n}", "class": "general"},
                        "as_of": now,
                    }
                ],
                "generated_at": now,
            },
            headers=ws.headers(key, **idem()),
        )
    )


@pytest.fixture(scope="module")
async def world(
    api_url: str, internal_api_url: str, worker: Any, temporal_client: Any, settings: Any
) -> AsyncIterator[World]:
    async with (
        httpx.AsyncClient(base_url=api_url, timeout=60) as client,
        httpx.AsyncClient(base_url=internal_api_url, timeout=60) as internal,
    ):
        slug = f"p-{uuid.uuid4().hex[:12]}"
        created = await tenancy.create_workspace(slug, f"Paging {slug}")
        portfolio = await tenancy.create_portfolio(created.id, "Portfolio")
        engagement = await tenancy.create_engagement(created.id, portfolio.id, "Engagement")
        ws = Workspace(created.id, slug, internal)
        project = (await tenancy.create_project(created.id, engagement.id, "ALPHA", "Project ALPHA")).id
        ws.projects["ALPHA"] = project
        owner = await ws.key("owner", admin=True)
        alice = await ws.key("alice", memberships={"ALPHA": "lead"})
        bob = await ws.key("bob", memberships={"ALPHA": "contributor"})
        items = [
            _ok(
                await client.post(
                    "/api/v1/work-items",
                    json={
                        "project_id": project,
                        "title": f"Paging target {n}",
                        "status": "todo",
                        "fields": {"description": f"Save cards with tokens, step {n}."},
                    },
                    headers=ws.headers(owner, **idem()),
                )
            )
            for n in range(2)
        ]
        run = await _run(client, ws, owner, items[0]["id"])
        await _run(client, ws, owner, items[0]["id"])
        provider_key = await ws.provider_key()
        provider = _ok(
            await internal.post(
                "/internal/v1/context-engine/providers",
                json={
                    "name": f"provider-{WORD}",
                    "classification": "delivery",
                    "capabilities": ["risks"],
                    "authority": "advisory",
                },
                headers=ws.headers(provider_key, **idem()),
            )
        )
        for n in range(2):
            await _contribute(internal, ws, provider_key, provider["id"], project, n)
            _ok(
                await internal.post(
                    "/internal/v1/corpus/sources",
                    params={"wait": 30},
                    json={
                        "project_id": project,
                        "uri": f"notes-{WORD}-{n}.md",
                        "kind": "markdown",
                        "content": f"# Notes {n}\n\nThe psg{WORD} migration {n} needs a rollback plan.",
                    },
                    headers=ws.headers(provider_key, **idem()),
                )
            )
            _ok(
                await client.post(
                    "/api/v1/messages",
                    json={"title": f"Thread {n}", "participant_ids": [ws.principals["bob"]], "body": f"Body {n}"},
                    headers=ws.headers(alice, **idem()),
                )
            )
        await outbox_relay(temporal_client, settings).run_once()
        ids = {"project": project, "work_item": items[0]["id"], "run": run}
        yield World(ws, owner, bob, ids)


def _arguments(name: str, ids: dict[str, str]) -> dict[str, Any]:
    """What each connection is asked for: the filters that make it list the world's items."""
    subject = {"type": "project", "id": ids["project"]}
    chosen: dict[str, dict[str, Any]] = {
        "principals": {},
        "workItems": {"projectId": ids["project"]},
        "contextPassages": {"subjectRef": subject, "query": f"psg{WORD}"},
        "contextSources": {"projectId": ids["project"]},
        "contextEngineSearch": {"query": f"pkg{WORD}", "projectId": ids["project"]},
        "contextEnginePackages": {"projectId": ids["project"]},
        "workItemEnhancementRuns": {"targetId": ids["work_item"]},
        "workItemEnhancementDraftConnection": {"runId": ids["run"]},
        "workItemEnhancementArtifactConnection": {"runId": ids["run"]},
        "notificationList": {},
    }
    return chosen[name]


def _connections() -> dict[str, GraphQLObjectType]:
    query = schema._schema.query_type
    assert query is not None
    found = {}
    for name, field in query.fields.items():
        named = get_named_type(field.type)
        if isinstance(named, GraphQLObjectType) and "pageInfo" in named.fields and not field.deprecation_reason:
            found[name] = named
    return found


def _identity(connection: GraphQLObjectType) -> str:
    """A selection that tells one node from another: its id, or the id of the object it wraps."""
    node = get_named_type(connection.fields["nodes"].type)
    assert isinstance(node, GraphQLObjectType)
    if "id" in node.fields:
        return "id"
    for name, child in node.fields.items():
        inner = get_named_type(child.type)
        if isinstance(inner, GraphQLObjectType) and "id" in inner.fields:
            return f"{name} {{ id }}"
    raise AssertionError(f"{node.name} has no id to tell its nodes apart")


async def _page(
    client: httpx.AsyncClient, world: World, name: str, connection: GraphQLObjectType, first: int, after: str | None
) -> dict[str, Any]:
    query = schema._schema.query_type
    assert query is not None
    arguments = _arguments(name, world.ids)
    definition = query.fields[name]
    paging: dict[str, Any]
    if "pagination" in definition.args:
        paging = {"pagination": {"first": first, "after": after}}
    else:
        paging = {"first": first, "after": after}
    variables = {**arguments, **paging}
    declared = ", ".join(f"${a}: {definition.args[a].type}" for a in variables)
    call = ", ".join(f"{a}: ${a}" for a in variables)
    who = _identity(connection)
    document = (
        f"query ({declared}) {{ {name}({call}) {{ edges {{ cursor node {{ {who} }} }} nodes {{ {who} }} "
        "pageInfo { hasNextPage endCursor } } }"
    )
    key = world.recipient if name == "notificationList" else world.owner
    response = await client.post(
        "/graphql", json={"query": document, "variables": variables}, headers=world.workspace.headers(key)
    )
    body = response.json()
    assert response.status_code == 200 and not body.get("errors"), (name, body)
    page = body["data"][name]
    assert [e["node"] for e in page["edges"]] == page["nodes"], name
    return dict(page)


async def test_every_connection_walks_page_by_page_with_page_info(client: httpx.AsyncClient, world: World) -> None:
    connections = _connections()
    assert len(connections) >= 10, sorted(connections)
    walked_pages: dict[str, int] = {}
    for name, connection in sorted(connections.items()):
        whole = await _page(client, world, name, connection, 100, None)
        assert whole["pageInfo"]["hasNextPage"] is False, name
        walked: list[Any] = []
        after: str | None = None
        pages = 0
        while True:
            page = await _page(client, world, name, connection, 1, after)
            pages += 1
            walked += page["nodes"]
            assert page["pageInfo"]["endCursor"] == (page["edges"][-1]["cursor"] if page["edges"] else None), name
            if not page["pageInfo"]["hasNextPage"]:
                break
            after = page["pageInfo"]["endCursor"]
            assert pages <= len(whole["nodes"]), f"{name} pages past its {len(whole['nodes'])} items"
        assert walked == whole["nodes"], name
        # Any edge's cursor resumes the list right after its node, not only the page's last one.
        if len(whole["edges"]) > 1:
            rest = await _page(client, world, name, connection, 100, whole["edges"][0]["cursor"])
            assert rest["nodes"] == whole["nodes"][1:], name
        walked_pages[name] = pages
    # The world holds two or more of everything: each connection really paged.
    assert not {n: p for n, p in walked_pages.items() if p < 2}
