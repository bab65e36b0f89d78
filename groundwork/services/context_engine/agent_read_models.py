"""The Agent API's read models: project delivery, the current sprint and risks, as directional signals.

Only counts, ratios, trends (`rising`, `steady`, `falling` over two 14-day windows) and health
(`on_track`, `at_risk`, `off_track`): no rates, no money, no invoice data, no person (no names,
e-mails, principal ids, assignees or watchers), and no free text that could carry any of them.
Visibility is the context engine's: projects where the caller holds `context:read`, and only
package classes its key may see.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from groundwork.domain.context_engine.agent import (
    TREND_WINDOW_DAYS,
    delivery_health,
    ratio,
    sprint_health,
    trend,
)
from groundwork.domain.context_engine.derivation import SCOPE_FIELDS
from groundwork.domain.context_engine.model import allowed_classes, stale_threshold_days
from groundwork.domain.errors import NotFound
from groundwork.domain.tenancy.principals import Principal
from groundwork.domain.work_items import STATUSES
from groundwork.persistence.repositories.context_engine import agent_read_models as repo
from groundwork.persistence.repositories.context_engine.agent_read_models import (
    ChangeCountsRow,
    PackageCountsRow,
    SprintCountsRow,
    WorkItemCountsRow,
)
from groundwork.persistence.repositories.tenancy import workspaces as tenancy
from groundwork.services.evidence_search.search import CONTEXT_READ


@dataclass(frozen=True)
class _Windows:
    now: datetime
    recent: datetime
    previous: datetime
    stale_before: datetime


def _windows() -> _Windows:
    now = datetime.now(UTC)
    window = timedelta(days=TREND_WINDOW_DAYS)
    return _Windows(now, now - window, now - 2 * window, now - timedelta(days=stale_threshold_days()))


async def _visible(principal: Principal, project_id: str | None = None) -> list[str]:
    readable = await tenancy.visible_project_ids(principal, CONTEXT_READ)
    if project_id is None:
        return sorted(readable)
    if project_id not in readable:
        raise NotFound("No such project.")
    return [project_id]


# What a project without work items, changes or packages of a kind counts: nothing.
_NO_ITEMS = WorkItemCountsRow("", 0, dict.fromkeys(STATUSES, 0), 0, 0)
_NO_CHANGES = ChangeCountsRow("", 0, 0, 0, 0)
_NO_PACKAGES = PackageCountsRow("", "", 0, 0, 0, 0)


@dataclass(frozen=True)
class _Facts:
    """The counts behind a project's read models, by project (and, for packages, by type)."""

    items: dict[str, WorkItemCountsRow]
    changes: dict[str, ChangeCountsRow]
    packages: dict[tuple[str, str], PackageCountsRow]

    def items_of(self, project_id: str) -> WorkItemCountsRow:
        """The project's work item counts (zeros when it has none)."""
        return self.items.get(project_id, _NO_ITEMS)

    def changes_of(self, project_id: str) -> ChangeCountsRow:
        """The project's change counts (zeros when nothing changed)."""
        return self.changes.get(project_id, _NO_CHANGES)

    def packages_of(self, project_id: str, kind: str) -> PackageCountsRow:
        """The project's package counts of one type (zeros when it has none)."""
        return self.packages.get((project_id, kind), _NO_PACKAGES)


def _open_items(counts: WorkItemCountsRow) -> int:
    return counts.total - counts.by_status["done"]


async def _facts(principal: Principal, project_ids: list[str], w: _Windows) -> _Facts:
    items = await repo.work_item_counts(project_ids, w.recent, w.previous)
    changes = await repo.change_counts(project_ids, w.recent, w.previous, SCOPE_FIELDS)
    packages = await repo.package_counts(
        project_ids, list(allowed_classes(principal.scopes)), w.stale_before, w.recent, w.previous
    )
    return _Facts(items, changes, packages)


def _health(project_id: str, facts: _Facts) -> str:
    return delivery_health(
        facts.packages_of(project_id, "blocker").current,
        facts.packages_of(project_id, "risk").current,
        _open_items(facts.items_of(project_id)),
    )


async def list_projects(principal: Principal) -> list[dict[str, Any]]:
    """Each visible project with its delivery health and throughput and risk trends."""
    project_ids = await _visible(principal)
    w = _windows()
    facts = await _facts(principal, project_ids, w)
    return [
        {
            "id": p.id,
            "key": p.key,
            "engagementId": p.engagement_id,
            "health": _health(p.id, facts),
            "throughputTrend": trend(facts.changes_of(p.id).done_recent, facts.changes_of(p.id).done_previous),
            "riskTrend": trend(
                facts.packages_of(p.id, "risk").new_recent, facts.packages_of(p.id, "risk").new_previous
            ),
        }
        for p in await tenancy.projects_by_id(project_ids)
    ]


async def project_delivery(principal: Principal, project_id: str) -> dict[str, Any]:
    """Delivery of one project: work by status, throughput and scope trends, blockers, health."""
    [pid] = await _visible(principal, project_id)
    w = _windows()
    facts = await _facts(principal, [pid], w)
    counts, moved = facts.items_of(pid), facts.changes_of(pid)
    total = counts.total
    open_items = _open_items(counts)
    blockers = facts.packages_of(pid, "blocker").current
    return {
        "projectId": pid,
        "health": _health(pid, facts),
        "windowDays": TREND_WINDOW_DAYS,
        "workItems": {
            "total": total,
            "open": open_items,
            "byStatus": dict(counts.by_status),
            "doneRatio": ratio(counts.by_status["done"], total),
            "inProgressRatio": ratio(counts.by_status["in_progress"] + counts.by_status["in_review"], total),
        },
        "throughput": {
            "completedRecent": moved.done_recent,
            "completedPrevious": moved.done_previous,
            "trend": trend(moved.done_recent, moved.done_previous),
        },
        "scope": {
            "addedRecent": counts.added_recent,
            "addedPrevious": counts.added_previous,
            "changedRecent": moved.scope_recent,
            "changedPrevious": moved.scope_previous,
            "trend": trend(
                counts.added_recent + moved.scope_recent,
                counts.added_previous + moved.scope_previous,
            ),
        },
        "blockers": {"open": blockers, "blockedRatio": ratio(blockers, open_items)},
    }


def _current_sprint(sprints: list[SprintCountsRow]) -> SprintCountsRow | None:
    """The latest sprint (by label) with unfinished work; else the latest one."""
    unfinished = [s for s in sprints if s.total > s.by_status["done"]]
    chosen = unfinished or sprints
    return max(chosen, key=lambda s: s.sprint) if chosen else None


async def current_sprint(principal: Principal, project_id: str) -> dict[str, Any]:
    """The current sprint of one project: work by status, completion and untouched ratios, blockers, health."""
    [pid] = await _visible(principal, project_id)
    w = _windows()
    sprint = _current_sprint(await repo.sprint_counts(pid))
    if sprint is None:
        return {"projectId": pid, "sprint": None, "health": "on_track", "workItems": None, "blockers": 0}
    total, done = sprint.total, sprint.by_status["done"]
    not_started = sprint.by_status["backlog"] + sprint.by_status["todo"]
    blockers = await repo.sprint_blockers(pid, sprint.sprint, list(allowed_classes(principal.scopes)), w.stale_before)
    return {
        "projectId": pid,
        "sprint": sprint.sprint,
        "health": sprint_health(done, not_started, total, blockers),
        "workItems": {
            "total": total,
            "byStatus": dict(sprint.by_status),
            "doneRatio": ratio(done, total),
            "notStartedRatio": ratio(not_started, total),
        },
        "blockers": blockers,
    }


async def project_risks(principal: Principal, project_id: str) -> dict[str, Any]:
    """Risk posture of one project: current and stale risk, blocker and dependency packages, with trends."""
    [pid] = await _visible(principal, project_id)
    w = _windows()
    facts = await _facts(principal, [pid], w)

    def kind(name: str) -> dict[str, Any]:
        counts = facts.packages_of(pid, name)
        return {
            "open": counts.current,
            "stale": counts.stale,
            "newRecent": counts.new_recent,
            "newPrevious": counts.new_previous,
            "trend": trend(counts.new_recent, counts.new_previous),
        }

    return {
        "projectId": pid,
        "health": _health(pid, facts),
        "windowDays": TREND_WINDOW_DAYS,
        "risks": kind("risk"),
        "blockers": kind("blocker"),
        "dependencies": kind("dependency"),
    }
