"""A confirmation is the JSON boolean `true` and nothing else, on every transport.

Every command that takes `confirm` (read from each transport's own surface: the OpenAPI document's bodies
that require it, the GraphQL mutation inputs that have it, the MCP tools whose input schema has it) is sent
`"yes"`, `"true"`, `1`, `null` and no `confirm` at all, with everything else valid. Each is refused, a
wrong kind as `invalid_request` naming `confirm`, null or absent as `confirmation_required`; and afterwards
nothing changed: the work item's version and fields, the run, the notifications' versions, the outbox.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import httpx
import pytest
from graphql import GraphQLInputObjectType, get_named_type

from groundwork.api.graphql.schema import schema
from groundwork.persistence.repositories.platform import outbox
from tests.conftest import idem, mcp_session
from tests.integration.notifications.conftest import People, command

MISSING = object()
WRONG_KINDS: tuple[Any, ...] = ("yes", "true", 1)
NOT_CONFIRMED: tuple[Any, ...] = (None, MISSING)


@dataclass
class Stage:
    """A run ready for review on a work item, and Bob's notifications: one read (with a proposal to acknowledge
    it), one acknowledged."""

    admin: str
    bob: str
    work_item: str
    version: str
    run: str
    draft: str
    read: str
    acknowledged: str
    proposal: str
    workspace_id: str


def _data(response: httpx.Response) -> dict[str, Any]:
    assert response.status_code < 300, response.text
    return dict(response.json()["data"])


@pytest.fixture
async def stage(
    client: httpx.AsyncClient, api_url: str, people: People, notify: Any, work_item: dict[str, Any], worker: Any
) -> Stage:
    admin = people.dana.key
    run = _data(
        await client.post(
            "/api/v1/work-item-enhancements?wait=30",
            json={
                "target": {"type": "work_item", "id": work_item["id"]},
                "actions": ["acceptance_criteria"],
                "confirm": True,
            },
            headers=people.headers(people.dana, **idem()),
        )
    )
    assert run["state"] == "ready_for_review", run
    read = await notify()
    _data(await command(client, people, people.bob, read["id"], "read", expected_version=1))
    acknowledged = await notify(body="Another one")
    _data(await command(client, people, people.bob, acknowledged["id"], "read", expected_version=1))
    _data(
        await command(client, people, people.bob, acknowledged["id"], "acknowledge", expected_version=2, confirm=True)
    )
    async with mcp_session(api_url, people.bob.key) as session:
        drafted = await session.call_tool(
            "draft_notifications_messaging_change",
            {"notification_id": read["id"], "requested_outcome": "acknowledged", "expected_version": 2},
        )
        assert not drafted.is_error, drafted.content
        proposal = drafted.structured_content["data"]["id"]
    return Stage(
        admin=admin,
        bob=people.bob.key,
        work_item=work_item["id"],
        version=work_item["version"],
        run=run["id"],
        draft=run["drafts"][0]["id"],
        read=read["id"],
        acknowledged=acknowledged["id"],
        proposal=proposal,
        workspace_id=people.workspace.id,
    )


async def _state(client: httpx.AsyncClient, stage: Stage) -> dict[str, Any]:
    """Everything a confirmed command could have changed."""
    admin = {"Authorization": f"Bearer {stage.admin}"}
    bob = {"Authorization": f"Bearer {stage.bob}"}
    item = _data(await client.get(f"/api/v1/work-items/{stage.work_item}", headers=admin))
    run = _data(await client.get(f"/api/v1/work-item-enhancements/{stage.run}", headers=admin))
    runs = (await client.get("/api/v1/work-item-enhancements", headers=admin)).json()["data"]
    notifications = [
        _data(await client.get(f"/api/v1/notifications/{n}", headers=bob)) for n in (stage.read, stage.acknowledged)
    ]
    return {
        "snoozed": [n.get("snoozedUntil") for n in notifications],
        "work item": (item["version"], item["fields"]),
        "run": (
            run["state"],
            run["requestedActions"],
            run["appliedDraftIds"],
            [d["rejection"] for d in run["drafts"]],
        ),
        "runs": [r["id"] for r in runs],
        "notifications": [(n["status"], n["version"], len(n["history"])) for n in notifications],
        "outbox": len(await outbox.events_for_workspace(stage.workspace_id)),
    }


def _with_confirm(body: dict[str, Any], value: Any) -> dict[str, Any]:
    return body if value is MISSING else {**body, "confirm": value}


def _label(value: Any) -> str:
    return "no confirm" if value is MISSING else f"confirm={value!r}"


# ------------------------------------------------------------------------------------------------- REST

REST: dict[str, Callable[[Stage], tuple[str, dict[str, Any]]]] = {
    "/api/v1/work-item-enhancements": lambda s: (
        "/api/v1/work-item-enhancements?wait=0",
        {"target": {"type": "work_item", "id": s.work_item}, "actions": ["estimate"]},
    ),
    "/api/v1/work-item-enhancements/{run_id}/actions": lambda s: (
        f"/api/v1/work-item-enhancements/{s.run}/actions?wait=0",
        {"action": "design"},
    ),
    "/api/v1/work-item-enhancements/{run_id}/apply": lambda s: (
        f"/api/v1/work-item-enhancements/{s.run}/apply",
        {"draft_ids": [s.draft], "expected_target_version": s.version},
    ),
    "/api/v1/work-item-enhancements/{run_id}/drafts/{draft_id}/reject": lambda s: (
        f"/api/v1/work-item-enhancements/{s.run}/drafts/{s.draft}/reject",
        {"reason": "Not needed."},
    ),
    "/api/v1/work-item-enhancements/{run_id}/cancel": lambda s: (f"/api/v1/work-item-enhancements/{s.run}/cancel", {}),
    "/api/v1/notifications/{notification_id}/acknowledge": lambda s: (
        f"/api/v1/notifications/{s.read}/acknowledge",
        {"expected_version": 2},
    ),
    "/api/v1/notifications/{notification_id}/dismiss": lambda s: (
        f"/api/v1/notifications/{s.acknowledged}/dismiss",
        {"expected_version": 3},
    ),
    "/api/v1/notifications/{notification_id}/snooze": lambda s: (
        f"/api/v1/notifications/{s.read}/snooze",
        {"expected_version": 2, "for": "PT1H"},
    ),
}


def _body_schema(document: dict[str, Any], operation: dict[str, Any]) -> dict[str, Any]:
    schema_ = operation.get("requestBody", {}).get("content", {}).get("application/json", {}).get("schema", {})
    ref = schema_.get("$ref", "")
    return dict(document["components"]["schemas"][ref.rsplit("/", 1)[-1]]) if ref else dict(schema_)


async def _confirmed_routes(client: httpx.AsyncClient) -> set[str]:
    """The POST routes of the OpenAPI document whose body requires `confirm`."""
    document = (await client.get("/schema/openapi.json")).json()
    return {
        path
        for path, item in document["paths"].items()
        if "post" in item and "confirm" in (_body_schema(document, item["post"]).get("required") or [])
    }


async def test_every_rest_command_that_takes_confirm_refuses_anything_but_true_and_changes_nothing(
    client: httpx.AsyncClient, stage: Stage
) -> None:
    assert await _confirmed_routes(client) == set(REST), "a command that takes confirm is missing from REST"
    before = await _state(client, stage)
    for template, build in REST.items():
        path, body = build(stage)
        key = stage.bob if "/notifications/" in path else stage.admin
        for value in (*WRONG_KINDS, *NOT_CONFIRMED):
            response = await client.post(
                path, json=_with_confirm(body, value), headers={"Authorization": f"Bearer {key}", **idem()}
            )
            where = f"{template} {_label(value)}"
            problem = response.json()
            if value in NOT_CONFIRMED:
                assert (response.status_code, problem["code"]) == (422, "confirmation_required"), where
            else:
                assert (response.status_code, problem["code"]) == (400, "invalid_request"), where
                assert [e["path"] for e in problem["errors"]] == ["confirm"], where
                assert "true" in problem["errors"][0]["message"], where
    assert await _state(client, stage) == before


async def test_a_command_whose_confirm_is_optional_still_refuses_a_confirm_of_another_kind(
    client: httpx.AsyncClient, stage: Stage
) -> None:
    before = await _state(client, stage)
    for value in WRONG_KINDS:
        response = await client.post(
            f"/api/v1/notifications/{stage.acknowledged}/read",
            json={"expected_version": 3, "confirm": value},
            headers={"Authorization": f"Bearer {stage.bob}", **idem()},
        )
        assert response.status_code == 400 and response.json()["errors"][0]["path"] == "confirm", response.text
    assert await _state(client, stage) == before


async def test_the_internal_and_agent_apis_have_no_command_that_takes_confirm(
    client: httpx.AsyncClient, internal_client: httpx.AsyncClient
) -> None:
    public = (await client.get("/schema/openapi.json")).json()
    agent = [path for path in public["paths"] if path.startswith("/api/agent/")]
    assert agent and all(set(public["paths"][p]) == {"get"} for p in agent)
    internal = (await internal_client.get("/schema/openapi.json")).json()
    bodies = [_body_schema(internal, operation) for item in internal["paths"].values() for operation in item.values()]
    assert bodies and not any("confirm" in (b.get("properties") or {}) for b in bodies)


# ---------------------------------------------------------------------------------------------- GraphQL

GRAPHQL: dict[str, Callable[[Stage], dict[str, Any]]] = {
    "createWorkItemEnhancementRun": lambda s: {
        "target": {"type": "work_item", "id": s.work_item},
        "actions": ["estimate"],
        "wait": 0,
    },
    "runWorkItemEnhancementAction": lambda s: {"runId": s.run, "action": "design", "wait": 0},
    "applyWorkItemEnhancementDrafts": lambda s: {
        "runId": s.run,
        "draftIds": [s.draft],
        "expectedTargetVersion": s.version,
    },
    "rejectDraft": lambda s: {"runId": s.run, "draftId": s.draft, "reason": "Not needed."},
    "cancelEnhancementRun": lambda s: {"runId": s.run},
    "applyNotificationChange": lambda s: {"proposalId": s.proposal, "expectedVersion": 2},
}


def _confirmed_mutations() -> dict[str, str]:
    """Every mutation whose input has `confirm`, with the name of its input type."""
    mutation = schema._schema.mutation_type
    assert mutation is not None
    found = {}
    for name, field in mutation.fields.items():
        argument = field.args.get("input")
        kind = get_named_type(argument.type) if argument is not None else None
        if isinstance(kind, GraphQLInputObjectType) and "confirm" in kind.fields:
            found[name] = kind.name
    return found


async def test_every_graphql_mutation_that_takes_confirm_refuses_anything_but_true_and_changes_nothing(
    client: httpx.AsyncClient, stage: Stage
) -> None:
    mutations = _confirmed_mutations()
    assert set(mutations) == set(GRAPHQL), "a mutation that takes confirm is missing from GRAPHQL"
    before = await _state(client, stage)
    for name, input_type in mutations.items():
        key = stage.bob if name == "applyNotificationChange" else stage.admin
        document = f"mutation ($input: {input_type}!) {{ {name}(input: $input) {{ ok errors {{ code path }} }} }}"
        for value in (*WRONG_KINDS, *NOT_CONFIRMED):
            variables = {"input": _with_confirm({**GRAPHQL[name](stage), "idempotencyKey": uuid.uuid4().hex}, value)}
            response = await client.post(
                "/graphql", json={"query": document, "variables": variables}, headers={"Authorization": f"Bearer {key}"}
            )
            where = f"{name} {_label(value)}"
            assert response.status_code == 200, where
            body = response.json()
            if value in NOT_CONFIRMED:
                payload = body["data"][name]
                assert payload["ok"] is False, where
                assert [e["code"] for e in payload["errors"]] == ["confirmation_required"], where
            else:
                assert body["data"] is None, where
                [error] = body["errors"]
                assert error["extensions"]["code"] == "graphql_validation_failed", where
                assert "$input.confirm" in error["message"] and "true" in error["message"], where
    assert await _state(client, stage) == before


# -------------------------------------------------------------------------------------------------- MCP

MCP: dict[str, Callable[[Stage], dict[str, Any]]] = {
    "create_enhancement_run": lambda s: {"work_item_id": s.work_item, "actions": ["estimate"], "wait": 0},
    "run_enhancement_action": lambda s: {"run_id": s.run, "action": "design", "wait": 0},
    "apply_drafts": lambda s: {"run_id": s.run, "draft_ids": [s.draft], "expected_target_version": s.version},
    "reject_draft": lambda s: {"run_id": s.run, "draft_id": s.draft, "reason": "Not needed."},
    "cancel_enhancement_run": lambda s: {"run_id": s.run},
    "apply_notifications_messaging_change": lambda s: {"proposal_id": s.proposal, "expected_version": 2},
}


async def test_every_mcp_tool_that_takes_confirm_refuses_anything_but_true_and_changes_nothing(
    client: httpx.AsyncClient, api_url: str, stage: Stage
) -> None:
    before = await _state(client, stage)
    for key in (stage.admin, stage.bob):
        async with mcp_session(api_url, key) as session:
            tools = {t.name: t for t in (await session.list_tools()).tools}
            confirmed = {name for name, tool in tools.items() if "confirm" in tool.input_schema.get("properties", {})}
            assert confirmed == set(MCP), "a tool that takes confirm is missing from MCP"
            for name in confirmed:
                assert tools[name].input_schema["properties"]["confirm"]["const"] is True
                if (name == "apply_notifications_messaging_change") != (key == stage.bob):
                    continue
                for value in (*WRONG_KINDS, *NOT_CONFIRMED):
                    arguments = _with_confirm({**MCP[name](stage), "idempotency_key": uuid.uuid4().hex}, value)
                    result = await session.call_tool(name, arguments)
                    where = f"{name} {_label(value)}"
                    assert result.is_error, where
                    text = result.content[0].text
                    if value in NOT_CONFIRMED:
                        assert '"code": "confirmation_required"' in text, (where, text)
                    else:
                        assert '"code": "invalid_request"' in text and '"path": "confirm"' in text, (where, text)
    assert await _state(client, stage) == before
