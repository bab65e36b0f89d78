"""The OpenAPI document's conventions beyond what each route declares: a described tag for every tag in use, a
description on every operation, `Location` on 201 and 202, `WWW-Authenticate` on 401, the IETF `RateLimit-Policy`
and `RateLimit` headers on rate-limited routes, GraphQL's own answers at `/graphql`, and tidy nullable schemas
(a constraint beside a `oneOf` moved into its non-null arm, a one-arm `oneOf` unwrapped)."""

from __future__ import annotations

from typing import Any

from litestar import Litestar
from litestar.openapi.spec import (
    OpenAPI,
    OpenAPIHeader,
    OpenAPIMediaType,
    OpenAPIResponse,
    OpenAPIType,
    Operation,
    Reference,
    Schema,
    Tag,
)

from groundwork.api.errors import WWW_AUTHENTICATE

# What each tag groups, as the reference shows it.
TAGS: dict[str, str] = {
    "work item enhancement": "Enhancement runs of a work item: actions, drafts, artifacts, apply (contract v0.1).",
    "operations": "The status of a long-running operation: an enhancement run or a notification command.",
    "work items": "The canonical work items of the projects the caller can see.",
    "projects": "Projects, with the engagement and portfolio they belong to.",
    "context engine": "Context packages, their evidence and providers, briefings and evidence search (contract v0.1).",
    "agent API": "Read models for agents: delivery, sprint and risk signals of a project (scope `agent:read`).",
    "notifications": "Notifications and messaging: contract v0.2 (preview). Self-scoped inbox, lifecycle and snooze "
    "commands, bulk moves, a live feed (Server-Sent Events), participant-scoped threads, preferences, action links "
    "and the pages behind e-mail links.",
    "webhooks": "Webhook endpoints and their deliveries (Standard Webhooks signatures).",
    "connected apps": "Connected apps and their declarations (contract v0.2, preview).",
    "administration": "Portfolios, engagements, project members and tracker imports (scope `workspace:admin`).",
    "people": "The caller and the principals it may address.",
    "api keys": "API keys: issue, list and revoke.",
    "health": "Liveness and readiness probes (no key).",
    "graphql": "The GraphQL endpoint: the same application layer as REST.",
    "internal: context providers": "Provider registration and governed contributions to the context engine "
    "(internal listener, provider keys only).",
    "internal: corpus providers": "Sources contributed to a project's corpus (internal listener, provider keys only).",
}
_LOCATION = OpenAPIHeader(
    description="The created resource (201), or where to follow the accepted work (202).",
    required=True,
    schema=Schema(type=OpenAPIType.STRING, format="uri-reference"),  # type: ignore[arg-type]
)
_WWW_AUTHENTICATE = OpenAPIHeader(
    description=f"`{WWW_AUTHENTICATE}`: send the API key as `Authorization: Bearer <key>`.",
    required=True,
    schema=Schema(type=OpenAPIType.STRING),
)
_RATE_LIMIT_POLICY = OpenAPIHeader(
    description='The per-key quota (IETF RateLimit header fields): `"per-key";q=<requests>;w=60`.',
    schema=Schema(type=OpenAPIType.STRING),
)
_RATE_LIMIT = OpenAPIHeader(
    description='What is left of it: `"per-key";r=<remaining>;t=<seconds until it is full again>`.',
    schema=Schema(type=OpenAPIType.STRING),
)
_GRAPHQL_RESPONSE = "GraphQLResponse"
_CONSTRAINTS = (
    "enum",
    "format",
    "pattern",
    "minimum",
    "maximum",
    "min_length",
    "max_length",
    "min_items",
    "max_items",
    "unique_items",
)


def _graphql_response_schema() -> Schema:
    return Schema(
        type=OpenAPIType.OBJECT,
        description="A GraphQL response: `data`, and `errors` (each with `extensions.code`) when any.",
        properties={
            "data": Schema(one_of=[Schema(type=OpenAPIType.OBJECT), Schema(type=OpenAPIType.NULL)]),
            "errors": Schema(type=OpenAPIType.ARRAY, items=Schema(type=OpenAPIType.OBJECT)),
            "extensions": Schema(type=OpenAPIType.OBJECT),
        },
    )


def _graphql(operation: Operation, method: str) -> None:
    """GraphQL answers GraphQL JSON (refusals too, with `extensions.code`), never Litestar's error schema."""
    answer = OpenAPIMediaType(schema=Reference(ref=f"#/components/schemas/{_GRAPHQL_RESPONSE}"))
    content = {"application/json": answer}
    if method == "get":
        content["text/html"] = OpenAPIMediaType(schema=Schema(type=OpenAPIType.STRING))
    operation.summary = "GraphiQL, or a GraphQL query in the URL" if method == "get" else "A GraphQL request"
    operation.description = (
        "GET: a browser gets GraphiQL; `?query=` runs a query (never a mutation). POST: a JSON body with `query`, "
        "`variables` and `operationName`. Errors are GraphQL errors with `extensions.code`."
    )
    operation.tags = ["graphql"]
    responses = dict(operation.responses or {})
    responses["200"] = OpenAPIResponse(description="The GraphQL response.", content=content)
    for status in ("400", "404", "405", "413", "415"):
        if status in responses:
            responses[status] = OpenAPIResponse(
                description="Refused before GraphQL ran: a GraphQL error.", content=content
            )
    operation.responses = responses


def _headers(operation: Operation) -> None:
    responses = operation.responses or {}
    limited = "429" in responses
    for status, response in responses.items():
        if not isinstance(response, OpenAPIResponse):
            continue
        headers = dict(response.headers or {})
        if status in ("201", "202"):
            headers["Location"] = _LOCATION
        if status == "401":
            headers["WWW-Authenticate"] = _WWW_AUTHENTICATE
        if limited and (status.startswith("2") or status == "429"):
            headers["RateLimit-Policy"] = _RATE_LIMIT_POLICY
            headers["RateLimit"] = _RATE_LIMIT
        response.headers = headers or None


def _tidy(schema: Any) -> Any:
    """A nullable schema with its constraints in the non-null arm; a one-arm `oneOf` unwrapped."""
    if isinstance(schema, Reference) or not isinstance(schema, Schema):
        return schema
    for name in ("properties", "pattern_properties"):
        members = getattr(schema, name, None)
        if members:
            setattr(schema, name, {key: _tidy(value) for key, value in members.items()})
    if isinstance(schema.items, Schema):
        schema.items = _tidy(schema.items)
    if isinstance(schema.additional_properties, Schema):
        schema.additional_properties = _tidy(schema.additional_properties)
    if not schema.one_of:
        return schema
    arms = [_tidy(arm) for arm in schema.one_of]
    kinds = {arm.type for arm in arms if isinstance(arm, Schema)}
    if OpenAPIType.INTEGER in kinds and OpenAPIType.NUMBER in kinds:
        # `number` takes integers too: arms of a `oneOf` must not overlap.
        arms = [arm for arm in arms if not (isinstance(arm, Schema) and arm.type == OpenAPIType.INTEGER)]
    values = [arm for arm in arms if not (isinstance(arm, Schema) and arm.type == OpenAPIType.NULL)]
    if len(values) == 1 and isinstance(values[0], Schema):
        # Constraints stated beside the `oneOf` belong to its one non-null arm (generators read them there).
        for name in _CONSTRAINTS:
            if getattr(schema, name, None) is not None:
                if getattr(values[0], name, None) is None:
                    setattr(values[0], name, getattr(schema, name))
                setattr(schema, name, None)
    if len(arms) == 1 and isinstance(arms[0], Schema):
        arm = arms[0]
        arm.description = arm.description or schema.description
        arm.deprecated = arm.deprecated or schema.deprecated
        return arm
    if len(arms) == 1:
        return arms[0]  # a reference alone (an optional member that is never null)
    schema.one_of = arms
    return schema


def _describe(path: str, method: str, operation: Operation, opt: dict[str, Any]) -> None:
    if operation.description:
        return
    scope = opt.get("scope")
    public = opt.get("auth") == "public"
    needs = "No key needed." if public else (f"Scope `{scope}`." if scope else "Any valid key.")
    operation.description = f"{operation.summary or method.upper() + ' ' + path}. {needs}"


def apply_conventions(app: Litestar, handlers: dict[tuple[str, str], dict[str, Any]]) -> OpenAPI:
    """Add the document-wide conventions to `app`'s OpenAPI document (`handlers`: each operation's `opt`)."""
    document = app.openapi_schema
    schemas = document.components.schemas if document.components and document.components.schemas else {}
    if "/graphql" in (document.paths or {}):
        schemas[_GRAPHQL_RESPONSE] = _graphql_response_schema()
        schemas.pop("GraphQLResource", None)
    for name, schema in list(schemas.items()):
        schemas[name] = _tidy(schema)
    used: set[str] = set()
    for path, item in (document.paths or {}).items():
        for method in ("get", "put", "post", "delete", "patch"):
            operation = getattr(item, method, None)
            if not isinstance(operation, Operation):
                continue
            if path == "/graphql":
                _graphql(operation, method)
            _describe(path, method, operation, handlers.get((path, method.upper()), {}))
            _headers(operation)
            used.update(operation.tags or ())
    defined = {tag.name: tag for tag in document.tags or []}
    document.tags = [defined.get(name) or Tag(name=name, description=TAGS.get(name)) for name in sorted(used)]
    return document
