"""Custom Temporal search attributes of Groundwork workflows, by name and Temporal type."""

from __future__ import annotations

# The dev server registers these at start (`--search-attribute`); production clusters need
# `temporal operator search-attribute create` once per namespace with the same names and types.
SEARCH_ATTRIBUTES: dict[str, str] = {
    "GroundworkWorkspace": "Keyword",
    "GroundworkTarget": "Keyword",
    "GroundworkState": "Keyword",
    "GroundworkEndpoint": "Keyword",
    "GroundworkEventType": "Keyword",
    "GroundworkDeliveryStatus": "Keyword",
    "GroundworkRecipient": "Keyword",
    "GroundworkChannel": "Keyword",
    # The subject (project) a context contribution is about.
    "GroundworkSubject": "Keyword",
}
