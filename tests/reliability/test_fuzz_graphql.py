"""GraphQL under fuzzing and hostile documents: every error has a stable `extensions.code`, and the depth,
alias and cost limits refuse a document before any resolver runs."""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path
from typing import Any

import httpx

from groundwork.api.graphql.limits import MAX_ALIASES, MAX_DEPTH, MAX_TOKENS
from tests.conftest import Workspace

SCHEMATHESIS = Path(sys.executable).parent / "schemathesis"
REPO = Path(__file__).resolve().parents[2]
SEED = 20261123
MAX_EXAMPLES = 12
MAX_SECONDS = 20


async def _graphql(client: httpx.AsyncClient, key: str, query: str) -> dict[str, Any]:
    response = await client.post("/graphql", json={"query": query}, headers={"Authorization": f"Bearer {key}"})
    assert response.status_code < 500, response.text
    return dict(response.json())


def _codes(answer: dict[str, Any]) -> list[str | None]:
    return [(e.get("extensions") or {}).get("code") for e in answer.get("errors") or []]


async def test_graphql_errors_all_carry_a_code_under_fuzzing(
    client: httpx.AsyncClient, api_url: str, workspace: Workspace, tmp_path: Path
) -> None:
    key = await workspace.key("admin", admin=True)
    config = tmp_path / "schemathesis.toml"
    config.write_text('hooks = "tests.reliability.graphql_hooks"\n')
    process = await asyncio.create_subprocess_exec(
        str(SCHEMATHESIS),
        "--config-file",
        str(config),
        "run",
        f"{api_url}/graphql",
        "--header",
        f"Authorization: Bearer {key}",
        "--phases",
        "fuzzing",
        "--checks",
        "graphql_no_server_error,graphql_errors_are_coded",
        "--seed",
        str(SEED),
        "--max-examples",
        str(MAX_EXAMPLES),
        "--max-time",
        str(MAX_SECONDS),
        "--workers",
        "1",
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT,
        cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": str(REPO), "NO_COLOR": "1"},
    )
    output, _ = await asyncio.wait_for(process.communicate(), timeout=MAX_SECONDS * 6)
    text = output.decode(errors="replace")
    (tmp_path / "schemathesis.txt").write_text(text)
    assert process.returncode == 0, text[-20000:]
    generated = int(text.split(" generated, ")[0].rsplit(maxsplit=1)[-1])
    assert generated >= 200, text[-5000:]


def _nested(depth: int) -> str:
    """A document whose selections nest `depth` levels deep (through `viewer`)."""
    inner = "id"
    for _ in range(depth - 1):
        inner = f"viewer {{ {inner} }}"
    return "{ " + inner + " }"


async def test_a_document_deeper_than_the_limit_is_refused_with_query_too_deep(
    client: httpx.AsyncClient, workspace: Workspace
) -> None:
    key = await workspace.key("admin", admin=True)
    answer = await _graphql(client, key, _nested(MAX_DEPTH + 2))
    assert "query_too_deep" in _codes(answer), answer
    assert answer.get("data") is None
    # The deepest real documents (five levels) are well inside the limit.
    real = "{ notificationList { nodes { id } edges { node { id } } pageInfo { __typename } } }"
    assert _codes(await _graphql(client, key, real)) == []


async def test_too_many_aliases_are_refused_with_too_many_aliases_and_run_nothing(
    client: httpx.AsyncClient, workspace: Workspace
) -> None:
    key = await workspace.key("admin", admin=True)
    many = "{ " + " ".join(f"a{n}: viewer {{ id }}" for n in range(MAX_ALIASES + 1)) + " }"
    answer = await _graphql(client, key, many)
    assert _codes(answer) == ["too_many_aliases"], answer
    assert answer.get("data") is None
    allowed = "{ " + " ".join(f"a{n}: viewer {{ id }}" for n in range(MAX_ALIASES)) + " }"
    answer = await _graphql(client, key, allowed)
    assert _codes(answer) == [] and len(answer["data"]) == MAX_ALIASES, answer


async def test_a_document_over_the_cost_limit_is_refused_with_query_too_costly(
    client: httpx.AsyncClient, workspace: Workspace
) -> None:
    key = await workspace.key("admin", admin=True)
    costly = "{ viewer { " + "id " * MAX_TOKENS + "} }"
    answer = await _graphql(client, key, costly)
    assert _codes(answer) == ["query_too_costly"], answer
    assert answer.get("data") is None


async def test_malformed_and_unknown_documents_answer_coded_errors(
    client: httpx.AsyncClient, workspace: Workspace
) -> None:
    key = await workspace.key("admin", admin=True)
    assert _codes(await _graphql(client, key, "{ viewer { id ")) == ["graphql_parse_failed"]
    assert _codes(await _graphql(client, key, "{ noSuchField }")) == ["graphql_validation_failed"]
    answer = await _graphql(client, key, '{ workItems(first: "many") { nodes { id } } }')
    assert _codes(answer) and set(_codes(answer)) == {"graphql_validation_failed"}, answer


async def test_a_request_graphql_cannot_take_answers_json_with_a_code(
    client: httpx.AsyncClient, workspace: Workspace
) -> None:
    key = await workspace.key("admin", admin=True)
    headers = {"Authorization": f"Bearer {key}", "Content-Type": "application/json"}
    for body in ("{}", "not json", '{"query": "{ viewer { id } }", "variables": "x"}', '{"query": 5}'):
        response = await client.post("/graphql", content=body, headers=headers)
        assert response.status_code == 400, (body, response.text)
        assert response.headers["content-type"].startswith("application/json"), response.headers
        assert [e["extensions"]["code"] for e in response.json()["errors"]] == ["invalid_request"], response.text
    mutation_over_get = await client.get(
        "/graphql", params={"query": "mutation { draftNotificationChange(input: {}) { valid } }"}, headers=headers
    )
    assert mutation_over_get.status_code == 400
    assert mutation_over_get.json()["errors"][0]["extensions"]["code"] == "invalid_request"
