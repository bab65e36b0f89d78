"""Custom Temporal search attributes of Groundwork workflows: the one place their names are written.

The dev server registers them at start (`--search-attribute`, from `SEARCH_ATTRIBUTES`); production
clusters need `temporal operator search-attribute create` once per namespace with the same names and
types. The workflows and the code that starts them use the typed keys below.
"""

from __future__ import annotations

from temporalio.common import SearchAttributeKey, SearchAttributePair, TypedSearchAttributes

# The workspace a workflow works for (every workflow type carries it; `*` for one that works across workspaces:
# the housekeeping purges, a re-segmentation, a run of the providers over every workspace).
WORKSPACE = SearchAttributeKey.for_keyword("GroundworkWorkspace")
EVERY_WORKSPACE = "*"
# An enhancement run's target work item and its state (`queued`, `running`, `ready_for_review`, ...).
TARGET = SearchAttributeKey.for_keyword("GroundworkTarget")
STATE = SearchAttributeKey.for_keyword("GroundworkState")
# A webhook delivery's endpoint and event type.
ENDPOINT = SearchAttributeKey.for_keyword("GroundworkEndpoint")
EVENT_TYPE = SearchAttributeKey.for_keyword("GroundworkEventType")
# A webhook or notification delivery's status: `pending`, `delivered`, `failed`.
DELIVERY_STATUS = SearchAttributeKey.for_keyword("GroundworkDeliveryStatus")
# A notification send's recipient and channel (`email`, `chat`, `digest`).
RECIPIENT = SearchAttributeKey.for_keyword("GroundworkRecipient")
CHANNEL = SearchAttributeKey.for_keyword("GroundworkChannel")
# The subject (project) a context contribution is about.
SUBJECT = SearchAttributeKey.for_keyword("GroundworkSubject")

KEYS: tuple[SearchAttributeKey[str], ...] = (
    WORKSPACE,
    TARGET,
    STATE,
    ENDPOINT,
    EVENT_TYPE,
    DELIVERY_STATUS,
    RECIPIENT,
    CHANNEL,
    SUBJECT,
)
# Name -> Temporal type, as `temporal server start-dev --search-attribute NAME=TYPE` takes them.
SEARCH_ATTRIBUTES: dict[str, str] = {key.name: "Keyword" for key in KEYS}


def workspace_attributes(workspace_id: str | None) -> TypedSearchAttributes:
    """`GroundworkWorkspace` alone: the workspace's id, or `*` for a workflow that works across workspaces."""
    return TypedSearchAttributes([SearchAttributePair(WORKSPACE, workspace_id or EVERY_WORKSPACE)])
