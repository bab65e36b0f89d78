"""A body under the input policy: JSON by media type, malformed JSON located, unknown fields named, kinds strict."""

from __future__ import annotations

from typing import Annotated, Any

import msgspec
import pytest

from groundwork.api.documented import documented
from groundwork.api.input_policy.json_body import check_media_type, decode_body
from groundwork.api.input_policy.middleware import NoBody
from groundwork.domain.errors import InvalidRequest, UnsupportedMediaType


class Target(msgspec.Struct, forbid_unknown_fields=True):
    type: str
    id: str


class Body(msgspec.Struct, forbid_unknown_fields=True):
    target: Target
    draft_ids: list[str] = []
    expected_version: int | None = None
    confirm: Annotated[bool, documented(enum=[True])] | None = None
    reason: str | None = None
    class_: str = msgspec.field(default="general", name="class")


def _refusal(body: bytes, declared: Any = Body) -> list[tuple[str, str]]:
    with pytest.raises(InvalidRequest) as refused:
        decode_body(body, "application/json", declared)
    return [(e.path, e.message) for e in refused.value.errors]


@pytest.mark.parametrize("value", ['"yes"', '"true"', "1", "0", '"1"'])
def test_a_confirmation_is_the_json_boolean_true_and_nothing_else(value: str) -> None:
    [(path, message)] = _refusal(b'{"target": {"type": "work_item", "id": "wi_1"}, "confirm": ' + value.encode() + b"}")
    assert path == "confirm" and message.startswith("must be the JSON boolean true")


@pytest.mark.parametrize("value", ['"1"', "1.0", "1.5", "true"])
def test_an_integer_is_a_json_integer(value: str) -> None:
    body = b'{"target": {"type": "work_item", "id": "wi_1"}, "expected_version": ' + value.encode() + b"}"
    assert _refusal(body) == [("expected_version", "must be an integer")]


def test_null_and_absent_leave_a_field_out_and_true_confirms() -> None:
    target = b'"target": {"type": "work_item", "id": "wi_1"}'
    assert decode_body(b"{" + target + b', "confirm": null}', "application/json", Body).confirm is None
    assert decode_body(b"{" + target + b"}", "application/json", Body).confirm is None
    assert decode_body(b"{" + target + b', "confirm": true}', "application/json; charset=UTF-8", Body).confirm is True


def test_every_unknown_field_is_named_at_its_depth_and_a_renamed_field_is_known_by_its_wire_name() -> None:
    body = b'{"target": {"type": "t", "id": "i", "shape": 1}, "colour": "red", "class": "general", "class_": 1}'
    assert [path for path, _ in _refusal(body)] == ["target.shape", "colour", "class_"]


def test_a_wrong_kind_deep_in_the_body_is_named_by_its_path() -> None:
    assert _refusal(b'{"target": {"type": "t", "id": 5}}') == [("target.id", "must be a string")]
    assert _refusal(b'{"target": {"type": "t", "id": "i"}, "draft_ids": ["d", 2]}') == [
        ("draft_ids[1]", "must be a string")
    ]
    assert _refusal(b'{"target": {"type": "t"}}') == [("target.id", "is required")]
    assert _refusal(b"[1, 2]") == [("body", "must be an object")]


@pytest.mark.parametrize(
    ("body", "where"),
    [
        (b'{"target": ', "line 1, column 12 (byte 11)"),
        (b'{\n  "target" {}}', "line 2, column 12 (byte 13)"),
        (b'{"a": 1} x', "line 1, column 11 (byte 10)"),
    ],
)
def test_malformed_json_is_refused_with_its_position(body: bytes, where: str) -> None:
    [(path, message)] = _refusal(body)
    assert path == "body" and message.startswith("is not valid JSON") and message.endswith(where)


def test_json_nested_past_the_parser_is_refused_not_crashed() -> None:
    [(path, message)] = _refusal(b"[" * 100_000)
    assert path == "body" and "too deeply" in message


def test_an_empty_body_is_the_empty_object_whatever_its_media_type() -> None:
    assert _refusal(b"") == [("target", "is required")]
    assert decode_body(b"  ", None, NoBody) == NoBody()
    assert [path for path, _ in _refusal(b'{"now": true}', NoBody)] == ["now"]


@pytest.mark.parametrize(
    "content_type", [None, "text/plain", "application/x-www-form-urlencoded", "application/json; charset=latin-1"]
)
def test_a_body_is_json_by_its_media_type(content_type: str | None) -> None:
    with pytest.raises(UnsupportedMediaType) as refused:
        check_media_type(content_type)
    assert "application/json" in refused.value.detail
    with pytest.raises(UnsupportedMediaType):
        decode_body(b"{}", content_type, Body)


def test_json_with_its_charset_is_json() -> None:
    check_media_type("application/json")
    check_media_type("Application/JSON; charset=utf-8")


def test_a_declared_type_is_described_once_and_still_refuses_unknown_fields_every_time(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    class Fresh(msgspec.Struct, forbid_unknown_fields=True):
        target: Target

    described: list[Any] = []
    original = msgspec.inspect.type_info

    def counting(declared: Any) -> Any:
        described.append(declared)
        return original(declared)

    monkeypatch.setattr(msgspec.inspect, "type_info", counting)
    body = b'{"target": {"type": "work_item", "id": "wi_1", "colour": "red"}, "extra": 1}'
    first, second = _refusal(body, Fresh), _refusal(body, Fresh)
    assert first == second
    assert [path for path, _ in first] == ["target.colour", "extra"]
    assert described == [Fresh]
