"""The built-in providers' rules: contributions derived deterministically from a project's own data.

`work-items` reads canonical work items and their history: risks from `fields.risks`, blockers and
dependencies stated in their text, milestones from sprints, scope changes from history. `corpus`
reads active passages: decisions, risks, blockers, dated commitments (milestones, one per date, citing
every source that states it) and action items, each citing its passage (`statements` says which sentence
is which). Every summary is made of sentences taken from the data (or counts of it), never invented; equal
data gives equal contributions, so a second run over unchanged data contributes nothing.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from groundwork.domain.context_engine.contribution import MAX_EVIDENCE, MAX_SUMMARY_CHARS, EvidenceInput
from groundwork.domain.context_engine.model import normalise_term
from groundwork.domain.context_engine.statements import classify_passage_sentence, states_blocker
from groundwork.domain.enhancement.extractive import sentences

WORK_ITEMS_PROVIDER = "work-items"
CORPUS_PROVIDER = "corpus"
# name: (classification, capabilities, authority)
BUILTIN_PROVIDERS: dict[str, tuple[str, tuple[str, ...], str]] = {
    WORK_ITEMS_PROVIDER: (
        "work_items",
        ("risks", "blockers", "dependencies", "milestones", "scope_changes"),
        "canonical",
    ),
    CORPUS_PROVIDER: ("corpus", ("decisions", "risks", "blockers", "milestones", "action_items"), "advisory"),
}
# The fields whose change after creation counts as a change of scope.
SCOPE_FIELDS = ("title", "description", "requirements", "acceptance_criteria", "estimate")
_TEXT_FIELDS = ("description", "requirements", "design_notes", "implementation_plan", "acceptance_criteria", "risks")
_SUMMARY_BUDGET = 600

_DEPENDENCY = re.compile(
    r"\b(depends on|dependent on|dependenc(?:y|ies)|relies on|rely on|not (?:yet )?contracted"
    r"|requires? .{0,60}\bfrom (?:the )?(?:vendor|provider|psp|supplier|partner|team)\b)",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class ChangeFacts:
    """One entry of a work item's history."""

    version_after: datetime
    changed_at: datetime
    changes: dict[str, Any]


@dataclass(frozen=True)
class WorkItemFacts:
    """A canonical work item with its history, as the work-items provider reads it."""

    id: str
    key: str
    title: str
    status: str
    sprint: str | None
    version: datetime
    fields: dict[str, Any]
    history: tuple[ChangeFacts, ...] = ()


@dataclass(frozen=True)
class PassageFacts:
    """An active passage, as the corpus provider reads it."""

    id: str
    source_id: str
    source_title: str
    section: str | None
    ordinal: int
    text: str
    classification: str
    as_of: datetime


@dataclass(frozen=True)
class Derived:
    """A contribution a built-in provider would make (its provider, project and `supersedes` come later)."""

    term: str
    summary: str
    contribution_type: str
    evidence: tuple[EvidenceInput, ...]

    @property
    def generated_at(self) -> datetime:
        """A derived contribution is as new as its newest evidence: no clock, so runs repeat exactly."""
        return max(e.as_of for e in self.evidence)

    @property
    def content_class(self) -> str:
        """The restricted class of its evidence, else `general` (built-in providers are not restricted)."""
        return next((e.reference_class for e in self.evidence if e.reference_class != "general"), "general")

    @property
    def key(self) -> tuple[str, str, str]:
        """Its identity within the project: normalised term, type and class."""
        return normalise_term(self.term), self.contribution_type, self.content_class


@dataclass
class _Group:
    term: str
    contribution_type: str
    texts: list[str] = field(default_factory=list)
    evidence: list[EvidenceInput] = field(default_factory=list)


def _summary(prefix: str, texts: Iterable[str]) -> str:
    parts: list[str] = []
    used = len(prefix)
    for text in dict.fromkeys(texts):
        if parts and used + len(text) + 1 > _SUMMARY_BUDGET:
            break
        parts.append(text)
        used += len(text) + 1
    summary = (prefix + " ".join(parts)).strip()
    return summary[:MAX_SUMMARY_CHARS]


def _finish(groups: Iterable[_Group], prefix: dict[tuple[str, str], str] | None = None) -> list[Derived]:
    derived = []
    for group in groups:
        if not group.evidence or not group.texts:
            continue
        evidence = tuple(sorted(set(group.evidence), key=lambda e: (-e.as_of.timestamp(), e.reference_id)))
        head = (prefix or {}).get((group.term, group.contribution_type), "")
        derived.append(
            Derived(
                group.term, _summary(head, group.texts), group.contribution_type, tuple(sorted(evidence[:MAX_EVIDENCE]))
            )
        )
    return sorted(derived, key=lambda d: (d.key, d.term))


def _matching(text: str, pattern: re.Pattern[str]) -> list[str]:
    return [s for s in sentences(text) if pattern.search(s)]


def _blocked(text: str) -> list[str]:
    return [s for s in sentences(text) if states_blocker(s)]


def derive_from_work_items(project_key: str, items: list[WorkItemFacts]) -> list[Derived]:
    """Risks, blockers, dependencies (open items), milestones (sprints) and scope changes (history)."""
    groups: dict[tuple[str, str], _Group] = {}
    prefixes: dict[tuple[str, str], str] = {}

    def group(term: str, kind: str) -> _Group:
        return groups.setdefault((term, kind), _Group(term, kind))

    for item in sorted(items, key=lambda i: i.key):
        term = f"{item.key} {item.title}"
        ref = ("work_item", item.id, "general", item.version)
        if item.status != "done":
            risks = item.fields.get("risks")
            if isinstance(risks, str) and risks.strip():
                found = sentences(risks)
                if found:
                    g = group(term, "risk")
                    g.texts += found
                    g.evidence.append(EvidenceInput("risks", *ref))
                    prefixes[(term, "risk")] = f"{item.key}: "
            text = "\n\n".join(
                str(item.fields[name]) for name in _TEXT_FIELDS if isinstance(item.fields.get(name), str)
            )
            for kind, capability, found in (
                ("blocker", "blockers", _blocked(text)),
                ("dependency", "dependencies", _matching(text, _DEPENDENCY)),
            ):
                if found:
                    g = group(term, kind)
                    g.texts += found
                    g.evidence.append(EvidenceInput(capability, *ref))
                    prefixes[(term, kind)] = f"{item.key}: "
        scope = [c for c in item.history if any(name in c.changes for name in SCOPE_FIELDS)]
        if scope:
            changed = sorted({name for c in scope for name in c.changes if name in SCOPE_FIELDS})
            line = f"{item.key}: scope changed {len(scope)} time(s) after creation ({', '.join(changed)})."
            estimates = [c.changes["estimate"] for c in scope if isinstance(c.changes.get("estimate"), dict)]
            if estimates:
                line += f" Estimate {estimates[0].get('from')} -> {estimates[-1].get('to')}."
            g = group(term, "finding")
            g.texts.append(line)
            for change in scope[-MAX_EVIDENCE:]:
                history_id = f"{item.id}@{change.version_after.strftime('%Y-%m-%dT%H:%M:%S.%fZ')}"
                g.evidence.append(
                    EvidenceInput("scope_changes", "work_item_history", history_id, "general", change.changed_at)
                )
    by_sprint: dict[str, list[WorkItemFacts]] = defaultdict(list)
    for item in items:
        if item.sprint:
            by_sprint[item.sprint].append(item)
    for sprint, members in sorted(by_sprint.items()):
        done = sum(1 for i in members if i.status == "done")
        active = sum(1 for i in members if i.status in ("in_progress", "in_review"))
        g = group(f"{project_key} sprint {sprint}", "milestone")
        g.texts.append(
            f"Sprint {sprint} of {project_key}: {done} of {len(members)} work items done, {active} in progress, "
            f"{len(members) - done - active} not started."
        )
        newest_first = sorted(members, key=lambda i: (-i.version.timestamp(), i.id))[:MAX_EVIDENCE]
        g.evidence += [EvidenceInput("milestones", "work_item", i.id, "general", i.version) for i in newest_first]
    return _finish(groups.values(), prefixes)


def _topic(passage: PassageFacts) -> str:
    section = (passage.section or "").split(" > ")[-1].strip()
    return f"{passage.source_title} — {section}" if section else passage.source_title


def milestone_term(due: datetime, topic: str) -> str:
    """A dated commitment's term: its date and where it is first stated (`31 August 2026 — Steering — PCI`)."""
    return f"{due.day} {due:%B %Y} — {topic}"[:200]


def derive_from_passages(passages: list[PassageFacts]) -> list[Derived]:
    """Decisions, risks, blockers and action items in active passages, grouped by source section and type; dated
    commitments grouped by their date across sources. A passage's date is its document's (`as_of`)."""
    groups: dict[tuple[str, str, str, str], _Group] = {}
    for passage in sorted(passages, key=lambda p: (p.source_id, p.ordinal)):
        topic = _topic(passage)[:200]
        for text in sentences(passage.text):
            statement = classify_passage_sentence(text, passage.section, passage.as_of)
            if statement is None:
                continue  # a sentence is one claim: the first rule it meets, or none
            kind = statement.contribution_type
            if statement.due is not None:
                # One package per date and class: every source stating it adds its sentence and evidence; the
                # term names the date and the first place (by source, then position) that states it.
                key = (f"{statement.due:%Y-%m-%d}", "", kind, passage.classification)
                g = groups.setdefault(key, _Group(milestone_term(statement.due, topic), kind))
            else:
                g = groups.setdefault((passage.source_id, topic, kind, passage.classification), _Group(topic, kind))
            g.texts.append(text)
            g.evidence.append(
                EvidenceInput(statement.capability, "passage", passage.id, passage.classification, passage.as_of)
            )
    # Two sources may share a section title: their groups of one type and class become one contribution.
    merged: dict[tuple[str, str, str], _Group] = {}
    for (_, _, kind, content_class), g in sorted(groups.items()):
        target = merged.setdefault((normalise_term(g.term), kind, content_class), _Group(g.term, kind))
        target.texts += g.texts
        target.evidence += g.evidence
    return _finish(merged.values())
