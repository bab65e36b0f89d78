"""Schemathesis hooks for the GraphQL fuzz run: every error in an answer carries a stable `extensions.code`,
and none is a server error.

Schemathesis' own `not_a_server_error` counts every resolver error as a server failure (ST113); here a
resolver refusing a request with a coded error (`not_found`, `validation_failed`, ...) is the
documented answer, so these checks take its place: no 5xx, no `internal_error`, no uncoded error.
"""

from __future__ import annotations

import json
from typing import Any

import schemathesis


@schemathesis.check
def graphql_errors_are_coded(ctx: Any, response: Any, case: Any) -> bool | None:
    """Each entry of `errors` has `extensions.code` (a string), whatever the document asked."""
    try:
        body = json.loads(response.content)
    except ValueError as error:
        raise AssertionError(f"not JSON ({response.status_code}): {response.content[:200]!r}") from error
    for problem in body.get("errors") or []:
        code = (problem.get("extensions") or {}).get("code")
        if not isinstance(code, str) or not code:
            raise AssertionError(f"GraphQL error without extensions.code: {problem}")
    return None


@schemathesis.check
def graphql_no_server_error(ctx: Any, response: Any, case: Any) -> bool | None:
    """No 5xx status and no error coded `internal_error` (an exception nobody foresaw)."""
    if response.status_code >= 500:
        raise AssertionError(f"server error {response.status_code}: {response.content[:300]!r}")
    body = json.loads(response.content)
    for error in body.get("errors") or []:
        if (error.get("extensions") or {}).get("code") == "internal_error":
            raise AssertionError(f"internal error: {error}")
    return None
