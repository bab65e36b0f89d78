"""One place where every GraphQL error gets its stable code, and nothing unforeseen reaches a client."""

from __future__ import annotations

import logging
import re

import asyncpg
from graphql.error import GraphQLError
from strawberry.extensions import MaskErrors

from groundwork.api.graphql.field_names import graphql_field_errors
from groundwork.api.graphql.limits import refusal_code
from groundwork.api.input_policy.wording import CONFIRM, CONFIRM_ACCEPTED
from groundwork.domain.errors import GroundworkError, UnusableValue
from groundwork.platform.outages import unavailable

log = logging.getLogger("groundwork.api.graphql")


def _refusal_code(error: GraphQLError) -> str:
    """`graphql_parse_failed` for a document that does not parse, a limit's own code, else
    `graphql_validation_failed` (an unknown field, a wrong argument or variable type)."""
    if error.message.startswith("Syntax Error"):
        return refusal_code(error.message) or "graphql_parse_failed"
    return refusal_code(error.message) or "graphql_validation_failed"


# graphql-core's words for a value it refused, each ending in the value as Python prints it: what each
# type accepts instead (DESIGN.md: no message carries a Python repr).
_SCALARS = (
    (
        re.compile(r"Int cannot represent non 32-bit signed integer value: .*"),
        "must be an integer from -2147483648 to 2147483647",
    ),
    (re.compile(r"Int cannot represent non-integer value: .*"), "must be an integer"),
    (re.compile(r"Float cannot represent non numeric value: .*"), "must be a number"),
    (re.compile(r"String cannot represent (?:a non string )?value: .*"), "must be a string"),
    (re.compile(r"Boolean cannot represent a non boolean value: .*"), "must be true or false"),
    (re.compile(r"ID cannot represent (?:a non-string and non-integer )?value: .*"), "must be an id (a string)"),
    (
        re.compile(r"Expected value of type '(?P<type>[^']+)' not to include unknown field '(?P<field>[^']+)'.*"),
        "has no field '{field}' ({type} does not take it)",
    ),
    (
        re.compile(r"Expected value of type '[^']+' to include required field '(?P<field>[^']+)'.*"),
        "needs the field '{field}'",
    ),
    (re.compile(r"Expected value of type '[^']+' to be an object.*"), "must be an object"),
    (re.compile(r"Expected value of non-null type '[^']+' not to be None\."), "must not be null"),
    (re.compile(r"Expected a value of non-null type '[^']+' to be provided\."), "is required"),
    (
        re.compile(r"Expected value of type '(?P<type>[^']+)'(?:, but encountered error| to be valid).*"),
        "must be a value of type {type}",
    ),
)
_VARIABLE = re.compile(r"^Variable '\$(?P<name>[^']+)' has invalid value(?P<path>[^:]*): (?P<reason>.*)$", re.S)


def _accepted(reason: str) -> str:
    for pattern, words in _SCALARS:
        if match := pattern.fullmatch(reason):
            return words.format(**match.groupdict())
    return reason


def plain_message(message: str) -> str:
    """A refused variable with its value (printed by Python) left out and what is accepted said instead; a
    refused literal keeps its value, printed as GraphQL, and says `null` where Python would say None."""
    variable = _VARIABLE.match(message)
    if variable is None:
        return message.replace("not to be None", "not to be null")
    path = re.sub(r"^\s*at\s*", "", variable.group("path"))
    reason = variable.group("reason")
    if path.rsplit(".", 1)[-1] == CONFIRM and reason.startswith("Boolean"):
        return f"Variable ${variable.group('name')}{path}: {CONFIRM_ACCEPTED}."
    return f"Variable ${variable.group('name')}{path}: {_accepted(reason)}."


def _with_code(error: GraphQLError, code: str) -> GraphQLError:
    return GraphQLError(
        plain_message(error.message),
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
                extensions={"code": original.code, **graphql_field_errors(original.extra)},
            )
        log.error("unexpected error in GraphQL at %s", error.path, exc_info=original)
        masked = self.anonymise_error(error)
        masked.extensions = {"code": "internal_error"}
        return masked
