"""The OpenAPI document says every status a route can answer, derived from the route table.

Litestar documents a handler's success answer and a generic 400; everything the middleware and the
services answer on top (400 for an unknown query parameter, 401 without a key, 403 without the scope,
404 for what the caller cannot see, 409 and 422 on state changes, 413 and 415 on bodies, 429, 503) is
an RFC 9457 problem that the route table already implies: whether the route is public, the scope it
declares (`opt["scope"]`), whether it takes `Idempotency-Key` (`opt["idempotent"]`), whether it takes
input and its method. This module
adds those answers (with the `Problem` schema and `Retry-After` where sent) and the `Idempotency-Key`
header to the built document, so a new route is documented the moment it is added; a body that
refuses unknown fields says `additionalProperties: false`. A route whose extra statuses the table
cannot tell declares them in `opt["problems"]` (e.g. 410 of a used link), and one that answers
browsers a page says `opt["html_page"]`.
"""

from __future__ import annotations

from collections.abc import Iterable
from http import HTTPStatus
from typing import Any

import msgspec
from litestar import Litestar
from litestar.handlers import HTTPRouteHandler
from litestar.openapi.spec import (
    Components,
    OpenAPI,
    OpenAPIHeader,
    OpenAPIMediaType,
    OpenAPIResponse,
    OpenAPIType,
    Operation,
    Parameter,
    Reference,
    Schema,
)
from litestar.routes import HTTPRoute

from groundwork.api.auth import OPTIONAL_PATHS, PUBLIC_PATHS
from groundwork.api.errors import PROBLEM_JSON
from groundwork.api.input_policy.middleware import OWN_INPUT
from groundwork.api.openapi_conventions import apply_conventions
from groundwork.domain.idempotency import MAX_KEY_LENGTH

PROBLEM = "Problem"
# A body Struct names here the fields its service requires while the type keeps them optional (so a
# missing one is the service's coded 422 naming the field, alike on every transport).
DOCUMENTED_REQUIRED = "__documented_required__"
# Visible ASCII: what every HTTP stack carries unchanged (the API takes any printable text).
IDEMPOTENCY_KEY_PATTERN = r"^[!-~]+$"
# What a nullable field states beside its `oneOf` and belongs to its non-null arm.
_CONSTRAINTS = (
    "minimum",
    "maximum",
    "enum",
    "pattern",
    "format",
    "min_length",
    "max_length",
    "min_items",
    "max_items",
    "items",
    "description",
)
# Methods that change a resource in place (a state-changing POST is declared `idempotent`).
_CHANGES = frozenset({"PUT", "PATCH", "DELETE"})
# Methods whose body the input policy reads (and refuses when it is not JSON).
_WITH_BODY = frozenset({"POST", "PUT", "PATCH"})

# Why each status is answered, as the document says it.
_REASONS: dict[int, str] = {
    400: "`invalid_request`: malformed JSON (with its line, column and byte), a wrong type (a boolean is a JSON "
    "boolean, an integer a JSON integer), an unknown body field or query parameter (each named in `errors`), a "
    "value that cannot be stored, a missing or malformed `Idempotency-Key` (`idempotency_key_required`), a "
    "malformed query (`invalid_query`).",
    401: "`unauthenticated`: no key, or an unknown or revoked one.",
    403: "`insufficient_scope` (with `required_scope`), `permission_denied` (the role may not write), "
    "`app_not_active`, `app_direction_forbidden`, `app_field_not_authorized`.",
    404: "`not_found`: no such resource, or one in another workspace or a project the caller cannot see.",
    409: "A conflict with the current state: `version_conflict` / `target_version_mismatch` (with "
    "`current_version`), `invalid_transition`, `run_not_reviewable`, `idempotency_key_in_use`; nothing changed.",
    410: "`action_link_used` / `action_link_expired` / `view_link_expired`: the link was used or is too old; "
    "`passage_superseded`: the passage's source (or segmenter) version no longer serves, with `active_passage_id` "
    "and `active_version_id`.",
    413: "`payload_too_large`: the body exceeds the configured limit.",
    415: "`unsupported_media_type`: a body sent as anything but `application/json`.",
    422: "`validation_failed` (with `errors[{path, message}]`), `confirmation_required`, `invalid_action`, "
    "`draft_not_eligible`, `idempotency_key_reused` (the key was used with another request).",
    429: "`rate_limited`: the key's (or the client address's) budget is spent; see `Retry-After`.",
    503: "`service_unavailable`: PostgreSQL, Temporal or the search index is unreachable; see `Retry-After`.",
}
_RETRY_AFTER = frozenset({429, 503})
_HTML = Schema(type=OpenAPIType.STRING)


def problem_schema() -> Schema:
    """RFC 9457 problem details with Groundwork's stable `code` and field `errors`."""
    return Schema(
        type=OpenAPIType.OBJECT,
        description="RFC 9457 problem details; `code` is stable. Other members (e.g. `current_version`, "
        "`required_scope`, `diff`) may be present.",
        required=["type", "title", "status", "detail", "code"],
        properties={
            "type": Schema(type=OpenAPIType.STRING, format="uri"),  # type: ignore[arg-type]
            "title": Schema(type=OpenAPIType.STRING),
            "status": Schema(type=OpenAPIType.INTEGER, minimum=400, maximum=599),
            "detail": Schema(type=OpenAPIType.STRING),
            "code": Schema(type=OpenAPIType.STRING, pattern=r"^[a-z][a-z0-9_]*$"),
            "instance": Schema(type=OpenAPIType.STRING),
            "errors": Schema(
                type=OpenAPIType.ARRAY,
                items=Schema(
                    type=OpenAPIType.OBJECT,
                    required=["path", "message"],
                    properties={"path": Schema(type=OpenAPIType.STRING), "message": Schema(type=OpenAPIType.STRING)},
                ),
            ),
        },
    )


def idempotency_key_parameter() -> Parameter:
    """The `Idempotency-Key` header every state-changing POST requires."""
    return Parameter(
        name="Idempotency-Key",
        param_in="header",  # type: ignore[arg-type]
        required=True,
        description="Makes the request safe to retry: the same key with the same request replays the first "
        "answer (`Idempotent-Replayed: true`) for 24 hours; with another request it is 422 "
        "`idempotency_key_reused`; while the first runs, 409 `idempotency_key_in_use`.",
        schema=Schema(
            type=OpenAPIType.STRING, min_length=1, max_length=MAX_KEY_LENGTH, pattern=IDEMPOTENCY_KEY_PATTERN
        ),
    )


def answered_statuses(path: str, method: str, opt: dict[str, Any], operation: Operation) -> set[int]:
    """The problem statuses a route can answer, from what the route table says about it."""
    statuses = {429} if path.startswith(PUBLIC_PATHS) else {429, 503}
    takes_input = bool(operation.parameters) or operation.request_body is not None
    public = path.startswith(PUBLIC_PATHS) or opt.get("auth") == "public"
    if not public and not path.startswith(OPTIONAL_PATHS):
        statuses.add(401)
    if opt.get("scope"):
        statuses.add(403)
    if opt.get("internal"):
        statuses.add(404)
    if opt.get("input") != OWN_INPUT:
        statuses.add(400)  # the input policy: an unknown query parameter, on every route
    if takes_input:
        statuses |= {400, 404, 422}
    if operation.request_body is not None:
        statuses.add(413)
    if method in _WITH_BODY and opt.get("input") != OWN_INPUT:
        statuses |= {413, 415}  # any body: within the size limit, and JSON
    if method in _CHANGES or (opt.get("idempotent") and method == "POST"):
        statuses.add(409)
    if opt.get("idempotent") and method == "POST":
        statuses |= {400, 422, 413}
    statuses |= set(opt.get("problems", ()))
    if path.startswith(PUBLIC_PATHS):
        # Probes and docs are neither rate limited nor backed by a database (readiness declares its 503).
        statuses.discard(429)
    return statuses


def _problem_response(status: int) -> OpenAPIResponse:
    headers: dict[str, OpenAPIHeader | Reference] | None = None
    if status in _RETRY_AFTER:
        headers = {
            "Retry-After": OpenAPIHeader(
                description="Seconds to wait before retrying.", schema=Schema(type=OpenAPIType.INTEGER, minimum=0)
            )
        }
    return OpenAPIResponse(
        description=f"{HTTPStatus(status).phrase}. {_REASONS.get(status, '')}".strip(),
        headers=headers,
        content={PROBLEM_JSON: OpenAPIMediaType(schema=Reference(ref=f"#/components/schemas/{PROBLEM}"))},
    )


def _query_value(parameter: Parameter) -> None:
    """A query string carries no null (an absent parameter is the default) and no empty value (refused)."""
    arm = _without_null(parameter.schema)
    if not isinstance(arm, Schema):
        return
    if arm.type == OpenAPIType.STRING and arm.min_length is None and not arm.enum:
        arm.min_length = 1
    parameter.schema = arm


def _without_null(schema: Any) -> Schema | Reference | None:
    """The one non-null arm of a nullable `oneOf`, with the constraints stated beside the `oneOf`; else None."""
    if not isinstance(schema, Schema) or not schema.one_of:
        return None
    arms = [arm for arm in schema.one_of if not (isinstance(arm, Schema) and arm.type == OpenAPIType.NULL)]
    if len(arms) != 1 or not isinstance(arms[0], Schema | Reference):
        return None
    arm = arms[0]
    if isinstance(arm, Schema):
        for name in _CONSTRAINTS:
            if getattr(schema, name, None) is not None and getattr(arm, name, None) is None:
                setattr(arm, name, getattr(schema, name))
    return arm


def _operations(app: Litestar) -> Iterable[tuple[str, str, HTTPRouteHandler]]:
    for route in app.routes:
        if not isinstance(route, HTTPRoute):
            continue
        for method, (handler, _) in route.route_handler_map.items():
            if handler.include_in_schema is False:
                continue
            yield route.path_format or "/", str(method), handler


def _structs(info: Any, found: dict[str, Any]) -> None:
    """Every msgspec Struct reachable from a type's `msgspec.inspect` description, by class name."""
    if isinstance(info, msgspec.inspect.StructType):
        if info.cls.__name__ in found:
            return
        found[info.cls.__name__] = info
        for item in info.fields:
            _structs(item.type, found)
    elif isinstance(info, msgspec.inspect.UnionType):
        for member in info.types:
            _structs(member, found)
    elif isinstance(info, msgspec.inspect.Metadata):
        _structs(info.type, found)
    elif isinstance(info, (msgspec.inspect.ListType, msgspec.inspect.SetType, msgspec.inspect.VarTupleType)):
        _structs(info.item_type, found)
    elif isinstance(info, msgspec.inspect.DictType):
        _structs(info.value_type, found)


def _close_bodies(app: Litestar, schemas: dict[str, Any]) -> None:
    """A body Struct that refuses unknown fields (400 `invalid_request`) says `additionalProperties: false`;
    the fields its service requires (`DOCUMENTED_REQUIRED`) are `required`."""
    found: dict[str, Any] = {}
    for _, _, handler in _operations(app):
        data = handler.parsed_fn_signature.parameters.get("data")
        if data is not None and isinstance(data.annotation, type) and issubclass(data.annotation, msgspec.Struct):
            _structs(msgspec.inspect.type_info(data.annotation), found)
    for name, info in found.items():
        schema = schemas.get(name)
        if not isinstance(schema, Schema):
            continue
        if info.forbid_unknown_fields:
            schema.additional_properties = False
        if required := getattr(info.cls, DOCUMENTED_REQUIRED, ()):
            schema.required = sorted({*(schema.required or ()), *required})
            # A required field takes no null either (the service refuses it like an absent one).
            for name in required:
                if (arm := _without_null((schema.properties or {}).get(name))) is not None:
                    schema.properties = {**(schema.properties or {}), name: arm}


def _required_query(operation: Operation, names: dict[str, Schema]) -> None:
    """Query parameters the handler reads itself (Litestar reserves `query`), documented as required."""
    parameters = [p for p in operation.parameters or [] if getattr(p, "name", "") not in names]
    for name, schema in names.items():
        parameters.append(Parameter(name=name, param_in="query", required=True, schema=schema))
    operation.parameters = parameters


def document_problems(app: Litestar) -> OpenAPI:
    """Add every route's problem answers and the `Idempotency-Key` header to `app`'s OpenAPI document."""
    document = app.openapi_schema
    if document.components is None:
        document.components = Components()
    schemas = document.components.schemas if document.components.schemas is not None else {}
    schemas[PROBLEM] = problem_schema()
    _close_bodies(app, schemas)
    document.components.schemas = schemas
    for path, method, handler in _operations(app):
        opt = dict(handler.opt or {})
        # What a handler documents itself (`responses=`) stays as it is.
        own = {int(status) for status in handler.responses or {}}
        item = (document.paths or {}).get(path)
        operation = getattr(item, method.lower(), None) if item is not None else None
        if not isinstance(operation, Operation):
            continue
        for parameter in operation.parameters or []:
            if isinstance(parameter, Parameter) and parameter.param_in == "query":
                _query_value(parameter)
        if required_query := opt.get("required_query"):
            _required_query(operation, required_query)
        if opt.get("idempotent") and method == "POST":
            parameters = [p for p in operation.parameters or [] if getattr(p, "name", "") != "Idempotency-Key"]
            operation.parameters = [*parameters, idempotency_key_parameter()]
        responses = operation.responses if operation.responses is not None else {}
        for status in sorted(answered_statuses(path, method, opt, operation) - own):
            responses[str(status)] = _problem_response(status)
        if opt.get("html_page"):
            # Browsers (`Accept: text/html`) get a page for every answer.
            for response in responses.values():
                if isinstance(response, OpenAPIResponse):
                    response.content = {**(response.content or {}), "text/html": OpenAPIMediaType(schema=_HTML)}
        operation.responses = responses
    return apply_conventions(
        app, {(path, method): dict(handler.opt or {}) for path, method, handler in _operations(app)}
    )


__all__ = [
    "DOCUMENTED_REQUIRED",
    "answered_statuses",
    "document_problems",
    "idempotency_key_parameter",
    "problem_schema",
]
