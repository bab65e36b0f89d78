"""Document furniture: passages that frame a document instead of saying something, ranked below prose.

Navigation ("Prev", "Next", "Download the ebook"), tables of contents (lines that are only a numbered
heading), and document metadata (an owner and pager line, an attendee list) match a question's words
without answering it, and being short, BM25 favours them. They stay searchable (a `+required` word or a
phrase still finds them) but rank below a prose passage that matches as well. The rule reads the
passage's text alone, so every replica classifies a passage the same way.
"""

from __future__ import annotations

import re

# Links a page frames itself with.
_NAVIGATION = frozenset(
    {
        "prev",
        "previous",
        "next",
        "up",
        "home",
        "top",
        "back to top",
        "contents",
        "table of contents",
        "index",
        "skip to content",
        "skip to main content",
        "download the ebook",
        "menu",
    }
)
# A numbered heading alone on its line ("9.10.2. Restoring Machines", "Chapter 6. Maintenance", "B.1. Shell"),
# optionally after a navigation word a page glued to it ("Next6.3. The apt-cache Command").
_NUMBERED_HEADING = re.compile(
    r"^(?:prev|previous|next|up)?\s*(?:(?:chapter|appendix|part|section)\s+[0-9a-z]+\.?|(?:[0-9]+|[a-z])(?:\.[0-9]+)+\.?)"
    r"\s+\S.{0,150}$",
    re.IGNORECASE,
)
# Who owns, pages for or attended something: a document's metadata, not its content.
_METADATA_LABELS = (
    "owner",
    "owners",
    "pager",
    "on-call",
    "oncall",
    "present",
    "attendees",
    "attendance",
    "participants",
    "author",
    "authors",
    "reviewers",
    "reviewer",
    "maintainer",
    "maintainers",
    "contact",
    "contacts",
    "epic",
    "last updated",
    "updated",
    "date",
    "version",
    "revision",
    "distribution",
    "audience",
    "team",
)
_METADATA_ITEM = re.compile(
    r"^[-*\s]*(?:\*\*|__)?(?:" + "|".join(re.escape(label) for label in _METADATA_LABELS) + r")(?:\*\*|__)?\s*:",
    re.IGNORECASE,
)
# Where one metadata item ends and the next may begin on the same line ("Owner: X. Pager: Y.").
_ITEM_BREAK = re.compile(r"(?<=[.;])\s+(?=[A-Z*_])|\n")


def is_furniture(text: str) -> bool:
    """Whether a passage is document furniture: navigation, a table of contents, or metadata lines only."""
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    if not lines:
        return False
    if all(line.lower().rstrip(" .:>\u00bb\u203a") in _NAVIGATION for line in lines):
        return True
    if all(_is_contents_entry(line) for line in lines):
        return True
    if not _METADATA_ITEM.match(lines[0]):  # every item must be metadata, the first one too: prose ends here
        return False
    items = [item for item in _ITEM_BREAK.split(text.strip()) if item.strip()]
    return all(_METADATA_ITEM.match(item) for item in items)


def _is_contents_entry(line: str) -> bool:
    # A heading's words, not a sentence: short, and not ending as a sentence or a lead-in does.
    return bool(_NUMBERED_HEADING.match(line)) and len(line.split()) <= 12 and not line.endswith((".", ":", "?"))
