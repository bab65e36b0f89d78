"""Which found passages a run widens its evidence around: the best passages of the pages that lead the search.

A search ranks passages, but what a work item needs sits on a page: the command or setting that answers it
is often a few paragraphs after the passage that shares its words ("Postfix can then be configured ... by
adding the check_policy_service parameter" under "Setting Up greylisting"). So the found passages are
grouped by page (their source); a page leads when its best few passages score near the best page's, and
the best passages of the leading pages are the anchors whose neighbours, in the same section, join the
evidence. A page that one stray passage reaches (a chapter that mentions the word once) does not lead.
"""

from __future__ import annotations

from dataclasses import dataclass

# A page's score: the sum of its best few passages' scores (one lucky passage does not make a page lead).
PAGE_PASSAGES = 3
# A page leads when its score is at least this share of the best page's.
PAGE_SHARE = 0.5
# How many of the leading pages' best passages anchor neighbours.
ANCHORS = 6
# How far either side of an anchor, in passages of the same section, its neighbours reach.
REACH = 8


@dataclass(frozen=True)
class Found:
    """A passage the search found: its id, its page (source) and its score."""

    id: str
    source: str
    score: float


def page_scores(found: list[Found]) -> dict[str, float]:
    """Each page's score: the sum of its best `PAGE_PASSAGES` passages' scores."""
    by_page: dict[str, list[float]] = {}
    for passage in found:
        by_page.setdefault(passage.source, []).append(passage.score)
    return {page: sum(sorted(scores, reverse=True)[:PAGE_PASSAGES]) for page, scores in by_page.items()}


def leading_pages(found: list[Found]) -> set[str]:
    """The pages whose score is at least `PAGE_SHARE` of the best page's."""
    scores = page_scores(found)
    best = max(scores.values(), default=0.0)
    return {page for page, score in scores.items() if best > 0 and score >= best * PAGE_SHARE}


def anchors(found: list[Found], count: int = ANCHORS) -> list[str]:
    """The ids of the best `count` passages of the leading pages, in the search's order (best first)."""
    leading = leading_pages(found)
    return [passage.id for passage in found if passage.source in leading][:count]


@dataclass(frozen=True)
class Placed:
    """A gathered passage and where it sits: its document version, its section and its offset in the text."""

    id: str
    version: str
    section: str | None
    start: int


def in_reading_order(hits: list[Placed], neighbours: list[Placed], anchored: list[str]) -> list[str]:
    """The gathered passages' ids, in the order a run's evidence lists them.

    The search's hits keep their rank, except that an anchor's section comes whole where the search ranked
    its best passage: its hits and the neighbours gathered for it, its subsections' included, in the
    document's order (a procedure's steps stay in order, ahead of weaker hits)."""
    chosen = set(anchored)
    sections = {(p.version, p.section) for p in hits if p.id in chosen}
    pool = list(hits)
    seen = {p.id for p in hits}
    for passage in neighbours:
        if passage.id not in seen:
            seen.add(passage.id)
            pool.append(passage)
    ordered: list[str] = []
    emitted: set[str] = set()
    for hit in hits:
        key = (hit.version, hit.section)
        if key not in sections:
            if hit.id not in emitted:
                emitted.add(hit.id)
                ordered.append(hit.id)
            continue
        whole = sorted((p for p in pool if p.id not in emitted and _within(p, key)), key=lambda p: p.start)
        emitted.update(p.id for p in whole)
        ordered += [p.id for p in whole]
    return ordered


def _within(passage: Placed, section: tuple[str, str | None]) -> bool:
    """Whether a passage sits in a section of a document version, or in one of its subsections."""
    version, name = section
    return passage.version == version and within_section(passage.section, name)


def within_section(section: str | None, parent: str | None) -> bool:
    """Whether a heading path is `parent` or one of its subsections ("A > B" is within "A")."""
    return section == parent or (parent is not None and (section or "").startswith(f"{parent} > "))
