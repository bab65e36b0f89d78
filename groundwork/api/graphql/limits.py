"""Bounds on what one GraphQL document may ask for, each refused with a stable `extensions.code`.

- depth: at most `MAX_DEPTH` nested selections (introspection fields are not counted, so tools load
  the schema) → `query_too_deep`;
- aliases: at most `MAX_ALIASES` aliased fields in a document → `too_many_aliases`;
- cost: at most `MAX_TOKENS` lexical tokens in a document (names, punctuation, values: what the parser
  and validator work through) → `query_too_costly`.

A refused document runs no resolver. The codes are given to the errors in `errors.CodedErrors`.
"""

from __future__ import annotations

from typing import Any

from strawberry.extensions import MaxAliasesLimiter, MaxTokensLimiter, QueryDepthLimiter
from strawberry.extensions.query_depth_limiter import IgnoreContext

MAX_DEPTH = 10
MAX_ALIASES = 30
MAX_TOKENS = 5000

# The messages graphql-core and Strawberry give each refusal, and the code each gets.
REFUSAL_CODES: tuple[tuple[str, str], ...] = (
    ("exceeds maximum operation depth", "query_too_deep"),
    ("aliases found. Allowed", "too_many_aliases"),
    ("Document contains more than", "query_too_costly"),
)


def _introspection(context: IgnoreContext) -> bool:
    return context.field_name.startswith("__")


def query_limits() -> list[Any]:
    """The Strawberry extensions that enforce the limits."""
    return [
        QueryDepthLimiter(max_depth=MAX_DEPTH, should_ignore=_introspection),
        MaxAliasesLimiter(max_alias_count=MAX_ALIASES),
        MaxTokensLimiter(max_token_count=MAX_TOKENS),
    ]


def refusal_code(message: str) -> str | None:
    """The code of a limit's refusal, from its message."""
    return next((code for marker, code in REFUSAL_CODES if marker in message), None)
