"""How a refused input value is described: what is accepted, in the words of JSON, never of Python."""

from __future__ import annotations

import re

from groundwork.domain.errors import FieldError

# The one wire name of a confirmation on every command (DESIGN.md "confirm is exactly true").
CONFIRM = "confirm"
CONFIRM_ACCEPTED = "must be the JSON boolean true to confirm (false or left out: nothing changes)"

# JSON's kinds of value, as a message says them.
KINDS: dict[str, str] = {
    "integer": "an integer",
    "number": "a number",
    "string": "a string",
    "boolean": "true or false",
    "array": "an array",
    "object": "an object",
    "null": "null",
}
# The names msgspec gives the kinds it expected (its own are Python's: `int`, `str`, ...).
_MSGSPEC_KINDS = {
    "int": "integer",
    "float": "number",
    "str": "string",
    "bool": "boolean",
    "array": "array",
    "object": "object",
    "null": "null",
}
_EXPECTED = re.compile(r"^Expected `(?P<kinds>[^`]+)`(?P<constraint>[^,]*?)(?:, got `[^`]*`)?$")
_CONSTRAINT = re.compile(r"^\s*(?:of length )?(?P<op>>=|<=|>|<)\s*(?P<bound>-?[0-9.]+)$")
_MISSING = re.compile(r"^Object missing required field `(?P<name>[^`]+)`$")
_UNKNOWN = re.compile(r"^Object contains unknown field `(?P<name>[^`]+)`$")
_AT = re.compile(r"^(?P<message>.*?) - at `\$(?P<path>[^`]*)`$")
_BOUND_WORDS = {">=": "at least", "<=": "at most", ">": "more than", "<": "less than"}


def kinds_accepted(kinds: list[str]) -> str:
    """`["string", "null"]` -> "a string or null"."""
    words = [KINDS.get(kind, kind) for kind in dict.fromkeys(kinds)]
    return words[0] if len(words) == 1 else ", ".join(words[:-1]) + " or " + words[-1]


def accepted(path: str, kinds: list[str]) -> str:
    """What a field of these JSON kinds accepts; a confirmation says what confirms."""
    if path.rsplit(".", 1)[-1] == CONFIRM:
        return CONFIRM_ACCEPTED
    return "must be " + kinds_accepted(kinds)


def join_path(parent: str, child: str | int) -> str:
    """`target` + `id` -> `target.id`; `draft_ids` + 0 -> `draft_ids[0]`."""
    if isinstance(child, int):
        return f"{parent}[{child}]"
    return f"{parent}.{child}" if parent else child


def _constraint(text: str, kinds: list[str]) -> str:
    match = _CONSTRAINT.match(text)
    if match is None:
        return ""
    unit = {"string": " characters", "array": " items", "object": " members"}.get(kinds[0], "")
    return f" of {_BOUND_WORDS[match.group('op')]} {match.group('bound')}{unit}"


def from_msgspec(message: str, root: str = "") -> FieldError:
    """A msgspec validation message (`Expected `int | null`, got `str` - at `$.x``) as a field error."""
    at = _AT.match(message)
    text, raw_path = (at.group("message"), at.group("path")) if at else (message, "")
    path = root
    for name, index in re.findall(r"\.([^.\[]+)|\[(\d+)\]", raw_path):
        path = join_path(path, int(index) if index else name)
    if missing := _MISSING.match(text):
        return FieldError(join_path(path, missing.group("name")), "is required")
    if unknown := _UNKNOWN.match(text):
        return FieldError(join_path(path, unknown.group("name")), "is not a field of this request")
    if expected := _EXPECTED.match(text):
        kinds = [_MSGSPEC_KINDS.get(k.strip(), "value of another kind") for k in expected.group("kinds").split("|")]
        # A null where a field may be null is that field left out: saying so helps nobody.
        kinds = [kind for kind in kinds if kind != "null"] or kinds
        return FieldError(path or "body", accepted(path, kinds) + _constraint(expected.group("constraint"), kinds))
    if "out of range" in text:
        return FieldError(path or "body", "is out of range")
    return FieldError(path or "body", "is not a value this field accepts")
