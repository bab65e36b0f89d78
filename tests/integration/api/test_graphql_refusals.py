"""GraphQL answers a missing key, an unknown or revoked key and a missing scope the same way everywhere: HTTP 200;
a query field's GraphQL error with `extensions.code`; a mutation's `ok: false` with `errors[{code}]`; on GET
and POST alike (docs/decisions.md, "API and transports")."""

from __future__ import annotations

import uuid
from typing import Any

import httpx
from graphql import get_named_type

from groundwork.api.graphql.schema import schema
from groundwork.services.tenancy import api_keys
from tests.conftest import Workspace

QUERY = "{ projects { id } }"


async def _callers(workspace: Workspace) -> dict[str, tuple[dict[str, str], str]]:
    """Each refused caller: its headers and the code every field answers it."""
    revoked = await api_keys.issue_key(workspace.slug, "revoked", None, admin=True)
    assert await api_keys.revoke_key(revoked.api_key_id)
    scopeless = await workspace.key("scopeless", ["agent:read"])
    return {
        "no key": ({}, "unauthenticated"),
        "unknown key": ({"Authorization": "Bearer gw_not_a_key"}, "unauthenticated"),
        "revoked key": ({"Authorization": f"Bearer {revoked.key}"}, "unauthenticated"),
        "key without the scope": ({"Authorization": f"Bearer {scopeless}"}, "insufficient_scope"),
    }


async def test_a_query_answers_every_refused_caller_with_200_and_the_code_on_get_and_post(
    client: httpx.AsyncClient, workspace: Workspace
) -> None:
    for caller, (headers, code) in (await _callers(workspace)).items():
        for response in (
            await client.post("/graphql", json={"query": QUERY}, headers=headers),
            await client.get("/graphql", params={"query": QUERY}, headers=headers),
        ):
            where = f"{caller} {response.request.method}"
            assert response.status_code == 200, (where, response.text)
            body = response.json()
            assert body["data"] is None, where
            assert [e["extensions"]["code"] for e in body["errors"]] == [code], where
            if code == "insufficient_scope":
                assert body["errors"][0]["extensions"]["required_scope"] == "work-items:read", where


def _mutation(name: str) -> str:
    mutation = schema._schema.mutation_type
    assert mutation is not None
    input_type = get_named_type(mutation.fields[name].args["input"].type)
    return f"mutation ($input: {input_type.name}!) {{ {name}(input: $input) {{ ok errors {{ code details }} }} }}"


INPUTS: dict[str, dict[str, Any]] = {
    "createWorkItemEnhancementRun": {"target": {"type": "work_item", "id": "wi_x"}, "actions": ["estimate"]},
    "runWorkItemEnhancementAction": {"runId": "wie_x", "action": "design"},
    "applyWorkItemEnhancementDrafts": {"runId": "wie_x", "draftIds": ["draft_x"], "expectedTargetVersion": "x"},
    "rejectDraft": {"runId": "wie_x", "draftId": "draft_x", "reason": "Not needed."},
    "cancelEnhancementRun": {"runId": "wie_x"},
    "draftNotificationChange": {"notificationId": "notification_x", "requestedOutcome": "read"},
    "applyNotificationChange": {"proposalId": "ncp_x", "expectedVersion": 1},
}


async def test_every_mutation_answers_every_refused_caller_ok_false_with_the_code(
    client: httpx.AsyncClient, workspace: Workspace
) -> None:
    mutation = schema._schema.mutation_type
    assert mutation is not None and set(mutation.fields) == set(INPUTS)
    for caller, (headers, code) in (await _callers(workspace)).items():
        for name, arguments in INPUTS.items():
            variables = {"input": {**arguments, "confirm": True, "idempotencyKey": uuid.uuid4().hex}}
            if name == "draftNotificationChange":
                variables["input"].pop("confirm")
                variables["input"].pop("idempotencyKey")
            response = await client.post(
                "/graphql", json={"query": _mutation(name), "variables": variables}, headers=headers
            )
            where = f"{name} [{caller}]"
            assert response.status_code == 200, (where, response.text)
            body = response.json()
            assert "errors" not in body, (where, body)
            payload = body["data"][name]
            assert payload["ok"] is False and [e["code"] for e in payload["errors"]] == [code], (where, payload)
            if code == "insufficient_scope":
                assert payload["errors"][0]["details"]["required_scope"], where


async def test_a_mutation_over_get_is_refused_in_graphqls_shape(
    client: httpx.AsyncClient, workspace: Workspace
) -> None:
    headers = {"Authorization": f"Bearer {await workspace.key(admin=True)}"}
    document = _mutation("applyNotificationChange")
    response = await client.get("/graphql", params={"query": document}, headers=headers)
    assert response.status_code == 400
    assert response.json()["errors"][0]["extensions"]["code"] == "invalid_request"
