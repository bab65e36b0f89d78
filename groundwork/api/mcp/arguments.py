"""The MCP tools' argument types: each with a description in the specs' words, its closed set as an `enum` and
its bounds, so an assistant reads from the input schema what a call takes.

Bounds and closed sets are stated in the schema but checked by the services, exactly as for REST and GraphQL:
a value out of range or outside its set answers the same coded tool error (`validation_failed` or
`invalid_request`) on every transport. What the strict argument model itself refuses (a wrong JSON type, a
missing or an unknown argument) is a JSON-RPC error (groundwork.api.mcp.errors).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Annotated, Any

from pydantic import Field

from groundwork.domain.context_engine.model import CONTRIBUTION_TYPES, PACKAGE_STATUSES
from groundwork.domain.enhancement.model import (
    ACTIONS,
    ARTIFACT_TYPES,
    DRAFT_FIELDS,
    MAX_ACTIONS,
    MAX_APPLY_DRAFTS,
    MAX_INSTRUCTIONS,
    RUN_STATES,
)
from groundwork.domain.evidence_search.corpus import MAX_QUERY_CHARS
from groundwork.domain.idempotency import MAX_KEY_LENGTH
from groundwork.domain.ids import MAX_ID_LENGTH
from groundwork.domain.notifications.inbox import MAX_EXPECTED_VERSION, MAX_REASON, SOURCE_KINDS, STATUSES
from groundwork.domain.pagination import DEFAULT_LIMIT, MAX_CURSOR_LENGTH, MAX_LIMIT
from groundwork.domain.tenancy.administration import MAX_QUERY
from groundwork.domain.work_items import MAX_SPRINT
from groundwork.domain.work_items import STATUSES as WORK_ITEM_STATUSES

# Stated here for the schema; services/enhancement/runs.py and services/context_engine/briefings.py check them.
MAX_WAIT_SECONDS = 30
MAX_QUESTION_CHARS = 1000


def described(description: str, **bounds: Any) -> Any:
    """A pydantic `Field` that documents `description` and `bounds` in the input schema (not enforced there)."""
    return Field(description=description, json_schema_extra=bounds or None)


def choice(description: str, values: Iterable[str], *, optional: bool = True) -> Any:
    """An argument taking one of `values` (or null when `optional`), stated as the schema's `enum`."""
    listed: list[Any] = list(values)
    return described(description, enum=[*listed, None] if optional else listed)


def identifier(what: str) -> Any:
    """A required id argument."""
    return described(what, minLength=1, maxLength=MAX_ID_LENGTH)


def optional_identifier(what: str) -> Any:
    """An optional id argument."""
    return described(what, maxLength=MAX_ID_LENGTH)


Limit = Annotated[
    int,
    described(
        f"How many items a page holds, 1 to {MAX_LIMIT} (default {DEFAULT_LIMIT}).", minimum=1, maximum=MAX_LIMIT
    ),
]
Cursor = Annotated[
    str | None,
    described(
        "`page.nextCursor` of the previous answer, for the next page; omit for the first.", maxLength=MAX_CURSOR_LENGTH
    ),
]
ProjectFilter = Annotated[
    str | None, optional_identifier("Only this project (`prj_...`); omit for every project you read.")
]
EngagementFilter = Annotated[
    str | None, optional_identifier("Only the projects of this engagement (`eng_...`) that you may read.")
]
IdempotencyKey = Annotated[
    str,
    described(
        "A fresh key you choose for this call (a UUID); reuse it only to retry the same call, which then answers the "
        "first result and changes nothing twice.",
        minLength=1,
        maxLength=MAX_KEY_LENGTH,
    ),
]
Confirm = Annotated[bool | None, described("true after the user confirmed; anything else changes nothing.")]

# Work items
WorkItemId = Annotated[str, identifier("The work item's id (`wi_...`).")]
WorkItemStatus = Annotated[str | None, choice("Only work items with this status.", WORK_ITEM_STATUSES)]
Sprint = Annotated[str | None, described("Only work items of this sprint.", maxLength=MAX_SPRINT)]
PrincipalQuery = Annotated[str | None, described("Only people whose name contains this text.", maxLength=MAX_QUERY)]

# Enhancement
RunId = Annotated[str, identifier("The enhancement run's id (`wie_...`).")]
RunState = Annotated[str | None, choice("Only runs in this state.", RUN_STATES)]
ActionFilter = Annotated[str | None, choice("Only runs or drafts of this enhancement action.", ACTIONS)]
Action = Annotated[str, choice("The enhancement action to run.", ACTIONS, optional=False)]
Actions = Annotated[
    list[Annotated[str, choice("An enhancement action.", ACTIONS, optional=False)]],
    described(
        "The enhancement actions to run, each proposing drafts for one work item field.",
        minItems=1,
        maxItems=MAX_ACTIONS,
    ),
]
TargetFilter = Annotated[str | None, optional_identifier("Only runs whose target is this work item (`wi_...`).")]
DraftField = Annotated[str | None, choice("Only drafts proposing a value for this work item field.", DRAFT_FIELDS)]
ApplyEligible = Annotated[
    bool | None, described("true: only drafts that can be applied now; false: only those that cannot.")
]
ArtifactType = Annotated[str | None, choice("Only artifacts of this type.", ARTIFACT_TYPES)]
DraftIds = Annotated[
    list[Annotated[str, identifier("A draft's id (`draft_...`).")]],
    described("The drafts of this run to apply, at most one per field.", minItems=1, maxItems=MAX_APPLY_DRAFTS),
]
TargetVersion = Annotated[
    str,
    described(
        "The work item's version prepare_apply answered (`currentVersion`); a work item changed since changes nothing.",
        minLength=1,
        maxLength=100,
    ),
]
Instructions = Annotated[
    str | None, described("Extra guidance for the generator, in plain words.", maxLength=MAX_INSTRUCTIONS)
]
Wait = Annotated[
    int,
    described(
        f"Seconds to wait for the run to finish, 0 to {MAX_WAIT_SECONDS}; past it the answer is `pending` with the "
        "operation to poll.",
        minimum=0,
        maximum=MAX_WAIT_SECONDS,
    ),
]

# Context engine and evidence search
PackageId = Annotated[str, identifier("The context package's id (`pkg_...`).")]
PackageStatus = Annotated[
    str | None, choice("Only packages with this status (default: ready and stale).", PACKAGE_STATUSES)
]
ContributionType = Annotated[str | None, choice("Only packages of this contribution type.", CONTRIBUTION_TYPES)]
Question = Annotated[str, described("The question, in plain words.", minLength=1, maxLength=MAX_QUESTION_CHARS)]
SearchQuery = Annotated[
    str,
    described(
        'Words, "exact phrases", +required and -excluded terms (full text, English stemming).',
        minLength=1,
        maxLength=MAX_QUERY_CHARS,
    ),
]
PassageId = Annotated[str, identifier("The passage's id (`psg_...`): an evidence reference of kind `passage`.")]
SourceFilter = Annotated[str | None, optional_identifier("Only passages of this corpus source (`src_...`).")]

# Notifications and messaging
NotificationId = Annotated[str, identifier("Your notification's id (`notification_...`).")]
ProposalId = Annotated[str, identifier("The proposal's id (`ncp_...`) draft_notifications_messaging_change answered.")]
ExpectedVersion = Annotated[
    int,
    described(
        "The notification's `version` as you read it; a notification changed since changes nothing.",
        minimum=1,
        maximum=MAX_EXPECTED_VERSION,
    ),
]
NotificationStatus = Annotated[str | None, choice("Only notifications with this status.", STATUSES)]
SourceKind = Annotated[str | None, choice("Only notifications from this kind of source.", SOURCE_KINDS)]
Reason = Annotated[str | None, described("Why, in plain words (kept in the audit history).", maxLength=MAX_REASON)]
