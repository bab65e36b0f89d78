"""GraphQL over HTTP: a client whose Accept prefers `application/graphql-response+json` gets that media type
and the spec's status codes (a document that does not parse or validate is 400 with no `data`; once execution
began it is 200, field errors included); `application/json` clients keep every answer 200, as before."""

from __future__ import annotations

import httpx

from tests.conftest import Workspace

MODERN = {"Accept": "application/graphql-response+json, application/json;q=0.9"}
DOCUMENTS = {
    "valid": "{ viewer { id } }",
    "unparsable": "{ viewer { id ",
    "invalid": "{ viewer { noSuchField } }",
    "field error": '{ workItems(after: "not-a-cursor") { nodes { id } } }',
}


async def _answers(client: httpx.AsyncClient, headers: dict[str, str]) -> dict[str, httpx.Response]:
    return {
        name: await client.post("/graphql", json={"query": query}, headers=headers) for name, query in DOCUMENTS.items()
    }


def _codes(response: httpx.Response) -> list[str]:
    return [e["extensions"]["code"] for e in response.json().get("errors") or []]


async def test_a_graphql_response_client_gets_its_media_type_and_4xx_only_for_request_errors(
    client: httpx.AsyncClient, workspace: Workspace
) -> None:
    key = await workspace.key("reader", admin=True)
    answers = await _answers(client, {**workspace.headers(key), **MODERN})
    for name, response in answers.items():
        assert response.headers["content-type"].startswith("application/graphql-response+json"), name
    assert answers["valid"].status_code == 200 and answers["valid"].json()["data"]["viewer"]["id"]
    for name, code in (("unparsable", "graphql_parse_failed"), ("invalid", "graphql_validation_failed")):
        assert answers[name].status_code == 400, name
        assert "data" not in answers[name].json() and _codes(answers[name]) == [code], name
    # Execution began: a field's error is 200 with `data` (null where the field failed).
    field_error = answers["field error"]
    assert field_error.status_code == 200 and "data" in field_error.json()
    assert _codes(field_error) == ["invalid_request"]


async def test_a_refused_http_request_keeps_its_status_in_the_graphql_response_media_type(
    client: httpx.AsyncClient, workspace: Workspace
) -> None:
    key = await workspace.key("reader", admin=True)
    response = await client.post(
        "/graphql", json={"query": "{ viewer { id } }", "unknown": 1}, headers={**workspace.headers(key), **MODERN}
    )
    assert response.status_code == 400
    assert response.headers["content-type"].startswith("application/graphql-response+json")
    assert "data" not in response.json() and _codes(response) == ["invalid_request"]


async def test_an_application_json_client_keeps_every_graphql_answer_200(
    client: httpx.AsyncClient, workspace: Workspace
) -> None:
    key = await workspace.key("reader", admin=True)
    for accept in (None, "application/json", "*/*", "application/json, application/graphql-response+json"):
        headers = workspace.headers(key) | ({"Accept": accept} if accept else {})
        for name, response in (await _answers(client, headers)).items():
            assert response.status_code == 200, (accept, name)
            assert response.headers["content-type"].startswith("application/json"), (accept, name)
            assert "data" in response.json(), (accept, name)
