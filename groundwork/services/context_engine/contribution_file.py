"""`groundwork contribute FILE.jsonl`: one contribution a line, each checked, then contributed whole or not at all.

Every line is checked against the same rules as the internal API before anything is written; a bad
line is reported with its number and contributes nothing. Good lines run `ContextContributionWorkflow`
through the worker when one polls, else its steps in one transaction here, so no contribution is
ever half-written. A line seen before (same fingerprint) changes nothing.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from temporalio.client import Client, WorkflowFailureError
from temporalio.exceptions import WorkflowAlreadyStartedError

from groundwork.domain.errors import GroundworkError
from groundwork.persistence.repositories.context_engine import contributions as contribution_rows
from groundwork.persistence.repositories.tenancy import workspaces as tenancy
from groundwork.services.context_engine.contributions import (
    catch_up_packages_here,
    contribute_in_process,
    receive_contribution,
    start_contribution,
)
from groundwork.workflows.context_engine import ContributionResult, ContributionWork


@dataclass
class LineOutcome:
    """What one line did: its outcome (a decision, `unchanged` or `failed`) and the entry or the reason."""

    number: int
    outcome: str
    contribution_id: str | None = None
    entry_id: str | None = None
    reason: str | None = None


@dataclass
class ContributeReport:
    """Every non-blank line's outcome, in file order."""

    lines: list[LineOutcome] = field(default_factory=list)

    def counts(self) -> Counter[str]:
        """How many lines had each outcome."""
        return Counter(line.outcome for line in self.lines)

    @property
    def failed(self) -> list[LineOutcome]:
        """The lines that contributed nothing, with their reasons."""
        return [line for line in self.lines if line.outcome == "failed"]


async def _run(work: ContributionWork, client: Client | None, task_queue: str) -> ContributionResult | None:
    if client is None:
        return await contribute_in_process(work, index=False)
    try:
        handle = await start_contribution(client, task_queue, work)
    except WorkflowAlreadyStartedError:
        return None  # it ran before: the row tells
    return await handle.result()  # type: ignore[no-any-return]


async def contribute_lines(
    workspace_slug: str,
    lines: Iterable[str],
    *,
    client: Client | None,
    task_queue: str,
    progress: Callable[[LineOutcome], None] | None = None,
) -> ContributeReport:
    """Check every line, then contribute the good ones in order."""
    workspace = await tenancy.get_workspace_by_slug(workspace_slug)
    if workspace is None:
        raise GroundworkError(f"No workspace with the slug {workspace_slug!r}.")
    report = ContributeReport()
    accepted: list[tuple[LineOutcome, ContributionWork]] = []
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        outcome = LineOutcome(number, "pending")
        report.lines.append(outcome)
        try:
            record = json.loads(line)
        except json.JSONDecodeError as exc:
            outcome.outcome, outcome.reason = "failed", f"not valid JSON ({exc.msg} at column {exc.colno})"
            continue
        try:
            work = await receive_contribution(workspace.id, record, received_by=None)
        except GroundworkError as error:
            outcome.outcome, outcome.reason = "failed", error.summary()
            continue
        outcome.contribution_id = work.contribution_id
        accepted.append((outcome, work))
    for outcome in report.failed:
        if progress is not None:
            progress(outcome)
    for outcome, work in accepted:
        known = await contribution_rows.get_contribution(work.contribution_id)
        try:
            if known is not None and known.state == "applied":
                outcome.outcome, outcome.entry_id = "unchanged", known.entry_id
            else:
                result = await _run(work, client, task_queue)
                row = await contribution_rows.get_contribution(work.contribution_id)
                outcome.outcome = result.decision if result is not None else "unchanged"
                outcome.entry_id = row.entry_id if row is not None else None
        except (GroundworkError, WorkflowFailureError) as error:
            outcome.outcome = "failed"
            outcome.reason = error.summary() if isinstance(error, GroundworkError) else f"contribution failed: {error}"
        if progress is not None:
            progress(outcome)
    if client is None and any(o.outcome not in ("failed", "unchanged") for o in report.lines):
        await catch_up_packages_here()
    return report
