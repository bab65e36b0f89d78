"""Directional signals of the Agent API: counts turned into a trend and a health, never money or people."""

from __future__ import annotations

TRENDS = ("rising", "steady", "falling")
HEALTHS = ("on_track", "at_risk", "off_track")
# The window a trend compares with the one before it.
TREND_WINDOW_DAYS = 14


def ratio(part: int, whole: int) -> float:
    """`part / whole` rounded to 3 decimals; 0 when there is nothing to divide."""
    return round(part / whole, 3) if whole else 0.0


def trend(recent: int, previous: int) -> str:
    """`rising`, `steady` or `falling`: the last window against the one before it."""
    if recent > previous:
        return "rising"
    if recent < previous:
        return "falling"
    return "steady"


def delivery_health(open_blockers: int, open_risks: int, open_items: int) -> str:
    """`off_track` with several blockers or a quarter of open work blocked, `at_risk` with any blocker or
    a heavy risk load, else `on_track`."""
    blocked = ratio(open_blockers, open_items)
    if open_blockers >= 2 or blocked >= 0.25:
        return "off_track"
    if open_blockers >= 1 or open_risks >= 3 or ratio(open_risks, open_items) >= 0.3:
        return "at_risk"
    return "on_track"


def sprint_health(done: int, not_started: int, total: int, blockers: int) -> str:
    """A sprint with blockers and most work not started is `off_track`; with either, `at_risk`."""
    if total == 0:
        return "on_track"
    untouched = ratio(not_started, total)
    if blockers and untouched >= 0.5:
        return "off_track"
    if blockers or (untouched >= 0.5 and ratio(done, total) < 0.25):
        return "at_risk"
    return "on_track"
