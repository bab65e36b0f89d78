"""One place where every GraphQL error gets its stable code, and nothing unforeseen reaches a client."""

from __future__ import annotations

import logging

import asyncpg
from graphql.error import GraphQLError
from strawberry.extensions import MaskErrors

from groundwork.api.graphql.limits import refusal_code
from groundwork.domain.errors import GroundworkError, UnusableValue
from groundwork.platform.outages import unavailable

log = logging.getLogger("groundwork.api.graphql")


def _refusal_code(error: GraphQLError) -> str:
    """`graphql_parse_failed` for a document that does not parse, a limit's own code, else
    `graphql_validation_failed` (an unknown field, a wrong argument or variable type)."""
    if error.message.startswith("Syntax Error"):
        return refusal_code(error.message) or "graphql_parse_failed"
    return refusal_code(error.message) or "graphql_validation_failed"


def _with_code(error: GraphQLError, code: str) -> GraphQLError:
    return GraphQLError(
        error.message,
        nodes=error.nodes,
        source=error.source,
        positions=error.positions,
        path=error.path,
        original_error=error.original_error,
        extensions={**(error.extensions or {}), "code": code},
    )


class CodedErrors(MaskErrors):
    """A resolver's domain error carries its `code` (as REST's problem does); a value the database refused
    is 400 `invalid_request`; anything else is `internal_error` with its details left in the log."""

    def __init__(self) -> None:
        super().__init__(error_message="Something went wrong on our side.")

    def _process_errors(self, errors: list[GraphQLError]) -> list[GraphQLError]:
        return [self._coded(error) for error in errors]

    def _coded(self, error: GraphQLError) -> GraphQLError:
        original = error.original_error
        if original is None or isinstance(original, GraphQLError):
            # A document the server refused before running it, or a resolver's own coded error.
            if (error.extensions or {}).get("code"):
                return error
            return _with_code(error, _refusal_code(error))
        if isinstance(original, asyncpg.DataError):
            original = UnusableValue("a value cannot be stored or compared")
        original = unavailable(original) or original
        if isinstance(original, GroundworkError):
            return GraphQLError(
                original.detail,
                nodes=error.nodes,
                source=error.source,
                positions=error.positions,
                path=error.path,
                extensions={"code": original.code, **original.extra},
            )
        log.error("unexpected error in GraphQL at %s", error.path, exc_info=original)
        masked = self.anonymise_error(error)
        masked.extensions = {"code": "internal_error"}
        return masked
