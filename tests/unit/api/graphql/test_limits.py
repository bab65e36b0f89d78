"""A document asking for too many fields is refused before graphql-core validates it, in a few milliseconds of
this process's CPU, and no resolver runs."""

from __future__ import annotations

import time
from typing import Any

import strawberry
from graphql import parse

from groundwork.api.graphql.errors import CodedErrors
from groundwork.api.graphql.limits import MAX_REPEATS, MAX_SELECTIONS, SelectionBudget, query_limits, selection_problem

calls: list[str] = []


@strawberry.type
class Viewer:
    id: str


def _viewer() -> Viewer:
    calls.append("viewer")
    return Viewer(id="prn_1")


@strawberry.type
class Query:
    viewer: Viewer = strawberry.field(resolver=_viewer)


LIMITED = strawberry.Schema(query=Query, extensions=[*query_limits(), CodedErrors])
WITHOUT_BUDGET = strawberry.Schema(
    query=Query, extensions=[e for e in query_limits() if e is not SelectionBudget] + [CodedErrors]
)
# The document: 1,240 repeated `viewer { id }`, about 10 KB and under the token limit.
REPEATED = "{" + " viewer { id }" * 1240 + " }"


async def _cpu_seconds(schema: strawberry.Schema, document: str) -> tuple[float, Any]:
    # This thread's CPU, not the process's: under pytest-xdist the process also runs the session's servers and
    # Temporal worker threads, whose work is not this document's.
    started = time.thread_time()
    result = await schema.execute(document)
    return time.thread_time() - started, result


async def test_a_field_repeated_a_thousand_times_is_refused_fast_and_runs_nothing() -> None:
    calls.clear()
    spent, result = await _cpu_seconds(LIMITED, REPEATED)
    assert result.data is None and calls == []
    [error] = result.errors
    assert error.extensions["code"] == "query_too_costly"
    assert f"at most {MAX_REPEATS}" in error.message
    assert spent < 0.05, spent
    # What the budget saves: graphql-core's own validation of the same document.
    slow, _ = await _cpu_seconds(WITHOUT_BUDGET, REPEATED)
    assert slow > 10 * spent


def test_more_fields_than_the_budget_is_a_problem_however_they_are_named() -> None:
    many = "{ viewer {" + "".join(f" f{n}" for n in range(MAX_SELECTIONS + 1)) + " } }"
    problem = selection_problem(parse(many))
    assert problem is not None and f"more than {MAX_SELECTIONS} fields" in problem
    assert selection_problem(parse("{ viewer { id } again: viewer { id } }")) is None


async def test_a_normal_document_still_answers() -> None:
    calls.clear()
    fine = await LIMITED.execute("{ viewer { id } again: viewer { id } }")
    assert fine.errors is None and fine.data == {"viewer": {"id": "prn_1"}, "again": {"id": "prn_1"}}
    assert calls == ["viewer", "viewer"]
