"""A value the database refuses (a NUL character, a number out of range) is the coded 400 on every transport,
and no driver message ever reaches a client."""

from __future__ import annotations

import json

import httpx
import pytest

from tests.conftest import Workspace, idem, mcp_session

NUL = "wi_\u0000x"
DRIVER_WORDS = ("UTF8", "0x00", "asyncpg", "invalid byte sequence", "int32", "out of range for", "query argument")


def _clean(text: str) -> None:
    for words in DRIVER_WORDS:
        assert words not in text, text


async def test_graphql_answers_invalid_request_for_a_nul_in_an_id(
    client: httpx.AsyncClient, workspace: Workspace
) -> None:
    key = await workspace.key(admin=True)
    queries = [
        ("query ($id: ID!) { workItem(id: $id) { id } }", {"id": NUL}),
        ("query ($id: ID!) { workItemEnhancementRun(id: $id) { id } }", {"id": NUL}),
        ("query ($t: ID) { workItemEnhancementRuns(targetId: $t) { nodes { id } } }", {"t": NUL}),
    ]
    for query, variables in queries:
        response = await client.post(
            "/graphql", json={"query": query, "variables": variables}, headers=workspace.headers(key)
        )
        assert response.status_code == 200, response.text
        [error] = response.json()["errors"]
        assert error["extensions"]["code"] == "invalid_request", (query, response.text)
        _clean(response.text)


async def test_mcp_tools_answer_invalid_request_for_a_nul_in_an_id(api_url: str, workspace: Workspace) -> None:
    key = await workspace.key(admin=True)
    async with mcp_session(api_url, key) as session:
        for tool, arguments in (
            ("get_work_item", {"work_item_id": NUL}),
            ("get_enhancement_run", {"run_id": NUL}),
        ):
            result = await session.call_tool(tool, arguments)
            assert result.is_error, (tool, result.content)
            text = result.content[0].text
            assert json.loads(text[text.index("{") :])["code"] == "invalid_request", (tool, text)
            _clean(text)


async def test_rest_answers_invalid_request_without_the_driver_message(
    client: httpx.AsyncClient, workspace: Workspace
) -> None:
    key = await workspace.key(admin=True)
    for response in (
        await client.get("/api/v1/work-items/wi_%00x", headers=workspace.headers(key)),
        await client.post(
            "/api/v1/work-items",
            json={"project_id": workspace.projects["ALPHA"], "title": "a\u0000b"},
            headers=workspace.headers(key, **idem()),
        ),
    ):
        assert response.status_code == 400 and response.json()["code"] == "invalid_request", response.text
        _clean(response.text)


async def test_the_database_layer_turns_every_refused_value_into_the_coded_error(database: str) -> None:
    from groundwork.domain.errors import UnusableValue
    from groundwork.persistence import db

    cases = [
        ("SELECT $1::text AS v", "a\u0000b", "a character that cannot be stored"),  # refused by PostgreSQL
        ("SELECT $1::int AS v", 10**12, "a number is out of range"),  # refused by asyncpg while encoding
        ("SELECT 2147483647::int + $1::int AS v", 1, "a number is out of range"),  # overflow in PostgreSQL
        ("SELECT $1::text::timestamptz AS v", "not a time", "a date or time is not valid"),
    ]
    for sql, value, what in cases:
        with pytest.raises(UnusableValue) as refused:
            await db.fetch(sql, value)
        assert refused.value.code == "invalid_request" and refused.value.status == 400
        [error] = refused.value.errors
        assert what in error.message, (sql, error.message)
        _clean(error.message)
