"""Every GraphQL and MCP enhancement operation, called; pages of drafts and artifacts; what each caller is offered."""

from __future__ import annotations

import json
import uuid
from typing import Any

import httpx
import pytest

from groundwork.domain.tenancy.principals import Principal
from groundwork.persistence import db
from groundwork.services.enhancement import runs as service
from tests.conftest import Workspace, mcp_session, tool_json
from tests.integration.enhancement.conftest import create_run

ALL = [
    "requirements",
    "description",
    "design",
    "implementation_plan",
    "acceptance_criteria",
    "test_plan",
    "estimate",
    "risk_check",
]


async def _graphql(client: httpx.AsyncClient, headers: dict[str, str], query: str, **variables: Any) -> Any:
    response = await client.post("/graphql", json={"query": query, "variables": variables}, headers=headers)
    assert response.status_code == 200, response.text
    return response.json()


async def test_graphql_lists_runs_pages_drafts_and_artifacts_and_runs_an_action(
    client: httpx.AsyncClient, workspace: Workspace, work_item: dict[str, Any], worker: Any
) -> None:
    key = await workspace.key("owner", admin=True)
    headers = workspace.headers(key)
    run = (await create_run(client, workspace, key, work_item["id"], ALL)).json()["data"]
    other = (await create_run(client, workspace, key, work_item["id"], ["estimate"])).json()["data"]
    runs_query = """query ($target: ID, $first: Int, $after: String) {
      workItemEnhancementRuns(targetId: $target, first: $first, after: $after) {
        nodes { id state } pageInfo { hasNextPage endCursor } }
    }"""
    page = (await _graphql(client, headers, runs_query, target=work_item["id"], first=1))["data"]
    page = page["workItemEnhancementRuns"]
    assert [n["id"] for n in page["nodes"]] == [other["id"]] and page["pageInfo"]["hasNextPage"] is True
    end = page["pageInfo"]["endCursor"]
    rest = await _graphql(client, headers, runs_query, target=work_item["id"], first=1, after=end)
    assert [n["id"] for n in rest["data"]["workItemEnhancementRuns"]["nodes"]] == [run["id"]]

    drafts_query = """query ($run: ID!, $first: Int, $after: ID, $field: WorkItemEnhancementDraftField) {
      workItemEnhancementDrafts(runId: $run, first: $first, after: $after, field: $field) {
        id field applyEligible ineligibleReason evidenceRefs { kind id } } }"""
    seen: list[str] = []
    after = None
    while True:
        chunk = (await _graphql(client, headers, drafts_query, run=run["id"], first=3, after=after))["data"]
        chunk = chunk["workItemEnhancementDrafts"]
        if not chunk:
            break
        seen += [d["id"] for d in chunk]
        after = chunk[-1]["id"]
    assert seen == [d["id"] for d in run["drafts"]] and len(seen) == len(set(seen)) == 8
    only = (await _graphql(client, headers, drafts_query, run=run["id"], field="estimate"))["data"]
    assert [d["field"] for d in only["workItemEnhancementDrafts"]] == ["estimate"]

    artifacts_query = """query ($run: ID!, $first: Int, $after: ID) {
      workItemEnhancementArtifacts(runId: $run, first: $first, after: $after) { id type title } }"""
    first = (await _graphql(client, headers, artifacts_query, run=run["id"], first=4))["data"]
    second = (
        await _graphql(
            client,
            headers,
            artifacts_query,
            run=run["id"],
            first=4,
            after=first["workItemEnhancementArtifacts"][-1]["id"],
        )
    )["data"]
    ids = [a["id"] for a in first["workItemEnhancementArtifacts"] + second["workItemEnhancementArtifacts"]]
    assert ids == [a["id"] for a in run["artifacts"]][:8]

    connection_query = """query ($run: ID!, $first: Int, $after: String) {
      workItemEnhancementDraftConnection(runId: $run, first: $first, after: $after) {
        edges { cursor node { id } } pageInfo { hasNextPage endCursor } }
      workItemEnhancementArtifactConnection(runId: $run, first: $first, after: $after) { nodes { id } } }"""
    paged: list[str] = []
    cursor = None
    while True:
        answer = (await _graphql(client, headers, connection_query, run=run["id"], first=3, after=cursor))["data"]
        drafts_page = answer["workItemEnhancementDraftConnection"]
        paged += [e["node"]["id"] for e in drafts_page["edges"]]
        if not drafts_page["pageInfo"]["hasNextPage"]:
            break
        cursor = drafts_page["pageInfo"]["endCursor"]
    assert paged == seen
    first_artifacts = (await _graphql(client, headers, connection_query, run=run["id"], first=3))["data"]
    assert [a["id"] for a in first_artifacts["workItemEnhancementArtifactConnection"]["nodes"]] == ids[:3]

    mutation = """mutation ($input: RunWorkItemEnhancementActionInput!) {
      runWorkItemEnhancementAction(input: $input) {
        ok pending idempotencyReplayed errors { code path } run { id state requestedActions } } }"""
    act = {
        "runId": other["id"],
        "action": "risk_check",
        "confirm": True,
        "idempotencyKey": uuid.uuid4().hex,
        "wait": 20,
    }
    done = (await _graphql(client, headers, mutation, input=act))["data"]["runWorkItemEnhancementAction"]
    again = (await _graphql(client, headers, mutation, input=act))["data"]["runWorkItemEnhancementAction"]
    unknown = {**act, "action": "poetry", "idempotencyKey": uuid.uuid4().hex}
    # The action is an enum: an unknown one is refused before anything runs, naming what is accepted.
    refused = await _graphql(client, headers, mutation, input=unknown)
    assert done["ok"] and not done["pending"] and done["run"]["requestedActions"] == ["estimate", "risk_check"]
    assert (
        again["ok"] and again["idempotencyReplayed"] and again["run"]["requestedActions"] == ["estimate", "risk_check"]
    )
    assert refused["data"] is None and [e["extensions"]["code"] for e in refused["errors"]] == [
        "graphql_validation_failed"
    ]
    assert "WorkItemEnhancementAction" in refused["errors"][0]["message"]


async def test_graphql_mutations_answer_a_missing_key_or_scope_in_their_payload(
    client: httpx.AsyncClient, workspace: Workspace, work_item: dict[str, Any], worker: Any
) -> None:
    owner = await workspace.key("owner", admin=True)
    run = (await create_run(client, workspace, owner, work_item["id"], ["estimate"])).json()["data"]
    reader = await workspace.key("reader", ["work-item-enhance:read"], admin=True)
    mutations = {
        "createWorkItemEnhancementRun": (
            "CreateWorkItemEnhancementRunInput",
            {"target": {"type": "work_item", "id": work_item["id"]}, "actions": ["estimate"], "confirm": True},
            "work-item-enhance:run",
        ),
        "runWorkItemEnhancementAction": (
            "RunWorkItemEnhancementActionInput",
            {"runId": run["id"], "action": "design", "confirm": True},
            "work-item-enhance:run",
        ),
        "applyWorkItemEnhancementDrafts": (
            "ApplyWorkItemEnhancementDraftsInput",
            {
                "runId": run["id"],
                "draftIds": [run["drafts"][0]["id"]],
                "expectedTargetVersion": work_item["version"],
                "confirm": True,
            },
            "work-item-enhance:apply",
        ),
    }
    for name, (input_type, fields, scope) in mutations.items():
        selection = "ok run { id } errors { code details }"
        query = f"mutation ($input: {input_type}!) {{ {name}(input: $input) {{ {selection} }} }}"
        variables = {"input": {**fields, "idempotencyKey": uuid.uuid4().hex}}
        anonymous = (await client.post("/graphql", json={"query": query, "variables": variables})).json()
        assert "errors" not in anonymous, anonymous
        assert anonymous["data"][name]["ok"] is False and anonymous["data"][name]["run"] is None
        assert anonymous["data"][name]["errors"][0]["code"] == "unauthenticated"
        scoped = (await _graphql(client, workspace.headers(reader), query, **variables))["data"][name]
        assert scoped["ok"] is False and scoped["errors"][0]["code"] == "insufficient_scope"
        assert scoped["errors"][0]["details"] == {"required_scope": scope}
        keyless = {"input": {k: v for k, v in variables["input"].items() if k != "idempotencyKey"}}
        missing = (await _graphql(client, workspace.headers(owner), query, **keyless))["data"][name]
        assert missing["ok"] is False and missing["errors"][0]["code"] == "idempotency_key_required"
    after = (await client.get(f"/api/v1/work-item-enhancements/{run['id']}", headers=workspace.headers(owner))).json()
    assert after["data"]["requestedActions"] == ["estimate"] and after["data"]["state"] == "ready_for_review"


async def test_mcp_runs_an_action_pages_drafts_and_artifacts_and_reads_the_operation(
    api_url: str, client: httpx.AsyncClient, workspace: Workspace, work_item: dict[str, Any], worker: Any
) -> None:
    key = await workspace.key("owner", admin=True)
    run = (await create_run(client, workspace, key, work_item["id"], ALL)).json()["data"]
    async with mcp_session(api_url, key) as session:
        acted = tool_json(
            await session.call_tool(
                "run_enhancement_action",
                {"run_id": run["id"], "action": "estimate", "confirm": True, "idempotency_key": uuid.uuid4().hex},
            )
        )
        assert acted["data"]["requestedActions"] == [*ALL, "estimate"] and "pending" not in acted
        drafts: list[dict[str, Any]] = []
        cursor = None
        while True:
            args: dict[str, Any] = {"run_id": run["id"], "limit": 4}
            if cursor:
                args["cursor"] = cursor
            page = tool_json(await session.call_tool("list_enhancement_drafts", args))
            drafts += page["data"]
            cursor = page["page"]["nextCursor"]
            if not page["page"]["hasMore"]:
                break
        artifacts: list[dict[str, Any]] = []
        cursor = None
        while True:
            args = {"run_id": run["id"], "limit": 5}
            if cursor:
                args["cursor"] = cursor
            page = tool_json(await session.call_tool("list_enhancement_artifacts", args))
            artifacts += page["data"]
            cursor = page["page"]["nextCursor"]
            if not page["page"]["hasMore"]:
                break
        operation = tool_json(await session.call_tool("get_operation_status", {"run_id": run["id"]}))
        pending = await session.call_tool(
            "run_enhancement_action",
            {"run_id": run["id"], "action": "poetry", "confirm": True, "idempotency_key": uuid.uuid4().hex},
        )
    assert [d["id"] for d in drafts] == [d["id"] for d in acted["data"]["drafts"]] and len(drafts) == 9
    assert all("ineligibleReason" in d for d in drafts)
    assert [a["id"] for a in artifacts] == [a["id"] for a in acted["data"]["artifacts"]]
    assert operation["data"]["status"] == "succeeded" and operation["data"]["pendingActions"] == []
    assert operation["data"]["temporal"]["workflowId"] == run["id"]
    text = pending.content[0].text
    assert pending.is_error and json.loads(text[text.index("{") :])["code"] == "invalid_action"


async def test_rest_pages_drafts_and_artifacts_with_cursors(
    client: httpx.AsyncClient, workspace: Workspace, work_item: dict[str, Any], worker: Any
) -> None:
    key = await workspace.key("owner", admin=True)
    run = (await create_run(client, workspace, key, work_item["id"], ALL)).json()["data"]
    for kind, size in (("drafts", 3), ("artifacts", 6)):
        collected: list[str] = []
        params: dict[str, Any] = {"limit": size}
        while True:
            page = (
                await client.get(
                    f"/api/v1/work-item-enhancements/{run['id']}/{kind}", params=params, headers=workspace.headers(key)
                )
            ).json()
            assert len(page["data"]) <= size
            collected += [x["id"] for x in page["data"]]
            if not page["page"]["hasMore"]:
                assert page["page"]["nextCursor"] is None
                break
            params = {"limit": size, "cursor": page["page"]["nextCursor"]}
        assert collected == [x["id"] for x in run[kind]], kind
    forged = await client.get(
        f"/api/v1/work-item-enhancements/{run['id']}/drafts", params={"cursor": "nope"}, headers=workspace.headers(key)
    )
    assert forged.status_code == 400 and forged.json()["code"] == "invalid_request"


async def test_allowed_actions_offer_only_what_this_callers_scopes_and_role_allow(
    client: httpx.AsyncClient, workspace: Workspace, work_item: dict[str, Any], worker: Any
) -> None:
    owner = await workspace.key("owner", admin=True)
    run = (await create_run(client, workspace, owner, work_item["id"], ["estimate"])).json()["data"]
    assert [a["id"] for a in run["allowedActions"]] == ["read", "run_action", "apply"]
    viewer = await workspace.key("viewer", memberships={"ALPHA": "viewer"})
    reader = await workspace.key("reader", ["work-item-enhance:read"], admin=True)
    contributor = await workspace.key("contributor", memberships={"ALPHA": "contributor"})
    offered = {}
    for name, key in (("viewer", viewer), ("reader", reader), ("contributor", contributor)):
        response = await client.get(f"/api/v1/work-item-enhancements/{run['id']}", headers=workspace.headers(key))
        offered[name] = [a["id"] for a in response.json()["data"]["allowedActions"]]
    assert offered == {
        "viewer": ["read", "run_action"],  # the role may not write the project's work items
        "reader": ["read"],  # the key holds only the read scope
        "contributor": ["read", "run_action", "apply"],
    }
    listed = (
        await client.get(
            "/api/v1/work-item-enhancements", params={"target_id": work_item["id"]}, headers=workspace.headers(viewer)
        )
    ).json()["data"]
    assert [a["id"] for a in listed[0]["allowedActions"]] == ["read", "run_action"]


async def test_listing_runs_costs_the_same_queries_for_two_runs_as_for_six(
    client: httpx.AsyncClient,
    workspace: Workspace,
    work_item: dict[str, Any],
    worker: Any,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    key = await workspace.key("owner", admin=True)
    for _ in range(6):
        assert (
            await create_run(client, workspace, key, work_item["id"], ["estimate", "risk_check"])
        ).status_code == 201
    principal = Principal(
        workspace.principals["owner"], workspace.id, "owner", "user", True, "", frozenset({"work-item-enhance:read"})
    )
    statements: list[str] = []
    original_fetch = db.fetch

    async def counting_fetch(sql: str, *args: Any) -> Any:
        statements.append(sql)
        return await original_fetch(sql, *args)

    monkeypatch.setattr(db, "fetch", counting_fetch)
    small, _ = await service.list_runs(principal, limit=2)
    for_two = len(statements)
    statements.clear()
    large, _ = await service.list_runs(principal, limit=6)
    for_six = len(statements)
    assert len(small) == 2 and len(large) == 6
    assert all(len(v.drafts) == 2 and len(v.actions) == 2 for v in large)
    assert for_six == for_two <= 6, (for_two, for_six)
