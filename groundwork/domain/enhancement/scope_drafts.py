"""The drafts that say what the work is: requirements, description and design notes.

Each draws only corpus statements about the item that the item does not already state. Requirements are
testable behaviour and constraints (never a command, a risk or the title again); a vague item's description
is built as problem, cause, fix and impact from the evidence; design notes are the decisions, options and
trade-offs the evidence records.
"""

from __future__ import annotations

import re

from groundwork.domain.enhancement.drafting import Line, digest, draft, trace
from groundwork.domain.enhancement.enhancer import EnhancementContext
from groundwork.domain.enhancement.model import ActionOutput, ArtifactProposal
from groundwork.domain.enhancement.phrasing import bare
from groundwork.domain.enhancement.statements import Pool, Statement

# A description with fewer content words than this is vague: its draft is built as problem, cause, fix, impact.
VAGUE_WORDS = 25
_OPTION = re.compile(
    r"\b(?:either|alternatively|instead of|rather than|options?|trade-?offs?|however|whereas|advantages?"
    r"|drawbacks?|disadvantages?|faster|slower|simpler|cheaper|costs? (?:more|less)|at the cost of|prefer\w*)\b",
    re.I,
)


_SYMPTOM = re.compile(
    r"\b(?:fail\w*|error\w*|wrong|broken|breaks?|slow\w*|drift\w*|lost|missing|not (?:secure|backed up)|spam"
    r"|flag\w*|down|stops?|unavailable|leak\w*|problem\w*|does not|doesn't|cannot)\b",
    re.I,
)


def nothing(context: EnhancementContext, pool: Pool, wanted: tuple[str, ...], why: str) -> ActionOutput:
    """No draft (it would be invented or only restate the item): the digest says why."""
    return ActionOutput((), (digest(context, pool, [], wanted, why),))


def _about_itself(context: EnhancementContext, statement: Statement) -> bool:
    """A statement that names the item itself as its own dependency."""
    return context.work_item_key.lower() in statement.text.lower()


def requirements(context: EnhancementContext, pool: Pool) -> ActionOutput:
    """Behaviour and constraints the evidence states and the item does not."""
    wanted = ("requirement", "constraint")
    chosen = [s for s in pool.of(*wanted) if not s.is_command][:10]
    if not chosen:
        return nothing(context, pool, wanted, "no passage about the item states a requirement it lacks.")
    ordered = [s for s in chosen if s.kind == "requirement"] + [s for s in chosen if s.kind == "constraint"]
    parts, lines, number = [], [], 1
    for heading, kind in (("Behaviour", "requirement"), ("Constraints", "constraint")):
        group = [s for s in ordered if s.kind == kind]
        if group:
            rendered = []
            for statement in group:
                lines.append(Line(statement.text, (statement,)))
                rendered.append(f"- **R{number}.** {statement.text}")
                number += 1
            parts.append(f"### {heading}\n\n" + "\n".join(rendered))
    artifact = ArtifactProposal(
        "requirements_trace",
        f"Requirements trace for {context.work_item_key}",
        f"{len(lines)} requirement(s) the item does not state yet, each traced to the sentence it was taken from.",
        trace("requirement", "R", lines),
        tuple(r for line in lines for r in line.statement().evidence_refs),
    )
    return ActionOutput((draft(context, "\n\n".join(parts), lines),), (artifact, digest(context, pool, lines, wanted)))


def _pick(candidates: list[Statement], used: set[str], count: int) -> list[Statement]:
    chosen: list[Statement] = []
    for statement in candidates:
        if statement.text not in used and len(chosen) < count:
            used.add(statement.text)
            chosen.append(statement)
    return chosen


def description(context: EnhancementContext, pool: Pool) -> ActionOutput:
    """What the evidence adds to the item's description; for a vague item, problem, cause, fix and impact."""
    wanted = ("context", "requirement", "constraint", "decision", "dependency", "risk", "question")
    own_words = len(re.findall(r"\w+", str(context.fields.get("description") or "")))
    used: set[str] = set()
    commands = {s.text for s in pool.corpus if s.is_command}
    used |= commands
    if own_words < VAGUE_WORDS:
        used -= {s.text for s in pool.corpus if s.is_command and not s.text.startswith("`")}
        sections = [
            ("Problem", _pick([s for s in pool.of("risk", "context") if _SYMPTOM.search(s.text)], used, 2)),
            ("Cause", _pick(pool.with_facet("cause"), used, 2)),
            ("Fix", _pick(pool.with_facet("fix", "setting", "command") + pool.of("requirement"), used, 3)),
            ("Impact", _pick(pool.of("constraint", "risk") + pool.with_facet("limit"), used, 2)),
        ]
    else:
        sections = [
            ("Background", _pick(pool.of("context", "decision"), used, 4)),
            ("Constraints", _pick(pool.of("constraint"), used, 4)),
            ("Dependencies", _pick([s for s in pool.of("dependency") if not _about_itself(context, s)], used, 3)),
            ("Open questions", _pick(pool.of("question"), used, 3)),
        ]
    parts, lines = [], []
    for heading, group in sections:
        if group:
            lines += [Line(s.text, (s,)) for s in group]
            parts.append(f"## {heading}\n\n" + " ".join(s.text for s in group))
    if not lines:
        return nothing(context, pool, wanted, "no passage about the item adds to what its description says.")
    return ActionOutput((draft(context, "\n\n".join(parts), lines),), (digest(context, pool, lines, wanted),))


def design(context: EnhancementContext, pool: Pool) -> ActionOutput:
    """The decisions, options and trade-offs the evidence records, and what constrains them."""
    wanted = ("decision", "constraint", "dependency", "question")
    used: set[str] = {s.text for s in pool.corpus if s.is_command}
    decisions = _pick(pool.of("decision"), used, 5)
    options = _pick([s for s in pool.corpus if _OPTION.search(s.text) and s.kind != "question"], used, 4)
    constraints = _pick(pool.of("constraint"), used, 4)
    dependencies = _pick([s for s in pool.of("dependency") if not _about_itself(context, s)], used, 3)
    questions = _pick(pool.of("question"), used, 3)
    if not (decisions or options):
        return nothing(context, pool, wanted, "no passage about the item records a decision or an option to weigh.")
    parts, lines = [], []
    for heading, group in (
        ("Decisions on record", decisions),
        ("Options and trade-offs", options),
        ("Constraints the design must meet", constraints),
        ("Dependencies", dependencies),
        ("Open questions", questions),
    ):
        if group:
            lines += [Line(s.text, (s,)) for s in group]
            parts.append(f"## {heading}\n\n" + "\n".join(f"- {s.text}" for s in group))
    value = "\n\n".join(parts)
    summary = f"{len(decisions)} recorded decision(s), {len(options)} option(s) with trade-offs."
    if not decisions:
        summary += " No recorded decision covers this work item: the approach needs a decision by the team."
    note = ArtifactProposal(
        "design_note",
        f"Design note for {context.work_item_key}",
        summary,
        value,
        tuple(r for line in lines for r in line.statement().evidence_refs),
    )
    return ActionOutput((draft(context, value, lines),), (note, digest(context, pool, lines, wanted)))


def sentence(statement: Statement) -> str:
    """A statement as a sentence of running text."""
    return bare(statement.text) + "."
