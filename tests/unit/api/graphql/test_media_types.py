"""Which response media type a GraphQL client's Accept asks for."""

from __future__ import annotations

import pytest

from groundwork.api.graphql.media_types import prefers_graphql_response


@pytest.mark.parametrize(
    "accept",
    [
        "application/graphql-response+json",
        "application/graphql-response+json, application/json;q=0.9",
        "application/json;q=0.5, application/graphql-response+json",
        "application/graphql-response+json, application/json",
        "application/graphql-response+json;charset=utf-8, */*;q=0.1",
    ],
)
def test_accept_preferring_graphql_response_gets_it(accept: str) -> None:
    assert prefers_graphql_response(accept)


@pytest.mark.parametrize(
    "accept",
    [
        None,
        "",
        "application/json",
        "*/*",
        "application/*",
        "application/json, application/graphql-response+json",
        "application/graphql-response+json;q=0.5, application/json",
        "application/graphql-response+json;q=0",
        "text/html",
    ],
)
def test_accept_without_that_preference_keeps_application_json(accept: str | None) -> None:
    assert not prefers_graphql_response(accept)
