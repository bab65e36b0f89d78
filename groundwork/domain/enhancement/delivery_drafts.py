"""The drafts that say how the work is done and checked: implementation plan, acceptance criteria, test plan.

Plan steps are actions on named components carrying the evidence's settings and commands (a command block
joins the step it belongs to; a prohibition is a rule, never a step). Acceptance criteria are Given/When/Then
for every requirement, with the failure and limit cases the evidence names; the test plan has one row per
criterion with its setup and action, the expected outcome and a test type, negative cases included.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from groundwork.domain.enhancement.classify import is_instruction
from groundwork.domain.enhancement.drafting import Line, cell, digest, draft, refs, trace
from groundwork.domain.enhancement.enhancer import EnhancementContext
from groundwork.domain.enhancement.model import ActionOutput, ArtifactProposal
from groundwork.domain.enhancement.phrasing import (
    Condition,
    bare,
    imperative,
    lower_first,
    observable,
    split_condition,
    split_consequence,
    standalone,
    upper_first,
)
from groundwork.domain.enhancement.relevance import stems
from groundwork.domain.enhancement.scope_drafts import nothing
from groundwork.domain.enhancement.sentences import is_code_unit
from groundwork.domain.enhancement.statements import Pool, Statement

# What is done with a component named by its kind ("the visudo command", "the quota package"): a criterion's When.
_EVENTS = {
    "command": "is run",
    "program": "is run",
    "package": "is installed",
    "service": "is started",
    "daemon": "is started",
    "file": "is edited",
    "job": "runs",
    "table": "is updated",
}
_KINDS = "|".join(_EVENTS)
_SYSTEM_PATH = r"/(?:etc|var|usr|srv|home|boot|dev|lib|opt|run)/[\w./-]*\w"
_COMPONENT = re.compile(
    rf"(?P<path>{_SYSTEM_PATH})|`(?P<code>[^`\s]{{2,40}})(?:\s[^`]*)?`"
    rf"|\bthe (?P<command>[\w.-]+) (?:{_KINDS})\b"
    r"|\b(?P<camel>[A-Z][a-z]+[A-Z][A-Za-z]+)\b"
)
_MAX_STEPS = 12
# "To find X, use Y" is an instruction behind its purpose.
_PURPOSE = re.compile(r"^to\s+[^,]{3,120},\s*(?:simply\s+|just\s+)?(?P<rest>.+)$", re.I)
# Whether a code block (`sentences.is_code_unit`) opens with a program and its arguments (a shell session) rather
# than a configuration line (`[global]`, `workgroup = X`, an fstab entry).
_PROGRAM = re.compile(r"`(?:\$\s+)?[a-z][\w.+-]*(?:\s+(?:-{1,2}\w|/[\w.]|[a-z][\w./:-]*(?:\s|`|$))|\s*(?:;|`))")
# A step that carries a setting or a command is what a plan most needs (issue 35): it outranks a step this much
# more relevant that carries neither.
CONCRETE_BONUS = 0.2
_PROHIBITION = re.compile(r"^(?:never|do not|don't)\b|\b(?:must|may|should) (?:never|not)\b", re.I)
_TEST_TYPES: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("performance", ("p99", "p95", "latency", "throughput", "per second", " load", " ms")),
    ("security", ("auth", "token", "secret", "permission", "encrypt", "pci", "signature", "password", "key")),
    ("migration", ("migrat", "backfill", "import", "upgrade", "export")),
    ("integration", ("api", "endpoint", "webhook", "vendor", "provider", "service", "server", "network")),
)
_KIND_EVENT = re.compile(rf"\bthe (?P<name>[\w.-]+) (?P<kind>{_KINDS})\b", re.IGNORECASE)
# "the linked file", "the following command", "the configuration file": a word that describes, not a name.
_DESCRIBES = re.compile(
    r"^(?:\w+(?:ed|ing)|same|new|old|main|first|last|other|whole|configuration|corresponding|previous|next|default"
    r"|appropriate|relevant|right|wrong|single|entire|original|above|below|log|data|text|init|installation|target|source)$",
    re.IGNORECASE,
)
# A code span naming a setting (`PRUNEDPATHS`, `key = value`), or a program with its arguments.
_SETTING = re.compile(r"^(?:[A-Z][A-Z0-9_]{2,}|[A-Za-z][\w.-]*\s*=\s*\S.*)$")
_COMMAND_LINE = re.compile(r"^[a-z][\w.+-]*\s+(?:-{1,2}\w|[a-z/~.][\w./:~-]*)")
_CODE_SPAN = re.compile(r"`([^`\n]{2,200})`")
_PATH = re.compile(rf"(?<![\w`]){_SYSTEM_PATH}")
# Section numbers a handbook puts before its headings ("9.3.1. Owners and Permissions", "B.5.4. Libraries").
_SECTION_NUMBER = re.compile(r"^(?:[A-Z]|\d+)(?:\.\d+)*\.\s+(?=\S)")
# A criterion's When where a statement names no event of its own.
_REVIEWED, _CHECKED, _IS_CHECKED = "the work is reviewed", "the work is checked", "it is checked"
_PLACEHOLDERS = frozenset({_REVIEWED, _CHECKED, _IS_CHECKED})
# A statement that yields a concrete When (its condition, its consequence, a component acted on) is what a
# criterion most needs: among the requirements it outranks one this much more relevant that yields none.
TESTABLE_BONUS = 0.2
_FAILURE = re.compile(
    r"\b(?:fail\w*|error|not (?:yet )?(?:published|available|reachable)|unavailable|timeout|refused|rejected"
    r"|exceed\w*|over (?:the|its) (?:limit|quota)|full|missing|invalid|lost|down)\b",
    re.I,
)


def component(text: str) -> str | None:
    """The component a statement acts on: a path, a command or code name, a named system."""
    found = _named(text)
    return found[1] if found else None


def _named(text: str) -> tuple[str, str] | None:
    """The first component a text names, with its kind (`path`, `code`, `command` or `camel`)."""
    for match in _COMPONENT.finditer(text):
        kind, found = next((k, v) for k, v in match.groupdict().items() if v)
        name = found.rstrip(":;,")  # `SSHException:` names `SSHException`
        if any(ch.isalnum() for ch in name):  # never an elision ("[...]") or punctuation
            return kind, name
    return None


def plan(context: EnhancementContext, pool: Pool) -> ActionOutput:
    """Numbered steps on named components, in the order the evidence gives them, with their commands."""
    wanted = ("requirement", "constraint", "dependency")
    found: list[list[Statement]] = []
    focus = pool.instructions.focus_words
    for statement in pool.corpus:  # evidence order: a procedure's steps stay in order
        bare_block = is_code_unit(statement.text.rstrip("."))
        if bare_block and found and found[-1][-1].ref == statement.ref:
            found[-1].append(statement)  # a code block belongs to the step before it ("Start it: `...`" is a step)
            continue
        actionable = statement.kind == "requirement" or statement.facet in ("fix", "setting", "command")
        # A command is a step even where its sentence reads as a risk ("remove the failed disk: `mdadm ...`").
        plain = statement.kind not in ("risk", "question") or statement.is_command
        if actionable and not _PROHIBITION.search(statement.text) and plain:
            found.append([statement])
    # The most relevant steps (focus first), told in the evidence's order: a procedure's steps stay in order.
    ranked = sorted(
        range(len(found)),
        key=lambda i: (0 if any(s.words & focus for s in found[i]) else 1, -_step_weight(found[i]), i),
    )
    chosen = sorted(ranked[:_MAX_STEPS], key=lambda i: (0 if any(s.words & focus for s in found[i]) else 1, i))
    found = [found[i] for i in chosen]
    steps = [(_joined(_step(group[0]), group), group) for group in found]
    if not steps:
        return nothing(context, pool, wanted, "no passage about the item states a step, a setting or a command.")
    groups: dict[str, list[tuple[str, list[Statement]]]] = {}
    for text, sources in steps:
        groups.setdefault(component(" ".join(s.text for s in sources)) or "", []).append((text, sources))
    lines_out, lines, number = [], [], 1
    for name in [n for n in groups if n] + ([""] if "" in groups else []):
        lines_out.append(f"### {f'`{name}`' if name else 'Other steps'}\n")
        for text, sources in groups[name]:
            lines.append(Line(text, tuple(sources)))
            lines_out.append(f"{number}. {text}")
            number += 1
        lines_out.append("")
    value = "\n".join(lines_out).strip()
    code_note = (
        f"Code context was unavailable: {context.code_context_unavailable_reason} The plan is built from the "
        "work item and project documents only; no code was read and none is written."
        if context.code_context_unavailable_reason
        else "Code context was read through the authorized connector."
    )
    outline = ArtifactProposal(
        "plan_outline",
        f"Implementation plan outline for {context.work_item_key}",
        f"{number - 1} steps on {len(groups)} component group(s), in the order the evidence gives them. {code_note}",
        value + "\n\n> " + code_note,
        refs([s for line in lines for s in line.sources]),
    )
    return ActionOutput((draft(context, value, lines),), (outline, digest(context, pool, lines, wanted)))


def _step_weight(group: list[Statement]) -> float:
    """How much a step is worth to the plan: its relevance, and more when it carries a setting or a command."""
    concrete = any(s.facet in ("setting", "command") or s.is_command for s in group)
    return max(s.relevance for s in group) + (CONCRETE_BONUS if concrete else 0.0)


def _step(statement: Statement) -> str:
    """A statement as an action: an instruction as written, a code block run or written, and a description of
    how a component works as an action on that component, the description kept as its reason."""
    text = statement.text.rstrip(".")
    if is_code_unit(text):  # a code block: a shell session is run, a configuration is written
        return f"{'Run' if _PROGRAM.match(text) else 'Write the configuration'} {text}."
    text = standalone(text)
    purpose = _PURPOSE.match(text)
    if purpose and is_instruction(purpose.group("rest")):  # "To find X, use the Y command."
        return upper_first(text) + "."
    step = imperative(text)
    named = _named(text)
    if not step.startswith("Make sure ") or named is None:
        return step + "."
    kind, name = named
    verb = "Configure" if kind == "path" else "Use"
    return f"{verb} `{name}`: {lower_first(text)}."


def _joined(step: str, sources: list[Statement]) -> str:
    commands = [s.text.rstrip(".") for s in sources[1:]]
    return step.rstrip(".:") + (": " + "; ".join(commands) if commands else "") + "."


@dataclass(frozen=True)
class Criterion:
    """One acceptance criterion: its Given, When and Then, and whether it is a failure or limit case."""

    given: str
    when: str
    then: str
    failure: bool
    source: Statement

    def markdown(self) -> str:
        """`- **Given** ... **When** ... **Then** ...` on three lines."""
        return f"- **Given** {self.given}\n  **When** {self.when}\n  **Then** {self.then}"

    def text(self) -> str:
        """The criterion as one plain line."""
        return f"Given {self.given}, when {self.when}, then {self.then}."


def _context_of(context: EnhancementContext, statement: Statement) -> str:
    where = _SECTION_NUMBER.sub("", (statement.section or "").rsplit(">", 1)[-1].strip().replace("_", " "))
    if statement.own or not where:
        return f"the work of “{bare(context.title)}” is in place"
    return f"the case “{bare(where)}”"


def event(text: str) -> str | None:
    """What is done to see a statement hold, from the component it acts on: a program is run, a path is
    configured, a setting is set, a package is installed; None when it names none (an identifier or a product
    name says what is involved, not what is done)."""
    by_kind = next((m for m in _KIND_EVENT.finditer(text) if not _DESCRIBES.search(m.group("name"))), None)
    if by_kind:
        return f"`{by_kind.group('name')}` {_EVENTS[by_kind.group('kind').lower()]}"
    path = _PATH.search(text)
    if path:
        return f"`{path.group(0)}` is configured"
    for span in _CODE_SPAN.findall(text):
        span = span.strip().removeprefix("$ ").strip()
        if span.startswith(("/", "~/")):
            return f"`{span.split()[0]}` is configured"
        if _SETTING.match(span):
            return f"`{span}` is set"
        if _COMMAND_LINE.match(span):
            return f"`{span if len(span) <= 60 else span.split()[0]}` is run"
    return None


def _when_of(condition: Condition) -> str:
    """A condition as a criterion's When: "until X" holds before X, "unless X" where X does not."""
    clause = lower_first(condition.clause)
    word = condition.word.lower()
    if word == "until":  # "Until the retry change ships, rerun it by hand": not once it has shipped
        return f"it is checked before {clause}"
    if word == "unless":
        return f"it is not the case that {clause}"
    return clause


def _rule(text: str) -> str:
    """The rule of a sentence without its justification ("Never edit X by hand: Finance audits ...")."""
    head, colon, _ = text.partition(": ")
    return head if colon and (is_instruction(head) or _PROHIBITION.match(head)) else text


def criterion(context: EnhancementContext, statement: Statement) -> Criterion:
    """Given/When/Then from a statement: its own condition when it has one, else its context and what to observe."""
    failure = bool(_FAILURE.search(statement.text)) or statement.kind == "risk" or statement.facet == "limit"
    text = _rule(statement.text)
    if (is_instruction(text) or _PROHIBITION.match(text)) and not split_condition(text):
        facts = observable(text)
        when = event(text) or _REVIEWED
        return Criterion(_context_of(context, statement), when, " and ".join(facts), failure, statement)
    condition = split_condition(text)
    if condition is not None:
        outcome = condition.outcome
        then = lower_first(bare(outcome)) if is_instruction(outcome) else observable(outcome)[0]
        if is_instruction(outcome):
            then = f"the operator is told to {lower_first(bare(outcome))}"
        if condition.is_state:
            when = event(outcome) or _CHECKED
            return Criterion(lower_first(condition.clause), when, then, failure, statement)
        return Criterion(_context_of(context, statement), _when_of(condition), then, failure, statement)
    consequence = split_consequence(text)
    if consequence is not None:
        happens, follows = consequence
        when = lower_first(observable(happens)[0])  # "the export must be encrypted" happens as "is encrypted"
        return Criterion(_context_of(context, statement), when, observable(follows)[0], failure, statement)
    when = event(text) or _IS_CHECKED
    return Criterion(_context_of(context, statement), when, " and ".join(observable(text)), failure, statement)


def criteria(context: EnhancementContext, pool: Pool) -> list[Criterion]:
    """A criterion for each requirement the evidence or an item without criteria states, then its failure cases."""
    own = not str(context.fields.get("acceptance_criteria") or "").strip()  # absent, null or blank
    title = stems(context.title)
    candidates = [
        criterion(context, s)
        for s in pool.of("requirement", "constraint", own=own)
        if not s.is_command and not (s.own and len(s.words - title) < 2)  # never the title again
    ]
    focus = pool.instructions.focus_words
    best = sorted(  # focus first, the item's own next, then the most relevant, testable ones (a When) lifted
        candidates,
        key=lambda c: (
            0 if c.source.words & focus else 1,
            0 if c.source.own else 1,
            -(c.source.relevance + (0.0 if c.when in _PLACEHOLDERS else TESTABLE_BONUS)),
        ),
    )[:8]
    chosen = [c.source for c in best]
    failures = [
        s
        for s in pool.corpus
        if s not in chosen and split_condition(s.text) is not None and _FAILURE.search(s.text) and not s.is_command
    ][:3]
    return best + [criterion(context, s) for s in failures]


def acceptance(context: EnhancementContext, pool: Pool) -> ActionOutput:
    """Given/When/Then for every requirement, failure and limit cases included."""
    wanted = ("requirement", "constraint")
    found = criteria(context, pool)
    if not found:
        return nothing(context, pool, wanted, "no requirement to check was found in the item or in passages about it.")
    failures = sum(c.failure for c in found)
    artifact = ArtifactProposal(
        "requirements_trace",
        f"Acceptance criteria trace for {context.work_item_key}",
        f"{len(found)} criteria in Given/When/Then, {failures} of them a failure or limit case.",
        trace("criterion", "AC", [Line(c.text(), (c.source,)) for c in found]),
        refs([c.source for c in found]),
    )
    value = "\n".join(c.markdown() for c in found)
    traced = [Line(c.text(), (c.source,)) for c in found]
    return ActionOutput((draft(context, value, traced),), (artifact, digest(context, pool, traced, wanted)))


def _test_type(criterion: Criterion) -> str:
    if criterion.failure:
        return "negative"
    lowered = f" {criterion.source.text.lower()} "
    for name, keys in _TEST_TYPES:
        if any(k in lowered for k in keys):
            return name
    return "functional"


def test_plan(context: EnhancementContext, pool: Pool) -> ActionOutput:
    """One row per criterion: the scenario (setup and action), the expected outcome and the test type."""
    wanted = ("requirement", "constraint")
    found = criteria(context, pool)
    if not found:
        return nothing(context, pool, wanted, "no requirement to test was found in the item or in passages about it.")
    rows = [
        f"| T{i} | {cell(upper_first(c.given))}; {cell(c.when)} | {cell(upper_first(c.then))} | {_test_type(c)} |"
        for i, c in enumerate(found, 1)
    ]
    value = "| # | scenario (setup and action) | expected | test type |\n|---|---|---|---|\n" + "\n".join(rows)
    lines = [Line(c.text(), (c.source,)) for c in found]
    kinds = sorted({_test_type(c) for c in found})
    matrix = ArtifactProposal(
        "test_matrix",
        f"Test matrix for {context.work_item_key}",
        f"{len(rows)} test(s) across {', '.join(kinds)}.",
        value,
        refs([c.source for c in found]),
    )
    return ActionOutput((draft(context, value, lines),), (matrix, digest(context, pool, lines, wanted)))
