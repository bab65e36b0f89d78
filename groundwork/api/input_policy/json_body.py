"""A request body under the policy: JSON by its media type, well-formed (or refused with its position),
no unknown field anywhere, and every value of the declared JSON kind (`strict` decoding)."""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any

import msgspec

from groundwork.api.input_policy.wording import from_msgspec, join_path
from groundwork.domain.errors import FieldError, InvalidRequest, UnsupportedMediaType

JSON_MEDIA_TYPE = "application/json"
_BYTE = re.compile(r"^(?P<what>.*?) \(byte (?P<offset>\d+)\)$")


def check_media_type(content_type: str | None) -> None:
    """A body is `application/json` (UTF-8, the only charset JSON has); anything else is 415."""
    media_type, _, parameters = (content_type or "").partition(";")
    charset = re.search(r"charset\s*=\s*\"?([^\";\s]+)", parameters, re.I)
    if media_type.strip().lower() == JSON_MEDIA_TYPE and (charset is None or charset.group(1).lower() == "utf-8"):
        return
    sent = media_type.strip() or "no Content-Type"
    raise UnsupportedMediaType(
        f"Send the body as JSON with `Content-Type: {JSON_MEDIA_TYPE}` (this request sent {sent[:100]})."
    )


def _position(body: bytes, offset: int) -> str:
    offset = min(offset, len(body))
    line = body.count(b"\n", 0, offset) + 1
    column = offset - (body.rfind(b"\n", 0, offset) + 1) + 1
    return f"line {line}, column {column} (byte {offset})"


def parse_json(body: bytes) -> Any:
    """The JSON value of `body`; malformed JSON is 400 naming where it goes wrong."""
    try:
        return msgspec.json.decode(body)
    except msgspec.DecodeError as exc:
        text = str(exc)
        match = _BYTE.match(text.removeprefix("JSON is malformed: "))
        if match is not None:
            message = f"is not valid JSON: {match.group('what')} at {_position(body, int(match.group('offset')))}"
        elif "truncated" in text:
            message = f"is not valid JSON: it ends before the value is complete, at {_position(body, len(body))}"
        else:
            message = "is not valid JSON"
    except RecursionError:
        message = "is not valid JSON here: it nests arrays or objects too deeply"
    raise InvalidRequest("The body is not valid JSON.", [FieldError("body", message)])


def _unknown(value: Any, info: Any, path: str, found: list[FieldError]) -> None:
    if isinstance(info, msgspec.inspect.Metadata):
        _unknown(value, info.type, path, found)
    elif isinstance(info, msgspec.inspect.StructType) and isinstance(value, dict):
        fields = {f.encode_name: f for f in info.fields}
        for name, item in value.items():
            field = fields.get(name)
            if field is not None:
                _unknown(item, field.type, join_path(path, name), found)
            elif info.forbid_unknown_fields:
                known = ", ".join(fields) or "no fields"
                found.append(FieldError(join_path(path, str(name)[:100]), f"is not a field here (known: {known})"))
    elif isinstance(info, msgspec.inspect.UnionType):
        for member in info.types:
            _unknown(value, member, path, found)
    elif isinstance(info, msgspec.inspect.ListType | msgspec.inspect.SetType | msgspec.inspect.VarTupleType):
        if isinstance(value, list):
            for index, item in enumerate(value):
                _unknown(item, info.item_type, join_path(path, index), found)
    elif isinstance(info, msgspec.inspect.DictType) and isinstance(value, dict):
        for name, item in value.items():
            _unknown(item, info.value_type, join_path(path, str(name)), found)


@lru_cache(maxsize=256)
def _described(declared: Any) -> Any:
    # msgspec builds this by evaluating every annotation of every struct it reaches: about a fifth of a cheap
    # search request's CPU when done per request. A handler's declared type never changes, so once per type.
    return msgspec.inspect.type_info(declared)


def unknown_fields(value: Any, declared: Any) -> list[FieldError]:
    """Every field of `value` that the declared type does not have (at any depth), each named."""
    found: list[FieldError] = []
    _unknown(value, _described(declared), "", found)
    return found


def decode_body(body: bytes, content_type: str | None, declared: Any) -> Any:
    """The body as the declared type, strictly; an empty body is the empty object."""
    if not body.strip():
        value: Any = {}
    else:
        check_media_type(content_type)
        value = parse_json(body)
    if unknown := unknown_fields(value, declared):
        raise InvalidRequest("The body has fields this request does not take.", unknown[:20])
    try:
        return msgspec.convert(value, declared, strict=True)
    except msgspec.ValidationError as exc:
        raise InvalidRequest("A value in the body is not of the accepted kind.", [from_msgspec(str(exc))]) from None
