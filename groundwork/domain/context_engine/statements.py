"""What a sentence of a project's data states, as the built-in providers read it.

A sentence is a *blocker* only where it says that something is blocked or waiting — "blocked by", "waiting on",
"parked until", "cannot … until", "without X … cannot", "must be fixed before", "depends on … which is late" —
never because it holds a word like "blocking" ("never render-blocking", "6 blocking issues" are not blocked
things). It is a *dated commitment* (a milestone) when it names a calendar date later than its document's own
date: a deadline, an end date, a renewal, a booking ("the licence ends on 30 September", "by 19 May").
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime

from groundwork.domain.evidence_search.document_dates import calendar_dates, resolve

_CANNOT = r"(?:cannot|can't|can not|could not|couldn't|unable to)"
_STATED_BLOCKED = re.compile(
    r"\bblocked (?:by|on|until|behind)\b"
    r"|\b(?:is|are|was|were|remains?|stays?|still|currently) blocked\b"
    r"|\b(?:waiting|wait) (?:on|for)\b|\bawaiting\b|\bon hold\b|\bparked until\b|\bheld up (?:by|on)\b"
    r"|\bstalled (?:on|by|until)\b"
    rf"|\b{_CANNOT} (?:start|begin|proceed|continue|ship|go live|deploy|release)\b"
    rf"|\b{_CANNOT}\b[^.;]*\b(?:until|unless)\b"
    rf"|\b{_CANNOT}\b[^.;]*\bwhile\b[^.;]*\bremains?\b"
    rf"|\bwithout\b[^.;]*\b{_CANNOT}\b"
    r"|\b(?:must|has to|have to|needs? to) be \w+(?:ed|en) before\b"
    r"|\bdepends? on\b[^.;]*\b(?:which|that) (?:is|are|was|were|has|have)\b[^.;]*"
    r"\b(?:late|delayed|overdue|slipping|not (?:yet )?(?:signed|contracted|available|ready|delivered|started|done))\b",
    re.IGNORECASE,
)
DECISION = re.compile(r"\b(decision|decided|agreed|approved|signed off|we will go with)\b", re.IGNORECASE)
RISK = re.compile(r"\b(risks?|at risk|could fail|might fail|may fail|concerns?|jeopardi[sz]e\w*)\b", re.IGNORECASE)
ACTION = re.compile(
    r"^(?:action(?: item)?s?|todo|to do|follow[- ]up)\s*[:\-]|\b(action items?|will follow up|to follow up)\b",
    re.IGNORECASE,
)
# A section's own heading names what its sentences are: the items of "Actions" are action items, those of
# "Risks" (or "Risks and mitigations") are risks.
ACTION_SECTION = re.compile(r"\b(actions?|action items|next steps|follow[- ]ups?)\s*$", re.IGNORECASE)
RISK_SECTION = re.compile(r"^\s*(?:known |open |key )?risks?\b", re.IGNORECASE)


def states_blocker(sentence: str) -> bool:
    """Whether the sentence says that something is blocked or waiting (not merely the word "blocking")."""
    return _STATED_BLOCKED.search(sentence) is not None


def commitment_date(sentence: str, document_date: datetime) -> datetime | None:
    """The first date the sentence names that falls after its document's own day (midnight UTC), else None."""
    day = document_date.replace(hour=0, minute=0, second=0, microsecond=0)
    for written in calendar_dates(sentence):
        instant = resolve(written, document_date)
        if instant is not None and instant > day:
            return instant
    return None


@dataclass(frozen=True)
class Statement:
    """What a sentence of a passage states: its contribution type and the capability that finds it, and for a
    dated commitment the date it commits to."""

    contribution_type: str
    capability: str
    due: datetime | None = None


def classify_passage_sentence(sentence: str, section: str | None, document_date: datetime) -> Statement | None:
    """The one claim a passage's sentence makes, by the first rule it meets: a decision, a risk (also any sentence
    of a "Risks" section), a blocker, a dated commitment, an action item; None for the rest."""
    heading = (section or "").split(" > ")[-1]
    if DECISION.search(sentence):
        return Statement("decision", "decisions")
    if RISK.search(sentence) or RISK_SECTION.search(heading):
        return Statement("risk", "risks")
    if states_blocker(sentence):
        return Statement("blocker", "blockers")
    due = commitment_date(sentence, document_date)
    if due is not None:
        return Statement("milestone", "milestones", due)
    if ACTION_SECTION.search(section or "") or ACTION.search(sentence):
        return Statement("finding", "action_items")
    return None
