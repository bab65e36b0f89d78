"""The embedded draft generator: deterministic and extractive.

It never invents a statement. Every line of a draft is a sentence taken from the work item or from
an evidence passage, reworded only grammatically (an instruction, an observable fact, a table cell),
and it carries the reference of where it came from. Each sentence is classified once (requirement,
constraint, risk, decision, dependency, context, question: `classify.py`) and each field draws only
from its own classes, so requirements never list risks and risks never list requirements.
Same context in, same drafts out.
"""

from __future__ import annotations

import functools
import re
import statistics
from collections.abc import Callable
from dataclasses import dataclass

from groundwork.domain.enhancement.classify import IMPERATIVE_VERBS, classify
from groundwork.domain.enhancement.enhancer import EnhancementContext, Evidence, ReferenceItem
from groundwork.domain.enhancement.model import (
    ACTION_FIELDS,
    ActionOutput,
    ArtifactProposal,
    DraftProposal,
    EvidenceRef,
)
from groundwork.domain.enhancement.phrasing import (
    bare,
    imperative,
    instruction_clauses,
    is_labelled,
    lower_first,
    observable,
    split_condition,
    upper_first,
)

_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9\"'(`])")
_BULLET = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+")
_HEADING = re.compile(r"^\s*#{1,6}\s+")
_WORD = re.compile(r"[a-z0-9][a-z0-9_\-/.]*[a-z0-9]|[a-z0-9]")
_FINITE = re.compile(r"\b(?:is|are|was|were|be|been|has|have|had|must|should|can|will|may|do|does|did)\b", re.I)
_STOPWORDS = frozenset(
    "the a an and or but of to in on for with from by at as is are be been being this that these those it its "
    "we our you your they their them will would should could can may might must shall into onto over under "
    "than then so such not no yes also any all each per via about after before when where which who whom what "
    "have has had do does did done more most less least very just only some same other new use used using "
    "there here out up down off again further once both few own too until while during".split()
)

# Each risk area and the words that name it (whole words: "load" must not match "loads it into").
RISK_CATEGORIES: dict[str, re.Pattern[str]] = {
    name: re.compile(r"\b(?:" + words + r")\b", re.IGNORECASE)
    for name, words in {
        "security": r"security|auth\w*|tokens?|tokeni[sz]\w*|credentials?|secrets?|passwords?|pci|encrypt\w*|tls"
        r"|certificates?|gdpr|pii|personal data|permissions?|vault|hmac|oauth|sso|leak\w*|breach\w*|signature",
        "data migration": r"migrat\w*|backfill\w*|schema changes?|legacy|cutover|data loss|re-?import\w*"
        r"|historic(?:al)? data|export\w*|identifiers? (?:were )?reused|vehicle ids",
        "performance": r"p9\d|p50|latency|throughput|per second|under load|load[- ]tests?|load[- ]tested|slow\w*"
        r"|timeouts?|timed out|lcp|capacity|\d+\s?ms|speed|behaves at",
        "dependency": r"vendors?|third[- ]party|contracts?|contracted|suppliers?|psp|twilio|licen[cs]\w*|upstream"
        r"|external (?:api|service|system)s?|firmware|renewals?|partners?|procurement|agency",
        "scope": r"also asked|additionally|nice to have|phase 2|add-ons?|on top of|statement of work|scope",
    }.items()
}
_RISK_AREAS = (*RISK_CATEGORIES, "delivery")
_TEST_TYPES: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("performance", ("p99", "p95", "p50", "latency", "throughput", "per second", "load", " ms", "seconds")),
    ("migration", ("migrat", "backfill", "import", "legacy", "export")),
    ("security", ("auth", "token", "secret", "permission", "encrypt", "pci", "signature", "gdpr", " pan")),
    ("integration", ("api", "endpoint", "webhook", "vendor", "provider", "service", "queue", "event", "broker")),
    ("end-to-end", ("user", "customer", "driver", "screen", "page", "checkout", "email", "shopper")),
)
# Named components: paths and `code`, CamelCase systems (PayHub), acronyms (PSP, MQTT), "<x> service" nouns.
_COMPONENT = re.compile(
    r"`(?P<code>[^`]{2,60})`|\b(?P<camel>[A-Z][a-z]+[A-Z][A-Za-z]+)\b|\b(?P<acronym>[A-Z]{3,}[0-9]?)\b"
    r"|\b(?P<noun>(?!(?:a|an|the|this|that|each|every|one|our|their|its)\b)[a-z][\w-]* (?:service|api|job|table|topic"
    r"|broker|endpoint|importer|planner|consumer|board|app"
    r"|vault|schema|queue|portal|report|dashboard))\b"
    r"|\bthe (?P<bare>planner|importer|consumer|broker|exporter|loader|scheduler|gateway|till|driver app"
    r"|order service)\b"
)
_GENERIC_ACRONYMS = frozenset(
    "API URL SDK CSV JSON HTTP HTTPS UI UX ETA SLA PDF WARN ERROR INFO DSS PCI GDPR QSA CVV UTC USD GBP EUR REST TBD "
    "FAQ IDS OK AND THE NOT PGP TLS SSL OIDC PAN PANS CVV WCAG LCP KPI".split()
)
# Which layer a step works in, so that what others build on comes first.
_LAYERS: tuple[tuple[int, re.Pattern[str]], ...] = (
    (
        1,
        re.compile(r"schema|table|column|migrat|backfill|export|import|storage|database|parquet|partition|vault", re.I),
    ),
    (2, re.compile(r"\bapi\b|endpoint|service|webhook|broker|consumer|queue|topic|\bjob\b|worker|`(?:post|get)", re.I)),
    (
        3,
        re.compile(r"\bapp\b|browser|\bpage\b|button|screen|board|sheet|e-?mail|\bsms\b|checkout|\bmap\b|portal", re.I),
    ),
    (4, re.compile(r"dashboard|grafana|alert|monitor|metric|log scan|panel", re.I)),
)
_FIBONACCI = (1, 2, 3, 5, 8, 13, 21)
# Document furniture that is not a statement: attendee lists, owners, message templates with placeholders.
_NOISE = re.compile(
    r"^(?:present|attendees|owner|pager|epic|status|prepared by)\b|\{[a-z_]+\}|^actions?\s*:"
    r"|^(?!(?:hard|soft|decisions?|agreed|risks?|constraints?|requirements?|questions?)\b)[A-Z][a-z]+:\s+[a-z]+\b",
    re.I,
)
_INTEGRATION_WORDS = ("api", "endpoint", "webhook", "vendor", "provider", "service", "queue", "event", "broker")


@dataclass(frozen=True)
class Statement:
    """A sentence, where it came from, and what kind of statement it is."""

    text: str
    ref: EvidenceRef
    label: str
    kind: str
    section: str | None = None

    @property
    def cite(self) -> str:
        return f"[{self.ref.kind}:{self.ref.id}]"


def _heading_like(sentence: str, leads_more: bool) -> bool:
    """A short title-like line inside running text: "Approach." opening a paragraph, or an unpunctuated line."""
    words = bare(sentence).split()
    return (
        (len(words) <= 2 if leads_more else sentence.rstrip()[-1:] not in ".!?:")
        and 0 < len(words) <= 4
        and words[0][:1].isupper()
        and words[0].lower() not in IMPERATIVE_VERBS
        and not _FINITE.search(sentence)
        and not any(ch.isdigit() for ch in sentence)
        and ":" not in sentence
    )


def sectioned_sentences(text: str, section: str | None = None) -> list[tuple[str, str | None]]:
    """Markdown text as clean sentences, each with the heading it sits under (headings themselves are not sentences)."""
    return list(_sectioned_sentences(text, section))


# The actions of a run read the same evidence: split it once per process (a pure function of its text).
@functools.lru_cache(maxsize=4096)
def _sectioned_sentences(text: str, section: str | None) -> tuple[tuple[str, str | None], ...]:
    units: list[tuple[str, str | None]] = []
    current = section
    open_unit = False
    for raw_line in text.splitlines():
        stripped = raw_line.strip()
        if _HEADING.match(raw_line):
            heading = _HEADING.sub("", raw_line).strip().strip("#").strip()
            current = f"{section} > {heading}" if section else heading
            open_unit = False
            continue
        line = _BULLET.sub("", raw_line).strip()
        if not line or line.startswith("|"):
            open_unit = False  # a blank line or a table row ends the paragraph
        elif open_unit and not _BULLET.match(raw_line) and stripped:
            units[-1] = (units[-1][0] + " " + line, units[-1][1])  # a wrapped line continues its paragraph
        else:
            units.append((line, current))
            open_unit = True
    result: list[tuple[str, str | None]] = []
    carried: tuple[str | None, str | None] = (None, None)  # (under which Markdown section, the inline heading)
    for unit, unit_section in units:
        inline = carried[1] if carried[0] == unit_section and carried[1] else unit_section
        parts = _SENTENCE_END.split(unit)
        if len(parts) == 1 and _heading_like(parts[0].strip(), False):  # a heading line alone (e.g. from a PDF)
            heading = bare(parts[0])
            carried = (unit_section, f"{section} > {heading}" if section else heading)
            continue
        for index, part in enumerate(parts):
            part = part.strip().strip("*_").strip()
            if part and _heading_like(part, index == 0 and len(parts) > 1):  # e.g. a PDF's "Approach. Data is ..."
                heading = bare(part)
                inline = f"{section} > {heading}" if section else heading
                continue
            if len(part) >= 12:
                result.append((part if part[-1] in ".!?:" else part + ".", inline))
    return tuple(result)


def sentences(text: str) -> list[str]:
    """Split Markdown text into clean sentences: wrapped lines rejoined, bullets and headings unwrapped."""
    return [sentence for sentence, _ in sectioned_sentences(text)]


def terms(text: str) -> frozenset[str]:
    """Content words of a text as crude stems: lowercase, no stopwords, the first 4 characters.

    Four characters are enough to match "route"/"routing" or "push"/"pushes" without a language model;
    relevance still needs two shared stems (or a constraint or risk sharing one), so the crudeness rarely misleads.
    """
    return _terms(text)


@functools.lru_cache(maxsize=65536)
def _terms(text: str) -> frozenset[str]:
    return frozenset(w[:4] for w in _WORD.findall(text.lower()) if len(w) >= 4 and w not in _STOPWORDS)


@dataclass(frozen=True)
class Steering:
    """What the caller's instructions ask for: terms to put first and terms to leave out."""

    focus: frozenset[str]
    exclude: tuple[str, ...]

    @classmethod
    def parse(cls, instructions: str) -> Steering:
        focus: set[str] = set()
        exclude: list[str] = []
        for match in re.finditer(r"(?:focus(?: on)?|emphasi[sz]e|prioriti[sz]e)\s*:?\s*([^.;\n]+)", instructions, re.I):
            focus |= terms(match.group(1))
        pattern = r"(?:exclude|ignore|without|skip|leave out|do not mention|don't mention)\s*:?\s*([^.;\n]+)"
        for match in re.finditer(pattern, instructions, re.I):
            exclude += [p.strip().lower() for p in re.split(r",|\band\b|\bor\b", match.group(1)) if p.strip()]
        return cls(frozenset(focus), tuple(exclude))

    def allows(self, text: str) -> bool:
        lowered = text.lower()
        return not any(term in lowered for term in self.exclude)

    def rank(self, statements: list[Statement]) -> list[Statement]:
        """Focus matches first, otherwise the original (deterministic) order."""
        if not self.focus:
            return statements
        return sorted(statements, key=lambda s: 0 if terms(s.text) & self.focus else 1)


@dataclass(frozen=True)
class Pool:
    """The classified statements of one action: the work item's own, then the relevant corpus ones."""

    own: tuple[Statement, ...]
    corpus: tuple[Statement, ...]
    steering: Steering

    def of(self, *kinds: str) -> list[Statement]:
        """Statements of these classes, the work item's first, focus matches ahead."""
        return self.steering.rank([s for s in self.own + self.corpus if s.kind in kinds])

    @property
    def empty(self) -> bool:
        return not self.own and not self.corpus


class ExtractiveEnhancer:
    """The deterministic, evidence-grounded default `Enhancer`."""

    name = "extractive-v2"
    in_process = True

    async def enhance(self, context: EnhancementContext) -> ActionOutput:
        """Produce the drafts and artifacts of one action from the work item and its evidence."""
        return generate(context)


def generate(context: EnhancementContext) -> ActionOutput:
    """The pure function behind `ExtractiveEnhancer` (sync, for tests and benchmarks)."""
    return _BUILDERS[context.action](context, statement_pool(context))


def statement_pool(context: EnhancementContext) -> Pool:
    """The work item's own sentences and the evidence sentences relevant to it, each classified once."""
    description = str(context.fields.get("description") or "")
    return _pool(context.instructions, context.title, description, context.evidence)


# The actions of a run share their inputs: its eight actions classify its evidence once, not eight times.
@functools.lru_cache(maxsize=32)
def _pool(instructions: str, title_text: str, description: str, shown: tuple[Evidence, ...]) -> Pool:
    steering = Steering.parse(instructions)
    own: list[Statement] = []
    corpus: list[Statement] = []
    title = terms(title_text)
    anchor = title | terms(description)
    seen: set[str] = set()
    for evidence in shown:
        for text, section in sectioned_sentences(evidence.text, evidence.section):
            key = text.lower()
            if key in seen or not steering.allows(text) or _NOISE.search(text):
                continue
            statement = Statement(text, evidence.ref, evidence.label, classify(text, section), section)
            found = terms(text)
            shared, on_title = len(found & anchor), len(found & title)
            if evidence.ref.kind == "work_item":
                seen.add(key)
                own.append(statement)
            # A passage sentence counts when it is about this item: its title, or much of its description.
            elif shared >= 3 or (on_title and (shared >= 2 or statement.kind in ("constraint", "risk"))):
                seen.add(key)
                corpus.append(statement)
    return Pool(tuple(steering.rank(own)), tuple(steering.rank(corpus)), steering)


def _refs(statements: list[Statement]) -> tuple[EvidenceRef, ...]:
    ordered: dict[EvidenceRef, None] = {}
    for statement in statements:
        ordered.setdefault(statement.ref, None)
    return tuple(ordered)


def _bullets(statements: list[Statement]) -> str:
    """One Markdown bullet per statement, each with its citation."""
    return "\n".join(f"- {s.text} {s.cite}" for s in statements)


def _trace(column: str, prefix: str, statements: list[Statement]) -> str:
    """A table tracing each numbered item (R1, AC1...) to the source and class it was taken from."""
    rows = "\n".join(
        f"| {prefix}{i} | {s.kind} | {s.label} | `{s.ref.kind}:{s.ref.id}` |" for i, s in enumerate(statements, 1)
    )
    return f"| {column} | class | source | evidence |\n|---|---|---|---|\n{rows}"


def _confidence(used: list[Statement], bonus: float = 0.0) -> float:
    """More independent supporting evidence, more confidence; the work item alone is weak support."""
    corpus_refs = {s.ref for s in used if s.ref.kind != "work_item"}
    own = any(s.ref.kind == "work_item" for s in used)
    if not used:
        return 0.1
    return round(min(0.95, (0.3 if own else 0.15) + 0.15 * len(corpus_refs) + bonus), 2)


def _classes(used: list[Statement]) -> str:
    counts: dict[str, int] = {}
    for statement in used:
        counts[statement.kind] = counts.get(statement.kind, 0) + 1
    return ", ".join(f"{kind} {n}" for kind, n in counts.items())


def _digest(context: EnhancementContext, used: list[Statement], wanted: tuple[str, ...]) -> ArtifactProposal:
    """The evidence digest every action produces: what was used (and of which class), or that nothing supported it."""
    field = ACTION_FIELDS[context.action]
    corpus = [s for s in used if s.ref.kind != "work_item"]
    if not used:
        summary = (
            f"No evidence of the kind a {field} draft draws on ({', '.join(wanted)}) was found for "
            f"{context.work_item_key}; nothing was invented."
        )
        body = (
            f"Neither the work item nor any visible corpus passage holds a {' or '.join(wanted)} statement for "
            f"`{field}`. Add detail to the work item or ingest the relevant documents, then run the action again."
        )
    elif not corpus:
        summary = (
            f"The {field} draft rests on the work item text alone ({_classes(used)}): no corpus passage supported it, "
            "so confidence is low."
        )
        body = "\n".join(f"- ({s.kind}) {s.text} {s.cite}" for s in used)
    else:
        sources = sorted({s.label for s in corpus})
        summary = (
            f"{len(used)} statements ({_classes(used)}) from the work item and {len(sources)} corpus source(s) "
            f"support the {field} draft."
        )
        body = "\n".join(f"- ({s.kind}) {s.text} — _{s.label}_ {s.cite}" for s in used)
    return ArtifactProposal("evidence_digest", f"Evidence for {field}", summary, body, _refs(used))


def _nothing(context: EnhancementContext, wanted: tuple[str, ...]) -> ActionOutput:
    """No material of the field's classes: no draft (it would be invented), only the digest saying so."""
    return ActionOutput(drafts=(), artifacts=(_digest(context, [], wanted),))


def _draft(context: EnhancementContext, value: object, used: list[Statement], bonus: float = 0.0) -> DraftProposal:
    return DraftProposal(ACTION_FIELDS[context.action], value, _confidence(used, bonus), _refs(used))


def _requirements(context: EnhancementContext, pool: Pool) -> ActionOutput:
    wanted = ("requirement", "constraint")
    chosen = pool.of(*wanted)[:12]
    if not chosen:
        return _nothing(context, wanted)
    numbered = [s for s in chosen if s.kind == "requirement"] + [s for s in chosen if s.kind == "constraint"]
    parts = []
    index = 1
    for heading, kind in (("Behaviour", "requirement"), ("Constraints", "constraint")):
        group = [s for s in numbered if s.kind == kind]
        if group:
            lines = [f"- **R{index + i}.** {s.text} {s.cite}" for i, s in enumerate(group)]
            parts.append(f"### {heading}\n\n" + "\n".join(lines))
            index += len(group)
    artifact = ArtifactProposal(
        "requirements_trace",
        f"Requirements trace for {context.work_item_key}",
        f"{len(numbered)} requirement(s), each traced to the sentence and the class it was taken from.",
        _trace("requirement", "R", numbered),
        _refs(numbered),
    )
    return ActionOutput(
        (_draft(context, "\n\n".join(parts), numbered),), (artifact, _digest(context, numbered, wanted))
    )


def _description(context: EnhancementContext, pool: Pool) -> ActionOutput:
    wanted = ("context", "requirement", "constraint", "decision", "dependency", "question")
    if not pool.of(*wanted):
        return _nothing(context, wanted)
    summary = [s for s in pool.own if s.kind == "context"][:3]
    scope = pool.of("requirement")[:5]
    limits = pool.of("constraint")[:5]
    background = [s for s in pool.corpus if s.kind in ("context", "decision")][:4]
    dependencies = pool.of("dependency")[:3]
    questions = pool.of("question")[:3]
    cite = f"[work_item:{context.work_item_id}]"
    opening = f"{context.title.rstrip('.')}. {cite}"
    if summary:
        opening += " " + " ".join(f"{s.text} {s.cite}" for s in summary)
    parts = [f"## Summary\n\n{opening}"]
    for heading, group in (
        ("Scope", scope),
        ("Constraints", limits),
        ("Background", background),
        ("Dependencies", dependencies),
        ("Open questions", questions),
    ):
        if group:
            parts.append(f"## {heading}\n\n" + _bullets(group))
    used = summary + scope + limits + background + dependencies + questions
    return ActionOutput((_draft(context, "\n\n".join(parts), used),), (_digest(context, used, wanted),))


def _components(text: str) -> list[str]:
    """The components a statement names (systems, interfaces, tables), in order."""
    names = []
    for match in _COMPONENT.finditer(text):
        if match.group("code"):
            code = match.group("code").strip()
            # Interfaces and tables are components; fields (`customer_id`, `token_ref`) are not.
            if re.search(r"/|^(?:POST|GET|PUT|PATCH|DELETE) ", code) or (
                "_" in code and not re.search(r"_(?:id|ref|at|key|minor|code)$", code) and " " not in code
            ):
                names.append(code)
        elif match.group("camel"):
            names.append(match.group("camel"))
        elif match.group("acronym") and match.group("acronym") not in _GENERIC_ACRONYMS:
            names.append(match.group("acronym"))
        elif match.group("noun"):
            names.append(match.group("noun"))
        elif match.group("bare"):
            names.append(match.group("bare"))
    return names


def _named_components(context: EnhancementContext, pool: Pool) -> Callable[[str], str | None]:
    """The component a statement is about: one the work item itself names, or one several statements name."""
    counts: dict[str, int] = {}
    for statement in pool.own + pool.corpus:
        for name in set(_components(statement.text)):
            counts[name] = counts.get(name, 0) + 1
    own_text = context.title + " " + " ".join(s.text for s in pool.own)
    known = {name for name, n in counts.items() if n >= 2 or name in own_text}

    def component(text: str) -> str | None:
        return next((name for name in _components(text) if name in known), None)

    return component


def _layer(text: str) -> int:
    for layer, pattern in _LAYERS:
        if pattern.search(text):
            return layer
    return 2


def _design(context: EnhancementContext, pool: Pool) -> ActionOutput:
    wanted = ("decision", "constraint", "dependency", "question")
    decisions = pool.of("decision")[:6]
    constraints = pool.of("constraint")[:6]
    dependencies = pool.of("dependency")[:4]
    questions = pool.of("question")[:4]
    named: dict[str, Statement] = {}
    component = _named_components(context, pool)
    for statement in pool.of("requirement", "constraint", "decision", "dependency"):
        name = component(statement.text)
        if name and name.lower() not in {n.lower() for n in named}:
            named[name] = statement
    if not (decisions or constraints or dependencies or questions):
        return _nothing(context, wanted)
    parts = []
    if named:
        parts.append(
            "## Components and interfaces named in the evidence\n\n"
            + "\n".join(f"- `{name}` — named in {s.label} {s.cite}" for name, s in list(named.items())[:10])
        )
    for heading, group in (
        ("Decisions on record", decisions),
        ("Constraints the design must meet", constraints),
        ("Dependencies", dependencies),
        ("Open questions", questions),
    ):
        if group:
            parts.append(f"## {heading}\n\n" + _bullets(group))
    used = decisions + constraints + dependencies + questions + [s for s in named.values() if s not in decisions]
    value = "\n\n".join(parts)
    summary = f"{len(decisions)} recorded decision(s), {len(constraints)} constraint(s), {len(dependencies)} dependenc"
    summary += "y." if len(dependencies) == 1 else "ies."
    if not decisions:
        summary += " No recorded decision covers this work item: the approach needs a decision by the team."
    note = ArtifactProposal("design_note", f"Design note for {context.work_item_key}", summary, value, _refs(used))
    return ActionOutput((_draft(context, value, used),), (note, _digest(context, used, wanted)))


def _plan(context: EnhancementContext, pool: Pool) -> ActionOutput:
    wanted = ("requirement", "constraint", "dependency")
    work = pool.of("requirement", "constraint")[:10]
    if not work:
        return _nothing(context, wanted)
    prerequisites = pool.of("dependency")[:4]
    groups: dict[str, list[Statement]] = {}
    component = _named_components(context, pool)
    for statement in work:
        groups.setdefault(component(statement.text) or "", []).append(statement)
    # A component named by one step only, and not in the title, is no grouping: it joins the common steps.
    for name in [n for n, steps in groups.items() if n and len(steps) == 1 and n not in context.title]:
        groups.setdefault("", []).extend(groups.pop(name))
    if "" in groups:
        groups[""].sort(key=work.index)
    order = sorted(groups, key=lambda name: (min(_layer(s.text) for s in groups[name]), work.index(groups[name][0])))
    sections: list[tuple[str, list[str]]] = []
    if prerequisites:
        steps = [f"Settle what this work depends on: {lower_first(bare(s.text))}. {s.cite}" for s in prerequisites]
        sections.append(("Before building", steps))
    for name in order:
        steps = [f"{imperative(s.text)}. {s.cite}" for s in groups[name]]
        sections.append((f"`{name}`" if name else "Across the work item", steps))
    lines = []
    number = 1
    for heading, steps in sections:
        lines.append(f"### {heading}\n")
        for step in steps:
            lines.append(f"{number}. {step}")
            number += 1
        lines.append("")
    value = "\n".join(lines).strip()
    code_note = (
        f"Code context was unavailable: {context.code_context_unavailable_reason} The plan is built from the "
        "work item and project documents only; no code was read and none is written."
        if context.code_context_unavailable_reason
        else "Code context was read through the authorized connector."
    )
    used = prerequisites + work
    outline = ArtifactProposal(
        "plan_outline",
        f"Implementation plan outline for {context.work_item_key}",
        f"{number - 1} steps in {len(sections)} group(s), dependencies first, then by the layer each component "
        f"works in (data, services, clients, operations). {code_note}",
        value + "\n\n> " + code_note,
        _refs(used),
    )
    return ActionOutput((_draft(context, value, used),), (outline, _digest(context, used, wanted)))


@dataclass(frozen=True)
class _Criterion:
    scenario: str | None  # "**Given** ..." / "**When** ...", None when the requirement states no condition
    facts: list[str]
    statement: Statement


def _criteria(statement: Statement) -> list[_Criterion]:
    """Given/When/Then from a requirement's own condition and outcome; else what must be observed."""
    result = []
    for clause in instruction_clauses(statement.text):
        condition = split_condition(clause)
        if condition is not None:
            keyword = "Given" if condition.is_state else "When"
            scenario = f"**{keyword}** {lower_first(condition.clause)}"
            result.append(_Criterion(scenario, observable(condition.outcome), statement))
        else:
            result.append(_Criterion(None, observable(clause), statement))
    return result


def _acceptance(context: EnhancementContext, pool: Pool) -> ActionOutput:
    wanted = ("requirement", "constraint")
    chosen = pool.of(*wanted)[:8]
    if not chosen:
        return _nothing(context, wanted)
    lines = []
    for criterion in [c for s in chosen for c in _criteria(s)][:14]:
        facts = " and ".join(criterion.facts)
        cite = criterion.statement.cite
        if criterion.scenario:
            lines.append(f"- {criterion.scenario}\n  **Then** {facts} {cite}")
        elif is_labelled(facts):
            lines.append(f"- **Check** {facts} {cite}")
        else:
            lines.append(f"- **Check that** {facts} {cite}")
    artifact = ArtifactProposal(
        "requirements_trace",
        f"Acceptance criteria trace for {context.work_item_key}",
        f"{len(lines)} criteria from {len(chosen)} statement(s): Given/When/Then where a statement names its own "
        "condition, otherwise the fact to observe.",
        _trace("statement", "S", chosen),
        _refs(chosen),
    )
    return ActionOutput((_draft(context, "\n".join(lines), chosen),), (artifact, _digest(context, chosen, wanted)))


def _test_type(text: str) -> str:
    lowered = f" {text.lower()} "
    for name, keys in _TEST_TYPES:
        if any(k in lowered for k in keys):
            return name
    return "functional"


def _cell(text: str) -> str:
    return text.replace("|", "/").replace("\n", " ")


def _test_plan(context: EnhancementContext, pool: Pool) -> ActionOutput:
    wanted = ("requirement", "constraint")
    chosen = pool.of(*wanted)[:10]
    if not chosen:
        return _nothing(context, wanted)
    rows: list[str] = []
    for criterion in [c for s in chosen for c in _criteria(s)][:14]:
        scenario = criterion.scenario.replace("**", "") if criterion.scenario else "—"
        statement = criterion.statement
        rows.append(
            f"| T{len(rows) + 1} | {_cell(scenario)} | {_cell(upper_first('; '.join(criterion.facts)))} "
            f"| {_test_type(statement.text)} | `{statement.ref.kind}:{statement.ref.id}` |"
        )
    value = "| # | scenario | expected | test type | evidence |\n|---|---|---|---|---|\n" + "\n".join(rows)
    kinds = sorted({_test_type(s.text) for s in chosen})
    matrix = ArtifactProposal(
        "test_matrix",
        f"Test matrix for {context.work_item_key}",
        f"{len(rows)} test(s) across {', '.join(kinds)}.",
        value,
        _refs(chosen),
    )
    return ActionOutput((_draft(context, value, chosen),), (matrix, _digest(context, chosen, wanted)))


@dataclass(frozen=True)
class _Signal:
    label: str
    weight: float


def _signals(statements: list[Statement], own_count: int) -> list[_Signal]:
    """What makes work bigger, read from classified statements."""

    def count(kind: str) -> int:
        return sum(1 for s in statements if s.kind == kind)

    text = " ".join(s.text for s in statements).lower()
    areas = [name for name, pattern in RISK_CATEGORIES.items() if pattern.search(text)]
    integrations = sum(1 for word in _INTEGRATION_WORDS if re.search(rf"\b{word}s?\b", text))
    requirements = count("requirement") + count("constraint")
    thin = own_count < 3
    return [
        _Signal(f"{requirements} requirement and constraint statement(s)", min(requirements, 8) * 0.5),
        _Signal(f"{count('risk')} stated risk(s)", min(count("risk"), 4) * 1.0),
        _Signal(
            f"{count('dependency')} dependenc{'y' if count('dependency') == 1 else 'ies'}",
            min(count("dependency"), 3) * 1.0,
        ),
        _Signal(f"{count('question')} open question(s)", min(count("question"), 3) * 0.5),
        _Signal(f"{len(areas)} risk area(s) touched: {', '.join(areas) or 'none'}", len(areas) * 0.5),
        _Signal(f"{integrations} integration point keyword(s)", min(integrations, 4) * 0.5),
        _Signal(
            "little written detail, so more unknowns" if thin else "written detail available", 1.5 if thin else 0.0
        ),
    ]


def _raw(signals: list[_Signal]) -> float:
    return 1 + sum(s.weight for s in signals)


def _fibonacci_at_least(value: float) -> int:
    return next((p for p in _FIBONACCI if p >= value), _FIBONACCI[-1])


def _fibonacci_nearest(value: float) -> int:
    return min(_FIBONACCI, key=lambda p: (abs(p - value), -p))


def _reference_complexity(item: ReferenceItem) -> float:
    ref = EvidenceRef("work_item", item.id)
    own = [Statement(t, ref, item.key, classify(t, s), s) for t, s in sectioned_sentences(item.text)]
    return _raw(_signals(own, len(own)))


def _estimate(context: EnhancementContext, pool: Pool) -> ActionOutput:
    wanted = ("requirement", "constraint", "risk", "dependency", "question")
    if pool.empty:
        return _nothing(context, wanted)
    used = pool.of(*wanted)
    signals = _signals(used, len(pool.own))
    raw = _raw(signals)
    by_complexity = _fibonacci_at_least(raw)
    own_raw = _raw(_signals([s for s in used if s.ref.kind == "work_item"], len(pool.own)))
    body = "Complexity signals (base 1):\n" + "\n".join(f"- {s.label}: +{s.weight:g}" for s in signals)
    body += f"\n\nTotal {raw:g} → {by_complexity} points on the Fibonacci scale."
    references = sorted(context.reference_items, key=lambda r: r.key)
    refs = [EvidenceRef("work_item", r.id) for r in references]
    if references:
        rows: list[str] = []
        scaled: list[float] = []
        for item in references:
            complexity = _reference_complexity(item)
            scaled.append(item.estimate * own_raw / complexity)
            rows.append(
                f"| {item.key} | {_cell(item.title)} | {item.estimate:g} | {complexity:g} | `work_item:{item.id}` |"
            )
        middle = statistics.median(scaled)
        points = _fibonacci_nearest(middle)
        summary = (
            f"{points} story points: compared with {len(references)} completed work item(s) of this project that have "
            f"estimates (reference class), scaled by complexity; the signals alone would say {by_complexity}."
        )
        body += (
            f"\n\nReference class: {len(references)} completed work item(s) of the same project with estimates. "
            f"Each estimate is scaled by this item's own complexity ({own_raw:g}) over the reference's; the median, "
            f"{middle:.1f}, rounds to {points}.\n\n| work item | title | points | complexity | evidence |\n"
            "|---|---|---|---|---|\n" + "\n".join(rows)
        )
    else:
        points = by_complexity
        summary = (
            f"{points} story points from complexity signals alone: no completed work item of this project has an "
            "estimate to compare with."
        )
    rationale = ArtifactProposal(
        "estimate_rationale",
        f"Estimate rationale for {context.work_item_key}",
        summary,
        body,
        _refs(used) + tuple(refs),
    )
    draft = DraftProposal(
        ACTION_FIELDS[context.action],
        points,
        _confidence(used, 0.1 if references else 0.0),
        _refs(used) + tuple(refs),
    )
    return ActionOutput((draft,), (rationale, _digest(context, used, wanted)))


def _risk_area(statement: Statement) -> str:
    if statement.kind == "dependency":
        return "dependency"
    for name, pattern in RISK_CATEGORIES.items():
        if pattern.search(statement.text):
            return name
    return "delivery"


def _risk_check(context: EnhancementContext, pool: Pool) -> ActionOutput:
    wanted = ("risk", "dependency", "question")
    found: dict[str, list[Statement]] = {}
    for statement in pool.of("risk", "dependency"):
        # A document's dependency is a risk when it names an outside party or contract, not merely an input.
        outside = statement.kind == "risk" or statement.ref.kind == "work_item"
        if outside or RISK_CATEGORIES["dependency"].search(statement.text):
            found.setdefault(_risk_area(statement), []).append(statement)
    questions = pool.of("question")[:4]
    if not found and not questions:
        report = ArtifactProposal(
            "risk_report",
            f"Risk report for {context.work_item_key}",
            "The evidence states no risk, dependency or open question.",
            "Nothing in the work item or the visible documents is stated as a risk, a dependency or an open "
            "question; that is an absence of evidence, not proof of no risk.",
            (),
        )
        return ActionOutput((), (report, _digest(context, [], wanted)))
    sections = []
    used: list[Statement] = []
    for name in _RISK_AREAS:
        if name in found:
            items = found[name][:4]
            used += items
            sections.append(f"### {name.capitalize()} risk\n\n" + _bullets(items))
    if questions:
        used += questions
        sections.append("### Open questions\n\n" + _bullets(questions))
    value = "\n\n".join(sections)
    report = ArtifactProposal(
        "risk_report",
        f"Risk report for {context.work_item_key}",
        f"{len(found)} risk area(s): {', '.join(n for n in _RISK_AREAS if n in found) or 'none'}"
        + (f"; {len(questions)} open question(s)." if questions else "."),
        value,
        _refs(used),
    )
    return ActionOutput((_draft(context, value, used),), (report, _digest(context, used, wanted)))


_BUILDERS: dict[str, Callable[[EnhancementContext, Pool], ActionOutput]] = {
    "requirements": _requirements,
    "description": _description,
    "design": _design,
    "implementation_plan": _plan,
    "acceptance_criteria": _acceptance,
    "test_plan": _test_plan,
    "estimate": _estimate,
    "risk_check": _risk_check,
}


def work_item_evidence(work_item_id: str, title: str, fields: dict[str, object]) -> list[Evidence]:
    """The work item's own text as evidence (kind `work_item`), field by field (the title anchors, not quotes)."""
    evidence = []
    for name, value in fields.items():
        if isinstance(value, str) and value.strip():
            evidence.append(Evidence(EvidenceRef("work_item", work_item_id), value, f"work item {name}", name))
    return evidence
