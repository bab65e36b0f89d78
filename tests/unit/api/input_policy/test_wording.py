"""Refusals say what is accepted in JSON's words: a msgspec message never reaches a caller as it is."""

from __future__ import annotations

import pytest

from groundwork.api.input_policy.wording import from_msgspec


@pytest.mark.parametrize(
    ("message", "path", "said"),
    [
        ("Expected `int | null`, got `str` - at `$.expected_version`", "expected_version", "must be an integer"),
        ("Expected `bool | null`, got `int` - at `$.confirm`", "confirm", "must be the JSON boolean true"),
        ("Expected `str`, got `int` - at `$.evidence[0].reference.class`", "evidence[0].reference.class", "must be a"),
        ("Expected `array`, got `str` - at `$.draft_ids`", "draft_ids", "must be an array"),
        ("Expected `object`, got `array`", "body", "must be an object"),
        ("Object missing required field `id` - at `$.target`", "target.id", "is required"),
        ("Expected `int` >= 1", "body", "must be an integer of at least 1"),
        ("Expected `str` of length <= 4000 - at `$.instructions`", "instructions", "of at most 4000 characters"),
        ("Something msgspec never said", "body", "is not a value this field accepts"),
    ],
)
def test_a_msgspec_refusal_is_said_in_json_words(message: str, path: str, said: str) -> None:
    error = from_msgspec(message)
    assert error.path == path and said in error.message
    assert "`" not in error.message and "int" not in error.message.split()
