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


def _open_items(counts: dict[str, Any] | None) -> int:
    return 0 if counts is None else int(counts["total"]) - int(counts["done"])


def _package(packages: dict[tuple[str, str], dict[str, Any]], project_id: str, kind: str, column: str) -> int:
    row = packages.get((project_id, kind))
    return int(row[column]) if row else 0


async def _facts(principal: Principal, project_ids: list[str], w: _Windows) -> tuple[Any, Any, Any]:
    items = await repo.work_item_counts(project_ids, w.recent, w.previous)
    changes = await repo.change_counts(project_ids, w.recent, w.previous, SCOPE_FIELDS)
    packages = await repo.package_counts(
        project_ids, list(allowed_classes(principal.scopes)), w.stale_before, w.recent, w.previous
    )
    return items, changes, packages


def _health(project_id: str, items: Any, packages: Any) -> str:
    return delivery_health(
        _package(packages, project_id, "blocker", "current"),
        _package(packages, project_id, "risk", "current"),
        _open_items(items.get(project_id)),
    )


def _count(row: dict[str, Any] | None, column: str) -> int:
    return int(row[column]) if row else 0


async def list_projects(principal: Principal) -> list[dict[str, Any]]:
    """Each visible project with its delivery health and throughput and risk trends."""
    project_ids = await _visible(principal)
    w = _windows()
    items, changes, packages = await _facts(principal, project_ids, w)
    return [
        {
            "id": p["id"],
            "key": p["key"],
            "engagementId": p["engagement_id"],
            "health": _health(p["id"], items, packages),
            "throughputTrend": trend(
                _count(changes.get(p["id"]), "done_recent"), _count(changes.get(p["id"]), "done_previous")
            ),
            "riskTrend": trend(
                _package(packages, p["id"], "risk", "new_recent"), _package(packages, p["id"], "risk", "new_previous")
            ),
        }
        for p in await repo.projects_with_engagement(project_ids)
    ]


def _by_status(row: dict[str, Any] | None) -> dict[str, int]:
    return {s: _count(row, s) for s in STATUSES}


async def project_delivery(principal: Principal, project_id: str) -> dict[str, Any]:
    """Delivery of one project: work by status, throughput and scope trends, blockers, health."""
    [pid] = await _visible(principal, project_id)
    w = _windows()
    items, changes, packages = await _facts(principal, [pid], w)
    counts, moved = items.get(pid), changes.get(pid)
    total = _count(counts, "total")
    open_items = _open_items(counts)
    blockers = _package(packages, pid, "blocker", "current")
    return {
        "projectId": pid,
        "health": _health(pid, items, packages),
        "windowDays": TREND_WINDOW_DAYS,
        "workItems": {
            "total": total,
            "open": open_items,
            "byStatus": _by_status(counts),
            "doneRatio": ratio(_count(counts, "done"), total),
            "inProgressRatio": ratio(_count(counts, "in_progress") + _count(counts, "in_review"), total),
        },
        "throughput": {
            "completedRecent": _count(moved, "done_recent"),
            "completedPrevious": _count(moved, "done_previous"),
            "trend": trend(_count(moved, "done_recent"), _count(moved, "done_previous")),
        },
        "scope": {
            "addedRecent": _count(counts, "added_recent"),
            "addedPrevious": _count(counts, "added_previous"),
            "changedRecent": _count(moved, "scope_recent"),
            "changedPrevious": _count(moved, "scope_previous"),
            "trend": trend(
                _count(counts, "added_recent") + _count(moved, "scope_recent"),
                _count(counts, "added_previous") + _count(moved, "scope_previous"),
            ),
        },
        "blockers": {"open": blockers, "blockedRatio": ratio(blockers, open_items)},
    }


def _current_sprint(sprints: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The latest sprint (by label) with unfinished work; else the latest one."""
    unfinished = [s for s in sprints if int(s["total"]) > int(s["done"])]
    chosen = unfinished or sprints
    return max(chosen, key=lambda s: s["sprint"]) if chosen else None


async def current_sprint(principal: Principal, project_id: str) -> dict[str, Any]:
    """The current sprint of one project: work by status, completion and untouched ratios, blockers, health."""
    [pid] = await _visible(principal, project_id)
    w = _windows()
    sprint = _current_sprint(await repo.sprint_counts(pid))
    if sprint is None:
        return {"projectId": pid, "sprint": None, "health": "on_track", "workItems": None, "blockers": 0}
    total, done = int(sprint["total"]), int(sprint["done"])
    not_started = int(sprint["backlog"]) + int(sprint["todo"])
    blockers = await repo.sprint_blockers(
        pid, sprint["sprint"], list(allowed_classes(principal.scopes)), w.stale_before
    )
    return {
        "projectId": pid,
        "sprint": sprint["sprint"],
        "health": sprint_health(done, not_started, total, blockers),
        "workItems": {
            "total": total,
            "byStatus": _by_status(sprint),
            "doneRatio": ratio(done, total),
            "notStartedRatio": ratio(not_started, total),
        },
        "blockers": blockers,
    }


async def project_risks(principal: Principal, project_id: str) -> dict[str, Any]:
    """Risk posture of one project: current and stale risk, blocker and dependency packages, with trends."""
    [pid] = await _visible(principal, project_id)
    w = _windows()
    items, _, packages = await _facts(principal, [pid], w)

    def kind(name: str) -> dict[str, Any]:
        recent = _package(packages, pid, name, "new_recent")
        previous = _package(packages, pid, name, "new_previous")
        return {
            "open": _package(packages, pid, name, "current"),
            "stale": _package(packages, pid, name, "stale"),
            "newRecent": recent,
            "newPrevious": previous,
            "trend": trend(recent, previous),
        }

    return {
        "projectId": pid,
        "health": _health(pid, items, packages),
        "windowDays": TREND_WINDOW_DAYS,
        "risks": kind("risk"),
        "blockers": kind("blocker"),
        "dependencies": kind("dependency"),
    }
