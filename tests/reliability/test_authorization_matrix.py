"""The authorization matrix, generated from what the app serves.

Every REST route (public and internal listener), every GraphQL query and mutation field and every MCP
tool is called by each unauthorised caller: no key, a revoked key, a key without the required scope,
a key of another workspace, and a principal of the same workspace who may not see the target. Each
answer must be the documented refusal (DESIGN "Errors": 401 `unauthenticated`, 403
`insufficient_scope` naming `required_scope`, 404 `not_found` for what the caller may not see) and
must not contain any id or title of the victim's resources that the request itself did not name.
What each entry requires is declared in `authorization_matrix.py`; an undeclared entry fails.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import httpx
import pytest
from graphql import GraphQLNonNull, GraphQLObjectType, GraphQLUnionType, get_named_type, is_leaf_type
from litestar import Litestar
from litestar.exceptions import WebSocketDisconnect
from litestar.testing import TestClient

from groundwork.api.app import create_app, create_internal_app
from groundwork.api.graphql.schema import GraphQLController, schema
from groundwork.api.mcp.server import build_mcp_server
from groundwork.config import Settings
from groundwork.domain.tenancy.scopes import ALL_SCOPES
from groundwork.domain.times import format_timestamp
from groundwork.persistence.repositories.tenancy import workspaces as tenancy
from groundwork.services.tenancy import api_keys
from groundwork.worker import outbox_relay
from tests.conftest import Workspace, idem, mcp_session
from tests.reliability import authorization_matrix as matrix

CALLERS = ("no key", "revoked key", "key without the scope", "key of another workspace", "principal without visibility")


# ---------------------------------------------------------------------------------------------- targets


@dataclass
class Victim:
    """A workspace holding one of every resource, the callers that may not reach them, and what must not leak."""

    ids: dict[str, str]
    owner: str  # an admin key of the victim workspace, to check afterwards that nothing changed
    recipient: str  # the key of the notification's owner (a participant of the thread)
    keys: dict[str, str | None]  # caller name → key (None: no Authorization header)
    internal_keys: dict[str, str | None]
    # Strings of the victim that each kind of caller must never see (ids, titles, unique words).
    secret_from_other: set[str] = field(default_factory=set)
    secret_from_invisible: set[str] = field(default_factory=set)
    scopeless: dict[str, str] = field(default_factory=dict)

    def without_scope(self, scope: str) -> str:
        return self.scopeless[scope]


async def _workspace(internal: httpx.AsyncClient) -> tuple[Workspace, str]:
    slug = f"m-{uuid.uuid4().hex[:12]}"
    ws = await tenancy.create_workspace(slug, f"Matrix {slug}")
    portfolio = await tenancy.create_portfolio(ws.id, "Portfolio")
    engagement = await tenancy.create_engagement(ws.id, portfolio.id, "Engagement")
    result = Workspace(ws.id, slug, internal)
    for key in ("ALPHA", "BETA"):
        project = await tenancy.create_project(ws.id, engagement.id, key, f"Project {key}")
        result.projects[key] = project.id
    return result, engagement.id


def _ok(response: httpx.Response) -> dict[str, Any]:
    assert response.status_code < 300, response.text
    return dict(response.json()["data"])


@pytest.fixture(scope="module")
async def victim(
    api_url: str, internal_api_url: str, worker: Any, temporal_client: Any, settings: Settings
) -> AsyncIterator[Victim]:
    word = uuid.uuid4().hex[:10]
    async with (
        httpx.AsyncClient(base_url=api_url, timeout=60) as client,
        httpx.AsyncClient(base_url=internal_api_url, timeout=60) as internal,
    ):
        a, engagement = await _workspace(internal)
        b, _ = await _workspace(internal)
        owner = await a.key("owner", admin=True)
        alice = await a.key("alice", memberships={"ALPHA": "lead"})
        bob = await a.key("bob", memberships={"ALPHA": "contributor"})
        ids: dict[str, str] = {
            "project": a.projects["ALPHA"],
            "engagement": engagement,
            "now": format_timestamp(datetime.now(UTC)),
        }

        item = _ok(
            await client.post(
                "/api/v1/work-items",
                json={
                    "project_id": ids["project"],
                    "title": f"Matrix target {word}",
                    "status": "todo",
                    "fields": {"description": f"Save cards with tokens. {word} must never leak."},
                },
                headers=a.headers(owner, **idem()),
            )
        )
        ids |= {"work_item": item["id"], "work_item_version": item["version"], "work_item_title": item["title"]}
        run = _ok(
            await client.post(
                "/api/v1/work-item-enhancements?wait=30",
                json={
                    "target": {"type": "work_item", "id": item["id"]},
                    "actions": ["description", "estimate"],
                    "confirm": True,
                },
                headers=a.headers(owner, **idem()),
            )
        )
        assert run["state"] == "ready_for_review", run
        ids |= {"run": run["id"], "draft": run["drafts"][0]["id"], "artifact": run["artifacts"][0]["id"]}

        provider_key = await a.provider_key()
        # Providers are the workspace's (any provider of it lists them): their name is not the target's word.
        provider_name = f"provider-{uuid.uuid4().hex[:10]}"
        provider = _ok(
            await internal.post(
                "/internal/v1/context-engine/providers",
                json={
                    "name": provider_name,
                    "classification": "delivery",
                    "capabilities": ["risks"],
                    "authority": "advisory",
                },
                headers=a.headers(provider_key, **idem()),
            )
        )
        ids |= {"provider": provider["id"], "provider_name": provider_name, "package_word": f"pkg{word}"}
        contribution = _ok(
            await internal.post(
                "/internal/v1/context-engine/contributions",
                params={"wait": 30},
                json={
                    "provider_id": provider["id"],
                    "project_id": ids["project"],
                    "term": f"pkg{word}",
                    "summary": f"The pkg{word} vendor may slip.",
                    "contribution_type": "risk",
                    "evidence": [
                        {
                            "capability": "risks",
                            "reference": {"kind": "external", "id": f"ext-{word}", "class": "general"},
                            "as_of": ids["now"],
                        }
                    ],
                    "generated_at": ids["now"],
                },
                headers=a.headers(provider_key, **idem()),
            )
        )
        ids["contribution"] = contribution["id"]
        packages = (
            await client.get(
                "/api/v1/context-engine/packages", params={"project_id": ids["project"]}, headers=a.headers(owner)
            )
        ).json()["data"]
        [package] = [p for p in packages if p["term"] == f"pkg{word}"]
        ids["package"] = package["id"]
        source = _ok(
            await internal.post(
                "/internal/v1/corpus/sources",
                params={"wait": 30},
                json={
                    "project_id": ids["project"],
                    "uri": f"notes-{word}.md",
                    "kind": "markdown",
                    "content": f"# Notes\n\nThe psg{word} migration needs a rollback plan.",
                },
                headers=a.headers(provider_key, **idem()),
            )
        )
        ids |= {"source": source["source"]["id"], "passage_word": f"psg{word}"}

        thread = _ok(
            await client.post(
                "/api/v1/messages",
                json={
                    "title": f"Thread {word}",
                    "participant_ids": [a.principals["bob"]],
                    "body": f"Secret body {word}",
                },
                headers=a.headers(alice, **idem()),
            )
        )
        await outbox_relay(temporal_client, settings).run_once()
        [notification] = (await client.get("/api/v1/notifications", headers=a.headers(bob))).json()["data"]
        read = _ok(
            await client.post(
                f"/api/v1/notifications/{notification['id']}/read",
                json={"expected_version": 1},
                headers=a.headers(bob, **idem()),
            )
        )
        draft = """mutation ($input: DraftNotificationChangeInput!) {
          draftNotificationChange(input: $input) { id valid } }"""
        proposal = (
            await client.post(
                "/graphql",
                json={
                    "query": draft,
                    "variables": {
                        "input": {
                            "notificationId": notification["id"],
                            "requestedOutcome": "acknowledged",
                            "expectedVersion": 2,
                        }
                    },
                },
                headers=a.headers(bob),
            )
        ).json()["data"]["draftNotificationChange"]
        ids |= {
            "thread": thread["id"],
            "thread_title": f"Thread {word}",
            "notification": notification["id"],
            "operation": read["operation_id"],
            "proposal": proposal["id"],
            "recipient": a.principals["bob"],
        }

        endpoint = _ok(
            await client.post(
                "/api/v1/webhook-endpoints",
                json={"url": f"http://127.0.0.1:9/hook-{word}", "event_types": ["notification.*"]},
                headers=a.headers(owner, **idem()),
            )
        )
        delivery = _ok(
            await client.post(f"/api/v1/webhook-endpoints/{endpoint['id']}/test", headers=a.headers(owner, **idem()))
        )
        app = _ok(
            await client.post(
                "/api/v1/connected-apps",
                json={
                    "name": f"app-{word}",
                    "kind": "assistant",
                    "direction": "read",
                    "provenance": "matrix",
                    "conflict": "reject",
                },
                headers=a.headers(owner, **idem()),
            )
        )
        ids |= {
            "endpoint": endpoint["id"],
            "endpoint_secret": endpoint["secret"],
            "delivery": delivery["id"],
            "app": app["id"],
        }

        revoked = await api_keys.issue_key(a.slug, "revoked", None, admin=True)
        assert await api_keys.revoke_key(revoked.api_key_id)
        revoked_provider = await api_keys.issue_key(
            a.slug, "revoked-provider", ["context-engine:contribute"], kind="provider"
        )
        assert await api_keys.revoke_key(revoked_provider.api_key_id)
        outsider = await a.key("outsider", memberships={"BETA": "lead"})
        intruder = await b.key("intruder", admin=True)
        scopeless = {
            scope: (
                await api_keys.issue_key(a.slug, f"without-{scope}", [s for s in ALL_SCOPES if s != scope], admin=True)
            ).key
            for scope in ALL_SCOPES
        }
        internal_keys: dict[str, str | None] = {
            "no key": None,
            "revoked key": revoked_provider.key,
            "customer key": owner,
            "key without the scope": (
                await api_keys.issue_key(a.slug, "reader-provider", ["context-engine:read"], kind="provider")
            ).key,
            "key of another workspace": await b.provider_key("intruding-provider"),
            "principal without visibility": await a.provider_key("unbound-provider", role=None),
        }

        everything = {
            ids[k]
            for k in (
                "work_item",
                "work_item_title",
                "run",
                "draft",
                "artifact",
                "package",
                "package_word",
                "contribution",
                "source",
                "passage_word",
                "thread",
                "thread_title",
                "notification",
                "operation",
                "proposal",
                "endpoint",
                "endpoint_secret",
                "delivery",
                "app",
            )
        } | {word, f"app-{word}", f"hook-{word}"}
        workspace_level = {
            ids["provider"],
            ids["provider_name"],
            a.principals["alice"],
            a.principals["bob"],
            a.principals["owner"],
        }
        yield Victim(
            ids=ids,
            owner=owner,
            recipient=bob,
            keys={
                "no key": None,
                "revoked key": revoked.key,
                "key of another workspace": intruder,
                "principal without visibility": outsider,
            },
            internal_keys=internal_keys,
            secret_from_other=everything | workspace_level | {a.id},
            secret_from_invisible=everything,
            scopeless=scopeless,
        )


# ------------------------------------------------------------------------------------------- checking


@dataclass
class Findings:
    """Every mismatch of one run of the matrix, reported together."""

    checked: int = 0
    problems: list[str] = field(default_factory=list)

    def expect(self, condition: bool, where: str, what: str) -> None:
        self.checked += 1
        if not condition:
            self.problems.append(f"{where}: {what}")

    def leaks(self, where: str, body: str, secret: set[str], request: str) -> None:
        # The request's own words may come back (an echoed id); nothing else of the victim may.
        leaked = sorted(s for s in secret if s and s not in request and s in body)
        self.expect(not leaked, where, f"answer shows the victim's {leaked}: {body[:300]}")

    def assert_clean(self) -> None:
        assert not self.problems, f"{len(self.problems)} of {self.checked} checks failed:\n" + "\n".join(self.problems)


def _problem(response: httpx.Response) -> tuple[int, str | None, Any]:
    try:
        body = response.json()
    except ValueError:
        return response.status_code, None, None
    if isinstance(body, dict):
        return response.status_code, body.get("code"), body.get("required_scope")
    return response.status_code, None, None


def _secret_for(victim: Victim, caller: str) -> set[str]:
    if caller == "key of another workspace":
        return victim.secret_from_other
    return victim.secret_from_invisible


def _refusal_expected(findings: Findings, where: str, answer: tuple[int, str | None, Any], outcome: str) -> None:
    status, code, _ = answer
    if outcome == matrix.NOT_FOUND:
        findings.expect((status, code) == (404, "not_found"), where, f"expected 404 not_found, got {status} {code}")
    elif outcome == matrix.PERMISSION_DENIED:
        findings.expect(
            (status, code) == (403, "permission_denied"), where, f"expected 403 permission_denied, got {status} {code}"
        )
    elif outcome == matrix.VALIDATION_FAILED:
        findings.expect(
            (status, code) == (422, "validation_failed"), where, f"expected 422 validation_failed, got {status} {code}"
        )
    else:
        findings.expect(
            200 <= status < 300, where, f"expected an answer over the caller's own data, got {status} {code}"
        )


def _request(route: str, row: matrix.Rest, ids: dict[str, str]) -> tuple[str, str, dict[str, Any], Any]:
    method, template = route.split(" ", 1)
    values = {}
    for name in [p.strip("{}") for p in template.split("/") if p.startswith("{")]:
        source = row.params.get(name, name.removesuffix("_id"))
        values[name] = ids.get(source, source)
    path = template.format(**values)
    body = row.body(ids) if row.body is not None else None
    return method, path, row.query(ids), body


async def _send(
    http: httpx.AsyncClient, key: str | None, method: str, path: str, query: dict[str, Any], body: Any
) -> httpx.Response:
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    if method in ("POST", "PUT", "PATCH", "DELETE"):
        headers |= idem()
    return await http.request(method, path, params=query, json=body, headers=headers)


async def _run_rest(
    findings: Findings, http: httpx.AsyncClient, victim: Victim, route: str, row: matrix.Rest, *, internal: bool
) -> None:
    method, path, query, body = _request(route, row, victim.ids)
    request_text = path + json.dumps(query) + json.dumps(body)
    if row.scope == matrix.TRANSPORT:
        return
    if row.scope == matrix.PUBLIC:
        # Answered without a key; a forged action-link token is an unknown link (404). Nothing of the victim.
        expected = 404 if "token" in row.params else 200
        response = await _send(http, None, method, path, query, body)
        findings.expect(response.status_code == expected, route, f"public route answered {response.status_code}")
        findings.leaks(route, response.text, victim.secret_from_other, request_text)
        return
    keys = victim.internal_keys if internal else victim.keys
    for caller in CALLERS:
        where = f"{route} [{caller}]"
        if caller == "key without the scope":
            if row.scope is None:
                continue
            key = victim.internal_keys[caller] if internal else victim.without_scope(row.scope)
        else:
            key = keys[caller]
        response = await _send(http, key, method, path, query, body)
        answer = _problem(response)
        if caller in ("no key", "revoked key"):
            refusal = (404, "not_found") if internal else (401, "unauthenticated")
            findings.expect(answer[:2] == refusal, where, f"expected {refusal}, got {answer[:2]}")
        elif caller == "key without the scope":
            findings.expect(
                answer == (403, "insufficient_scope", row.scope),
                where,
                f"expected 403 insufficient_scope {row.scope}, got {answer}",
            )
        elif caller == "key of another workspace":
            _refusal_expected(findings, where, answer, row.unseen_other)
        else:
            _refusal_expected(findings, where, answer, row.invisible)
        findings.expect(response.status_code != 500, where, "500")
        findings.leaks(where, response.text, _secret_for(victim, caller), request_text)
    if internal:
        response = await _send(http, victim.internal_keys["customer key"], method, path, query, body)
        answer = _problem(response)
        findings.expect(answer[:2] == (404, "not_found"), f"{route} [customer key]", f"expected 404, got {answer[:2]}")
        findings.leaks(f"{route} [customer key]", response.text, victim.secret_from_other, request_text)


async def _nothing_changed(client: httpx.AsyncClient, victim: Victim) -> None:
    """After every refused call, the victim's resources are as they were."""
    owner = {"Authorization": f"Bearer {victim.owner}"}
    ids = victim.ids
    item = (await client.get(f"/api/v1/work-items/{ids['work_item']}", headers=owner)).json()["data"]
    assert (item["version"], item["title"]) == (ids["work_item_version"], ids["work_item_title"])
    run = (await client.get(f"/api/v1/work-item-enhancements/{ids['run']}", headers=owner)).json()["data"]
    assert run["state"] == "ready_for_review" and run["appliedDraftIds"] == []
    assert run["requestedActions"] == ["description", "estimate"]
    endpoint = await client.get(f"/api/v1/webhook-endpoints/{ids['endpoint']}", headers=owner)
    assert endpoint.status_code == 200 and endpoint.json()["data"]["enabled"] is True
    assert endpoint.json()["data"]["previousSecretExpiresAt"] is None  # never rotated
    app = (await client.get(f"/api/v1/connected-apps/{ids['app']}", headers=owner)).json()["data"]
    assert app["status"] == "registered"
    items = (await client.get("/api/v1/work-items", params={"project_id": ids["project"]}, headers=owner)).json()[
        "data"
    ]
    assert [i["id"] for i in items] == [ids["work_item"]]  # no intruder's work item
    runs = (await client.get("/api/v1/work-item-enhancements", headers=owner)).json()["data"]
    assert [r["id"] for r in runs] == [ids["run"]]  # no intruder's run
    recipient = {"Authorization": f"Bearer {victim.recipient}"}
    notification = (await client.get(f"/api/v1/notifications/{ids['notification']}", headers=recipient)).json()
    assert (notification["data"]["status"], notification["data"]["version"]) == ("read", 2)
    thread = (await client.get(f"/api/v1/messages/{ids['thread']}", headers=recipient)).json()["data"]
    assert len(thread["messages"]) == 1  # nobody else posted into it


# ---------------------------------------------------------------------------------------------- tests


def test_every_route_field_and_tool_is_declared_in_the_matrix(settings: Settings) -> None:
    public = matrix.undeclared(matrix.rest_surface(create_app(settings)), matrix.REST)
    internal = matrix.undeclared(matrix.rest_surface(create_internal_app(settings)), matrix.INTERNAL)
    graphql = matrix.undeclared(matrix.graphql_surface(schema), matrix.GRAPHQL)
    assert public == ([], []), f"public routes (undeclared, stale): {public}"
    assert internal == ([], []), f"internal routes (undeclared, stale): {internal}"
    assert graphql == ([], []), f"GraphQL fields (undeclared, stale): {graphql}"


async def test_every_mcp_tool_is_declared_in_the_matrix() -> None:
    tools = {t.name for t in await build_mcp_server().list_tools()}
    assert matrix.undeclared(tools, matrix.MCP) == ([], []), "MCP tools (undeclared, stale)"


async def test_every_rest_route_refuses_every_unauthorised_caller_and_shows_nothing(
    client: httpx.AsyncClient, victim: Victim, settings: Settings
) -> None:
    findings = Findings()
    surface = matrix.rest_surface(create_app(settings))
    for route in sorted(surface):
        await _run_rest(findings, client, victim, route, matrix.REST[route], internal=False)
    route, row = matrix.OPERATION_OF_A_COMMAND
    await _run_rest(findings, client, victim, route, row, internal=False)
    findings.assert_clean()
    await _nothing_changed(client, victim)


async def test_every_internal_route_is_absent_to_all_but_its_providers_and_shows_nothing(
    internal_api_url: str, client: httpx.AsyncClient, victim: Victim, settings: Settings
) -> None:
    findings = Findings()
    surface = matrix.rest_surface(create_internal_app(settings))
    async with httpx.AsyncClient(base_url=internal_api_url, timeout=60) as internal:
        for route in sorted(surface):
            await _run_rest(findings, internal, victim, route, matrix.INTERNAL[route], internal=True)
    findings.assert_clean()
    await _nothing_changed(client, victim)


# ---------------------------------------------------------------------------------------------- GraphQL


def _selection(kind: Any, depth: int) -> str:
    named = get_named_type(kind)
    if is_leaf_type(named):
        return ""
    if isinstance(named, GraphQLUnionType) or depth == 0:
        return "{ __typename }"
    assert isinstance(named, GraphQLObjectType)
    parts = ["__typename"]
    for name, child in named.fields.items():
        if any(isinstance(arg.type, GraphQLNonNull) for arg in child.args.values()):
            continue
        parts.append(f"{name} {_selection(child.type, depth - 1)}".strip())
    return "{ " + " ".join(parts) + " }"


def _graphql_document(entry: str, arguments: dict[str, Any]) -> str:
    kind, name = entry.split(" ", 1)
    graphql = schema._schema
    root = graphql.query_type if kind == "query" else graphql.mutation_type
    assert root is not None
    definition = root.fields[name]
    declared = {a: str(t.type) for a, t in definition.args.items() if a in arguments}
    variables = ", ".join(f"${a}: {t}" for a, t in declared.items())
    call = ", ".join(f"{a}: ${a}" for a in declared)
    header = f"{kind} ({variables})" if variables else kind
    field_call = f"{name}({call})" if call else name
    return f"{header} {{ {field_call} {_selection(definition.type, 3)} }}"


def _graphql_codes(body: dict[str, Any], name: str) -> list[str]:
    codes = [str((e.get("extensions") or {}).get("code")) for e in body.get("errors") or []]
    payload = (body.get("data") or {}).get(name)
    if isinstance(payload, dict) and isinstance(payload.get("errors"), list):
        codes += [str(e.get("code")) for e in payload["errors"]]
    return codes


async def test_every_graphql_field_refuses_every_unauthorised_caller_and_shows_nothing(
    client: httpx.AsyncClient, victim: Victim
) -> None:
    findings = Findings()
    for entry in sorted(matrix.graphql_surface(schema)):
        row = matrix.GRAPHQL[entry]
        name = entry.split(" ", 1)[1]
        for caller in CALLERS:
            where = f"GraphQL {entry} [{caller}]"
            if caller == "key without the scope":
                if row.scope is None:
                    continue
                key: str | None = victim.without_scope(row.scope)
            else:
                key = victim.keys[caller]
            arguments = row.args(victim.ids)
            document = _graphql_document(entry, arguments)
            headers = {"Authorization": f"Bearer {key}"} if key else {}
            response = await client.post("/graphql", json={"query": document, "variables": arguments}, headers=headers)
            request_text = json.dumps(arguments)
            findings.expect(response.status_code != 500, where, "500")
            findings.leaks(where, response.text, _secret_for(victim, caller), request_text)
            # No key, an unusable key and a missing scope are answered alike: HTTP 200, the field's coded error.
            findings.expect(response.status_code == 200, where, f"expected 200, got {response.status_code}")
            body = response.json()
            codes = _graphql_codes(body, name)
            if caller in ("no key", "revoked key"):
                findings.expect("unauthenticated" in codes, where, f"expected unauthenticated, got {codes}")
            elif caller == "key without the scope":
                findings.expect("insufficient_scope" in codes, where, f"expected insufficient_scope, got {codes}")
                scopes = [(e.get("extensions") or {}).get("required_scope") for e in body.get("errors") or []]
                payload = (body.get("data") or {}).get(name)
                if isinstance(payload, dict):
                    scopes += [(e.get("details") or {}).get("required_scope") for e in payload.get("errors") or []]
                findings.expect(row.scope in scopes, where, f"required_scope {row.scope} not named: {body}")
            else:
                outcome = row.unseen_other if caller == "key of another workspace" else row.invisible
                if outcome == matrix.LISTED:
                    findings.expect(not codes, where, f"expected the caller's own data, got {codes}")
                else:
                    absent = (body.get("data") or {}).get(name) is None and not codes
                    findings.expect("not_found" in codes or absent, where, f"expected not_found (or null), got {codes}")
    findings.assert_clean()
    await _nothing_changed(client, victim)


def test_graphql_over_websocket_is_refused_at_the_handshake() -> None:
    """The auth middleware guards HTTP only, and no subscriptions exist: GraphQL's WebSocket transport takes no
    protocol, so no operation ever runs over it (with or without a key)."""
    app = Litestar(route_handlers=[GraphQLController])
    with TestClient(app) as http:
        for protocols in (["graphql-transport-ws"], ["graphql-ws"], []):
            with (
                pytest.raises(WebSocketDisconnect) as refused,
                http.websocket_connect("/graphql", subprotocols=protocols) as ws,
            ):
                ws.send_json({"type": "connection_init"})
                ws.receive_json()
            assert refused.value.code == 4406  # "Subprotocol not acceptable": closed before any message is read


# --------------------------------------------------------------------------------------------------- MCP


def _tool_code(result: Any) -> tuple[str | None, Any]:
    text = result.content[0].text if result.content else ""
    if not result.is_error or "{" not in text:
        return None, None
    try:
        error = json.loads(text[text.index("{") :])
    except ValueError:
        return "unparsable", None
    return error.get("code"), error.get("required_scope")


async def test_every_mcp_tool_refuses_every_unauthorised_caller_and_shows_nothing(
    api_url: str, client: httpx.AsyncClient, victim: Victim
) -> None:
    findings = Findings()
    tools = sorted(t.name for t in await build_mcp_server().list_tools())
    # Without a usable key the transport itself refuses, before any tool runs (one JSON-RPC call per tool).
    for caller in ("no key", "revoked key"):
        key = victim.keys[caller]
        for name in tools:
            arguments = matrix.MCP[name].args(victim.ids)
            headers = {"Accept": "application/json, text/event-stream"} | (
                {"Authorization": f"Bearer {key}"} if key else {}
            )
            call = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": name, "arguments": arguments}}
            response = await client.post("/mcp/", json=call, headers=headers)
            where = f"MCP {name} [{caller}]"
            findings.expect(
                _problem(response)[:2] == (401, "unauthenticated"),
                where,
                f"got {response.status_code} {response.text[:200]}",
            )
            findings.leaks(where, response.text, victim.secret_from_other, json.dumps(arguments))
    by_caller: dict[str, list[tuple[str, str]]] = {}
    for name in tools:
        row = matrix.MCP[name]
        if row.scope is not None:
            by_caller.setdefault(victim.without_scope(row.scope), []).append((name, "key without the scope"))
        for caller in ("key of another workspace", "principal without visibility"):
            key = victim.keys[caller]
            assert key is not None
            by_caller.setdefault(key, []).append((name, caller))
    for key, calls in by_caller.items():
        async with mcp_session(api_url, key) as session:
            for name, caller in calls:
                row = matrix.MCP[name]
                arguments = row.args(victim.ids)
                result = await session.call_tool(name, arguments)
                where = f"MCP {name} [{caller}]"
                text = json.dumps([c.model_dump() for c in result.content]) + json.dumps(result.structured_content)
                findings.leaks(where, text, _secret_for(victim, caller), json.dumps(arguments))
                code, scope = _tool_code(result)
                if caller == "key without the scope":
                    findings.expect((code, scope) == ("insufficient_scope", row.scope), where, f"got {code} {scope}")
                    continue
                outcome = row.unseen_other if caller == "key of another workspace" else row.invisible
                if outcome == matrix.LISTED:
                    findings.expect(not result.is_error, where, f"expected the caller's own data, got {code}")
                else:
                    findings.expect(code == outcome, where, f"expected {outcome}, got {code}: {text[:200]}")
    findings.assert_clean()
    await _nothing_changed(client, victim)
