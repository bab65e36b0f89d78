"""A query string under the input policy: only declared parameters, each once, integers and booleans as such."""

from __future__ import annotations

import pytest
from litestar import get
from litestar.params import Parameter

from groundwork.api.input_policy.query_string import QueryParameters
from groundwork.domain.errors import InvalidRequest


@get("/things/{thing_id:str}")
async def list_things(
    thing_id: str,
    run_state: str | None = Parameter(query="state", default=None),
    limit: int | None = None,
    apply_eligible: bool | None = None,
    cursor: str | None = None,
    authorization: str | None = Parameter(header="Authorization", default=None),
) -> None:
    return None


RULES = QueryParameters.of(list_things, ["thing_id"], also=["query"])


def _refusal(query: bytes) -> list[tuple[str, str]]:
    with pytest.raises(InvalidRequest) as refused:
        RULES.check(query)
    return [(e.path, e.message) for e in refused.value.errors]


def test_the_declared_parameters_are_known_by_their_wire_names() -> None:
    assert RULES.kinds == {
        "query": "string",
        "state": "string",
        "limit": "integer",
        "apply_eligible": "boolean",
        "cursor": "string",
    }
    RULES.check(b"state=queued&limit=5&apply_eligible=true&cursor=abc&query=x")
    RULES.check(b"")


def test_every_unknown_parameter_is_named_with_what_the_route_takes() -> None:
    refused = _refusal(b"recipient_id=prn_1&run_state=queued&limit=2")
    assert [path for path, _ in refused] == ["recipient_id", "run_state"]
    assert "it takes query, state, limit, apply_eligible, cursor" in refused[0][1]


@pytest.mark.parametrize("value", [b"abc", b"1.5", b"", b"1e3", b"%2B1"])
def test_an_integer_is_written_as_an_integer(value: bytes) -> None:
    assert _refusal(b"limit=" + value) == [("limit", "must be an integer")]


def test_an_integer_past_every_bound_is_out_of_range() -> None:
    assert _refusal(b"limit=" + b"9" * 40) == [("limit", "is out of range")]


@pytest.mark.parametrize("value", [b"yes", b"1", b"True", b""])
def test_a_boolean_is_true_or_false(value: bytes) -> None:
    assert _refusal(b"apply_eligible=" + value) == [("apply_eligible", "must be true or false")]


def test_a_parameter_given_twice_is_refused() -> None:
    assert _refusal(b"state=queued&state=running") == [("state", "is given more than once; give it once")]
