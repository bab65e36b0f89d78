"""What an export holds once read: one entry per external work item, and the entries refused with why."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

KINDS = ("github", "jira")


@dataclass(frozen=True)
class ExternalItem:
    """One tracker entry in canonical terms; `people` are logins or e-mails, matched to principals later."""

    position: int  # the entry's place in the file: array index + 1 (GitHub) or row number (Jira, header = 1)
    external_id: str
    url: str | None
    title: str
    raw_status: str
    description: str | None
    estimate: float | None
    labels: tuple[str, ...]
    sprint: str | None
    people: tuple[str, ...]
    updated_at: datetime | None


@dataclass
class ParsedExport:
    """An export read: its items, the entries refused (position, reason), and pull requests skipped."""

    items: list[ExternalItem] = field(default_factory=list)
    rejected: list[tuple[int, str]] = field(default_factory=list)
    pull_requests_skipped: int = 0


class UnreadableExport(ValueError):
    """The file as a whole is not an export of the named format (nothing is imported)."""
