"""A run as one caller sees it: its row, actions, drafts and artifacts, the caller's rights, and what it may do next.

Views and their contents are reused while the run row (read on every request, its `updated_at` bumped by every
change of its contents) is unchanged, so an unchanged run costs one round trip, or none when its row was heard.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from groundwork.domain.enhancement.model import (
    SCOPE_APPLY,
    SCOPE_READ,
    SCOPE_RUN,
    AllowedAction,
    CallerRights,
    RunNotReviewable,
    allowed_actions,
    apply_ineligible_reason,
    not_reviewable_reason,
    review_expired,
)
from groundwork.domain.errors import (
    NotFound,
)
from groundwork.domain.tenancy.principals import Principal
from groundwork.persistence.repositories.enhancement import outputs, run_actions, run_contents, runs
from groundwork.platform.caches.recently_used import RecentlyUsed
from groundwork.services.enhancement import heard_runs
from groundwork.services.tenancy import project_access


@dataclass
class RunView:
    """A run with everything its resource shows, as one caller sees it."""

    run: runs.RunRow
    actions: list[run_actions.RunActionRow]
    drafts: list[outputs.DraftRow]
    artifacts: list[outputs.ArtifactRow]
    rights: CallerRights = field(default_factory=CallerRights.everything)
    eligible: dict[str, bool] = field(default_factory=dict)
    # Why each draft is not applyEligible (None when it is).
    ineligible_reasons: dict[str, str | None] = field(default_factory=dict)
    # A transport's encoding of this view, kept with it: a view is never changed once built, and `load_run`
    # hands out the same view while the run, the caller's rights and the review window are unchanged.
    renderings: dict[str, Any] = field(default_factory=dict, compare=False, repr=False)

    @property
    def expired(self) -> bool:
        return review_expired(self.run.state, self.run.review_expires_at, datetime.now(UTC))

    @property
    def finished(self) -> bool:
        """Whether the run has left queued/running (the API's `wait` ends there)."""
        return self.run.state not in ("queued", "running")

    def allowed_actions(self) -> list[AllowedAction]:
        """What this caller may do next, given the state and its scopes and role."""
        state = "expired" if self.expired else self.run.state
        return allowed_actions(state, any(self.eligible.values()), self.rights, len(self.actions))


async def visible_run(principal: Principal, run_id: str, *, heard: bool = False) -> tuple[runs.RunRow, frozenset[str]]:
    """A run of the caller's workspace whose project it sees, with its permissions there; 404 otherwise."""
    row_of = heard_runs.heard_run_row if heard else heard_runs.fresh_run_row
    run = await row_of(principal.workspace_id, run_id)
    if run is None:
        raise NotFound("No such enhancement run.")
    permissions = await project_access.project_permissions(principal, run.project_id)
    if not permissions or "project:read" not in permissions:
        raise NotFound("No such enhancement run.")
    return run, permissions


# The eight possible rights, made once: every read of a run needs one (it keys the reused view).
_RIGHTS = {(r, u, a): CallerRights(r, u, a) for r in (False, True) for u in (False, True) for a in (False, True)}


def caller_rights(principal: Principal, can_write: bool) -> CallerRights:
    """What the caller may do on runs of a project: read, run actions, apply (its scopes and role)."""
    return _RIGHTS[
        principal.has_scope(SCOPE_READ),
        principal.has_scope(SCOPE_RUN),
        principal.has_scope(SCOPE_APPLY) and can_write,
    ]


def _view(
    run: runs.RunRow,
    actions: list[run_actions.RunActionRow],
    drafts: list[outputs.DraftRow],
    artifacts: list[outputs.ArtifactRow],
    rights: CallerRights,
) -> RunView:
    view = RunView(run, actions, drafts, artifacts, rights)
    states = [d.state() for d in drafts]
    expired = view.expired
    for draft, state in zip(drafts, states, strict=True):
        reason = apply_ineligible_reason(state, states, run.state, expired)
        view.ineligible_reasons[draft.id] = reason
        view.eligible[draft.id] = reason is None
    return view


async def views_of(runs_: list[runs.RunRow], rights: dict[str, CallerRights]) -> list[RunView]:
    """Views of many runs in a constant number of queries."""
    actions, drafts, artifacts = await run_contents.run_contents([r.id for r in runs_])
    return [_view(r, actions[r.id], drafts[r.id], artifacts[r.id], rights[r.project_id]) for r in runs_]


Contents = tuple[list[run_actions.RunActionRow], list[outputs.DraftRow], list[outputs.ArtifactRow]]
# A run's actions, drafts and artifacts by run id, with the `updated_at` they were read at. Every change of
# them bumps the run's `updated_at` in its transaction, so a reader that sees the same `updated_at` on the
# run row (read on every request) may reuse them; a process keeps the most recent few hundred runs.
_contents: RecentlyUsed[str, tuple[datetime, Contents]] = RecentlyUsed(256)


async def _contents_of(run: runs.RunRow) -> Contents:
    cached = _contents.get(run.id)
    if cached is not None and cached[0] == run.updated_at:
        return cached[1]
    found = await run_contents.get_run_with_contents(run.workspace_id, run.id)
    if found is None:
        raise NotFound("No such enhancement run.")
    fresh, actions, drafts, artifacts = found
    if fresh.updated_at == run.updated_at:  # unchanged in between: safe to keep
        _contents.put(run.id, (run.updated_at, (actions, drafts, artifacts)))
    return actions, drafts, artifacts


# The views last built, by run id and caller rights, with whether the review window had ended when built.
# The run row (read on every request, its `updated_at` bumped by every change of the run's contents and
# carrying its target's live version) must equal the one the view was built from for it to be reused.
_views_built: RecentlyUsed[tuple[str, CallerRights], tuple[bool, RunView]] = RecentlyUsed(256)


async def read_run(principal: Principal, run_id: str) -> RunView:
    """A run the caller can see, for a read: its row and view reused while no change to them was heard
    (no round trip when unchanged; a change from any process shows once PostgreSQL delivers its notification)."""
    return await load_run(principal, run_id, heard=True)


async def load_run(principal: Principal, run_id: str, *, heard: bool = False) -> RunView:
    """A run the caller can see, with its actions, drafts and artifacts (one round trip when unchanged).

    From its row as PostgreSQL has it now, unless `heard` (`read_run`): then as last read, if no change was
    heard since."""
    run, permissions = await visible_run(principal, run_id, heard=heard)
    rights = caller_rights(principal, "work_items:write" in permissions)
    expired = review_expired(run.state, run.review_expires_at, datetime.now(UTC))
    key = (run.id, rights)
    cached = _views_built.get(key)
    if cached is not None and cached[0] == expired and (cached[1].run is run or cached[1].run == run):
        return cached[1]
    actions, drafts, artifacts = await _contents_of(run)
    view = _view(run, actions, drafts, artifacts, rights)
    kept = _contents.get(run.id)
    if kept is not None and kept[0] == run.updated_at:  # contents of this very run row: safe to hand out again
        _views_built.put(key, (expired, view))
    return view


async def reload_run(principal: Principal, run: runs.RunRow) -> RunView:
    """The run as PostgreSQL has it now, after a change the caller just made."""
    return await load_run(principal, run.id)


def check_reviewable(run: runs.RunRow) -> None:
    """Refuse (409 `run_not_reviewable`) unless the run is ready for review and its window is open."""
    expired = review_expired(run.state, run.review_expires_at, datetime.now(UTC))
    if reason := not_reviewable_reason(run.state, expired):
        raise RunNotReviewable(reason[0].upper() + reason[1:] + ".")
