"""RFC 9457 problem+json for every failure, with the stable `code`s of DESIGN.md."""

from __future__ import annotations

import logging
from typing import Any

import asyncpg
from litestar import Request, Response
from litestar.exceptions import (
    HTTPException,
    MethodNotAllowedException,
    NotAuthorizedException,
    NotFoundException,
    ValidationException,
)
from litestar.status_codes import HTTP_413_REQUEST_ENTITY_TOO_LARGE

from groundwork.api.input_policy.wording import from_msgspec
from groundwork.domain.errors import GroundworkError, UnusableValue
from groundwork.platform.outages import unavailable

log = logging.getLogger(__name__)
PROBLEM_JSON = "application/problem+json"
_TYPE_BASE = "https://groundwork.dev/problems/"
WWW_AUTHENTICATE = 'Bearer realm="groundwork"'


def problem_body(status: int, code: str, title: str, detail: str, **extra: Any) -> dict[str, Any]:
    """The RFC 9457 members of a problem, with the stable `code` and any extra members."""
    return {
        "type": _TYPE_BASE + code.replace("_", "-"),
        "title": title,
        "status": status,
        "detail": detail,
        "code": code,
        **extra,
    }


def problem(
    status: int, code: str, title: str, detail: str, headers: dict[str, str] | None = None, **extra: Any
) -> Response[dict[str, Any]]:
    """A problem+json response with the stable `code` and any extra members."""
    body = problem_body(status, code, title, detail, **extra)
    if status == 401:
        # RFC 9110: a 401 names the scheme that would succeed.
        headers = {**(headers or {}), "WWW-Authenticate": WWW_AUTHENTICATE}
    return Response(body, status_code=status, media_type=PROBLEM_JSON, headers=headers)


def groundwork_error_handler(_: Request[Any, Any, Any], exc: GroundworkError) -> Response[dict[str, Any]]:
    """Render a domain error."""
    retry_after = getattr(exc, "retry_after_seconds", None)  # 429, 503 and 409 idempotency_key_in_use
    headers = {"Retry-After": str(retry_after)} if retry_after is not None else {}
    headers.update(getattr(exc, "headers", None) or {})  # a rate limit's own fields
    return problem(exc.status, exc.code, exc.title, exc.detail, headers or None, **exc.extra)


def _validation_errors(exc: ValidationException) -> list[dict[str, str]]:
    """Litestar's own refusals of a parameter (the input policy refuses most before it), in the policy's words:
    the parameter as the caller wrote it, what it accepts."""
    errors: list[dict[str, str]] = []
    for item in exc.extra if isinstance(exc.extra, list) else []:
        if isinstance(item, dict):
            refused = from_msgspec(str(item.get("message", "")))
            errors.append({"path": str(item.get("key") or refused.path), "message": refused.message})
    return errors or [{"path": "request", "message": "is not valid"}]


def http_error_handler(_: Request[Any, Any, Any], exc: HTTPException) -> Response[dict[str, Any]]:
    """Render Litestar's own errors (routing, body decoding, size limits) as problems."""
    if isinstance(exc, NotFoundException):
        return problem(404, "not_found", "Not found", "No such resource.")
    if isinstance(exc, MethodNotAllowedException):
        return problem(405, "method_not_allowed", "Method not allowed", str(exc.detail))
    if isinstance(exc, NotAuthorizedException):
        return problem(401, "unauthenticated", "Unauthenticated", str(exc.detail))
    if exc.status_code == HTTP_413_REQUEST_ENTITY_TOO_LARGE:
        return problem(413, "payload_too_large", "Payload too large", "The request body is too large.")
    if isinstance(exc, ValidationException) or exc.status_code == 400:
        detail = str(exc.detail)
        if "JSON" in detail or "decode" in detail.lower() or "malformed" in detail.lower():
            errors = [{"path": "body", "message": "is not valid JSON"}]
            return problem(400, "invalid_request", "Invalid request", "The body is not valid JSON.", errors=errors)
        errors = (
            _validation_errors(exc)
            if isinstance(exc, ValidationException)
            else [{"path": "request", "message": "is not valid"}]
        )
        return problem(400, "invalid_request", "Invalid request", "The request is not valid.", errors=errors)
    if exc.status_code == 415:
        return problem(415, "unsupported_media_type", "Unsupported media type", str(exc.detail))
    if exc.status_code >= 500:
        log.error("server error: %s", exc.detail)
        return problem(exc.status_code, "internal_error", "Internal error", "Something went wrong on our side.")
    return problem(exc.status_code, "http_error", "Request failed", str(exc.detail))


def data_error_handler(request: Request[Any, Any, Any], exc: asyncpg.DataError) -> Response[dict[str, Any]]:
    """A refused value that reached no repository query (they raise `UnusableValue`): the same coded 400,
    without the driver's words."""
    log.info("database refused a caller value: %s", exc)
    return groundwork_error_handler(request, UnusableValue("a value cannot be stored or compared"))


def unexpected_error_handler(request: Request[Any, Any, Any], exc: Exception) -> Response[dict[str, Any]]:
    """PostgreSQL or Temporal out of reach is a 503 with `Retry-After`; anything else unforeseen is a 500
    problem; the detail stays in the log, not the answer."""
    outage = unavailable(exc)
    if outage is not None:
        log.warning("%s %s: %s (%s)", request.method, request.url.path, outage.detail, type(exc).__name__)
        return groundwork_error_handler(request, outage)
    log.exception("unhandled error on %s %s", request.method, request.url.path, exc_info=exc)
    return problem(500, "internal_error", "Internal error", "Something went wrong on our side.")


EXCEPTION_HANDLERS: dict[Any, Any] = {
    GroundworkError: groundwork_error_handler,
    asyncpg.DataError: data_error_handler,
    HTTPException: http_error_handler,
    Exception: unexpected_error_handler,
}
