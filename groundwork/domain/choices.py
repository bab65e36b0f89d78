"""Closed sets: a filter or field that takes one of a fixed list of values refuses any other with 422
`validation_failed` naming the field and the values it takes, on every transport."""

from __future__ import annotations

from collections.abc import Iterable

from groundwork.domain.errors import FieldError, ValidationFailed


def check_choice(value: str | None, choices: Iterable[str], path: str) -> str | None:
    """`value` if it is one of `choices` (or None); a 422 naming the choices otherwise."""
    allowed = tuple(choices)
    if value is not None and value not in allowed:
        raise ValidationFailed("Invalid filter.", [FieldError(path, f"must be one of {', '.join(allowed)}")])
    return value
