"""A GraphQL HTTP request under the input policy (groundwork.api.input_policy): a POST body is a JSON object
of `query`, `variables`, `operationName` and `extensions` sent as `application/json`, a GET has those as
its only query parameters. A refusal answers GraphQL's JSON shape with the policy's status and code."""

from __future__ import annotations

from typing import Any

import msgspec
from litestar import Request, Response
from litestar.enums import MediaType

from groundwork.api.input_policy.json_body import decode_body
from groundwork.api.input_policy.query_string import QueryParameters
from groundwork.domain.errors import FieldError, GroundworkError, InvalidRequest


class GraphQLRequestBody(msgspec.Struct, forbid_unknown_fields=True):
    """The members of a GraphQL-over-HTTP request."""

    query: str | None = None
    variables: dict[str, Any] | None = None
    operationName: str | None = None  # GraphQL-over-HTTP's own spelling
    extensions: dict[str, Any] | None = None


GET_PARAMETERS = QueryParameters(dict.fromkeys(("query", "variables", "operationName", "extensions"), "string"))


async def check_http_input(request: Request[Any, Any, Any]) -> None:
    """400 or 415 (a `GroundworkError`) for a request GraphQL should not even parse."""
    if request.method == "GET":
        GET_PARAMETERS.check(request.scope.get("query_string", b""))
        return
    QueryParameters({}).check(request.scope.get("query_string", b""))
    body = await request.body()
    if not body.strip():
        raise InvalidRequest(
            "A GraphQL request needs a body.", [FieldError("body", "is required: a JSON object with `query`")]
        )
    decode_body(body, request.headers.get("content-type"), GraphQLRequestBody)


def refusal(error: GroundworkError) -> Response[dict[str, Any]]:
    """A refused request in GraphQL's shape: no data, one error with the policy's code and field errors."""
    return Response(
        {"data": None, "errors": [{"message": error.detail, "extensions": {"code": error.code, **error.extra}}]},
        status_code=error.status,
        media_type=MediaType.JSON,
    )
