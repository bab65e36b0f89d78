"""A document asking for too many fields is refused before graphql-core validates it (the validation whose
pairwise field-merging check cost seconds on such a document never runs), and no resolver runs.

The refusal's cost is bounded too, in this thread's CPU (not wall-clock time, and not the process's: under
pytest-xdist the process also runs the session's servers), with ten times the margin of the ~50 ms the issue
allows: a tight bound flaked on a loaded CI machine (57 ms), while the unprotected document costs seconds.
The timed call is `execute_sync`: awaited, the refusal shared this thread with every task of the session's
event loop, and CI once charged it 0.67 s of their CPU."""

from __future__ import annotations

import gc
import time
from typing import Any

import pytest
import strawberry
import strawberry.schema.schema as strawberry_schema
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
# Ten times the issue's ~50 ms: a regression guard (graphql-core's own validation of REPEATED takes seconds).
REFUSAL_CPU_BOUND = 0.5


def _counting_validation(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Counts graphql-core validations Strawberry starts, and runs each."""
    validations: list[int] = []
    validate = strawberry_schema.validate

    def counted(*args: Any, **kwargs: Any) -> Any:
        validations.append(1)
        return validate(*args, **kwargs)

    monkeypatch.setattr(strawberry_schema, "validate", counted)
    return validations


async def test_a_field_repeated_a_thousand_times_is_refused_before_validation_and_runs_nothing(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    validations = _counting_validation(monkeypatch)
    calls.clear()
    # The refusal's own CPU: parsing 1,240 fields allocates enough to start a full garbage collection of
    # everything the session's other tests left (0.5 to 0.67 s in full runs). Collected before, paused during.
    gc.collect()
    gc.disable()
    try:
        started = time.thread_time()
        result = LIMITED.execute_sync(REPEATED)
        spent = time.thread_time() - started
    finally:
        gc.enable()
    assert spent < REFUSAL_CPU_BOUND
    assert result.data is None and calls == []
    assert result.errors is not None
    [error] = result.errors
    assert error.extensions is not None and error.extensions["code"] == "query_too_costly"
    assert f"at most {MAX_REPEATS}" in error.message
    assert validations == []
    # Without the budget the same document goes through graphql-core's validation: what the budget saves.
    await WITHOUT_BUDGET.execute(REPEATED)
    assert validations == [1]


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
