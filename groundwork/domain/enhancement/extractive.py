"""The embedded draft generator: deterministic and extractive.

It never invents a statement. Every line of a draft is a sentence taken from the work item or from
an evidence passage (lightly reformatted: a bullet, a Given/When/Then frame, a table cell), and it
carries the reference of where it came from. Same context in, same drafts out.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from groundwork.domain.enhancement.enhancer import EnhancementContext, Evidence
from groundwork.domain.enhancement.model import (
    ACTION_FIELDS,
    ActionOutput,
    ArtifactProposal,
    DraftProposal,
    EvidenceRef,
)

_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9\"'(`])")
_BULLET = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+")
_HEADING = re.compile(r"^\s*#{1,6}\s+")
_WORD = re.compile(r"[a-z0-9][a-z0-9_\-/.]*[a-z0-9]|[a-z0-9]")
_CONSTRAINT = re.compile(
    r"\b(must|shall|should|needs? to|required|requires?|cannot|can't|never|only|at least|at most|within|"
    r"no more than|no later than|before|by \d|p9\d|p50|sla|limit|maximum|minimum|every)\b|\d+\s?(ms|s|%|"
    r"seconds?|minutes?|hours?|days?|weeks?|gb|mb|k|m)\b",
    re.IGNORECASE,
)
_CONDITION = re.compile(r"^(?:if|when|whenever|once|after|before|while)\s+(?P<when>[^,]+),\s*(?P<then>.+)$", re.I)
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
        r"|certificates?|gdpr|pii|personal data|permissions?|vault|hmac|oauth|sso|leak\w*|breach\w*",
        "data migration": r"migrat\w*|backfill\w*|schema changes?|legacy|cutover|data loss|re-?import\w*"
        r"|historic(?:al)? data",
        "performance": r"p9\d|p50|latency|throughput|per second|under load|load tests?|slow\w*|timeouts?"
        r"|timed out|lcp|capacity|\d+\s?ms",
        "dependency": r"vendors?|third[- ]party|contracts?|suppliers?|psp|twilio|licen[cs]\w*|upstream"
        r"|external (?:api|service|system)s?|firmware|renewals?|partners?",
        "scope": r"also|additionally|nice to have|phase 2|extend\w*|as well|add-ons?|on top of",
    }.items()
}
_EXPECTED = {
    "performance": "the stated target is met at the expected load",
    "security": "it holds, including a negative test that tries to break it",
    "migration": "it holds on a rehearsal copy of production data, and rollback works",
    "integration": "it holds against the real or sandbox counterpart",
    "end-to-end": "a user completes the flow as stated",
    "functional": "the behaviour matches the statement",
}
_TEST_TYPES: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("performance", ("p99", "p95", "latency", "throughput", "per second", "load", "ms", "seconds")),
    ("security", ("auth", "token", "secret", "permission", "encrypt", "pci", "signature", "gdpr")),
    ("migration", ("migrat", "backfill", "import", "legacy")),
    ("integration", ("api", "endpoint", "webhook", "vendor", "provider", "service", "queue", "event")),
    ("end-to-end", ("user", "customer", "driver", "screen", "page", "checkout", "email")),
)


@dataclass(frozen=True)
class Statement:
    """A sentence and where it came from."""

    text: str
    ref: EvidenceRef
    label: str

    @property
    def cite(self) -> str:
        return f"[{self.ref.kind}:{self.ref.id}]"


def sentences(text: str) -> list[str]:
    """Split Markdown text into clean sentences: wrapped lines rejoined, bullets and headings unwrapped."""
    units: list[str] = []
    for raw_line in text.splitlines():
        stripped = raw_line.strip()
        starts_unit = not units or not stripped or bool(_BULLET.match(raw_line) or _HEADING.match(raw_line))
        line = _HEADING.sub("", _BULLET.sub("", raw_line)).strip()
        if not line or line.startswith("|"):
            units.append("")  # a blank line or a table row ends the paragraph
        elif starts_unit or not units[-1]:
            units.append(line)
        else:
            units[-1] += " " + line  # a wrapped line continues its paragraph
    result: list[str] = []
    for unit in units:
        for part in _SENTENCE_END.split(unit):
            part = part.strip().strip("*_").strip()
            if len(part) >= 12:
                result.append(part if part[-1] in ".!?:" else part + ".")
    return result


def terms(text: str) -> set[str]:
    """Content words of a text as crude stems: lowercase, no stopwords, the first 4 characters.

    Four characters are enough to match "route"/"routing" or "push"/"pushes" without a language model;
    relevance still needs two shared stems (or a constraint sharing one), so the crudeness rarely misleads.
    """
    return {w[:4] for w in _WORD.findall(text.lower()) if len(w) >= 4 and w not in _STOPWORDS}


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


class ExtractiveEnhancer:
    """The deterministic, evidence-grounded default `Enhancer`."""

    name = "extractive-v1"

    async def enhance(self, context: EnhancementContext) -> ActionOutput:
        """Produce the drafts and artifacts of one action from the work item and its evidence."""
        return generate(context)


def generate(context: EnhancementContext) -> ActionOutput:
    """The pure function behind `ExtractiveEnhancer` (sync, for tests and benchmarks)."""
    steering = Steering.parse(context.instructions)
    own, corpus = _statements(context, steering)
    builder = _BUILDERS[context.action]
    return builder(context, own, corpus, steering)


def _statements(context: EnhancementContext, steering: Steering) -> tuple[list[Statement], list[Statement]]:
    """The work item's own sentences, and the evidence sentences relevant to it."""
    own: list[Statement] = []
    corpus: list[Statement] = []
    anchor = terms(context.title + " " + str(context.fields.get("description") or ""))
    seen: set[str] = set()
    for evidence in context.evidence:
        for text in sentences(evidence.text):
            key = text.lower()
            if key in seen or not steering.allows(text):
                continue
            statement = Statement(text, evidence.ref, evidence.label)
            if evidence.ref.kind == "work_item":
                seen.add(key)
                own.append(statement)
            elif len(terms(text) & anchor) >= 2 or (_CONSTRAINT.search(text) and terms(text) & anchor):
                seen.add(key)
                corpus.append(statement)
    return steering.rank(own), steering.rank(corpus)


def _bullets(statements: list[Statement]) -> str:
    """One Markdown bullet per statement, each with its citation."""
    return "\n".join(f"- {s.text} {s.cite}" for s in statements)


def _trace(column: str, prefix: str, statements: list[Statement]) -> str:
    """A table tracing each numbered item (R1, AC1...) to the source it was taken from."""
    rows = "\n".join(f"| {prefix}{i} | {s.label} | `{s.ref.kind}:{s.ref.id}` |" for i, s in enumerate(statements, 1))
    return f"| {column} | source | evidence |\n|---|---|---|\n{rows}"


def _refs(statements: list[Statement]) -> tuple[EvidenceRef, ...]:
    ordered: dict[EvidenceRef, None] = {}
    for statement in statements:
        ordered.setdefault(statement.ref, None)
    return tuple(ordered)


def _confidence(used: list[Statement]) -> float:
    """More independent supporting evidence, more confidence; the work item alone is weak support."""
    corpus_refs = {s.ref for s in used if s.ref.kind != "work_item"}
    own = any(s.ref.kind == "work_item" for s in used)
    if not used:
        return 0.1
    return round(min(0.95, (0.3 if own else 0.15) + 0.15 * len(corpus_refs)), 2)


def _digest(context: EnhancementContext, used: list[Statement]) -> ArtifactProposal:
    """The evidence digest every action produces: what was used, or that nothing supported it."""
    field = ACTION_FIELDS[context.action]
    corpus = [s for s in used if s.ref.kind != "work_item"]
    if not used:
        summary = f"No evidence supports a {field} draft for {context.work_item_key}; nothing was invented."
        body = (
            f"Neither the work item nor any visible corpus passage holds material for `{field}`. "
            "Add detail to the work item or ingest the relevant documents, then run the action again."
        )
    elif not corpus:
        summary = (
            f"The {field} draft rests on the work item text alone: no corpus passage supported it, "
            "so confidence is low."
        )
        body = _bullets(used)
    else:
        sources = sorted({s.label for s in corpus})
        summary = (
            f"{len(used)} statements from the work item and {len(sources)} corpus source(s) support the {field} draft."
        )
        body = "\n".join(f"- {s.text} — _{s.label}_ {s.cite}" for s in used)
    return ArtifactProposal("evidence_digest", f"Evidence for {field}", summary, body, _refs(used))


def _nothing(context: EnhancementContext) -> ActionOutput:
    """No material at all: no draft (it would be invented), only the digest saying so."""
    return ActionOutput(drafts=(), artifacts=(_digest(context, []),))


def _draft(context: EnhancementContext, value: object, used: list[Statement]) -> DraftProposal:
    return DraftProposal(ACTION_FIELDS[context.action], value, _confidence(used), _refs(used))


def _requirement_statements(own: list[Statement], corpus: list[Statement], steering: Steering) -> list[Statement]:
    """Statements that state a constraint (must, within, p99...), focus first; else the item's first ones."""
    constraints = [s for s in own + corpus if _CONSTRAINT.search(s.text)]
    return steering.rank(constraints) or own[:5]


def _requirements(
    context: EnhancementContext, own: list[Statement], corpus: list[Statement], steering: Steering
) -> ActionOutput:
    chosen = _requirement_statements(own, corpus, steering)[:12]
    if not chosen:
        return _nothing(context)
    lines = [f"- **R{i}.** {s.text} {s.cite}" for i, s in enumerate(chosen, 1)]
    value = "\n".join(["Each requirement is a testable statement taken from its source.", "", *lines])
    artifact = ArtifactProposal(
        "requirements_trace",
        f"Requirements trace for {context.work_item_key}",
        f"{len(chosen)} requirement(s), each traced to the sentence it was taken from.",
        _trace("requirement", "R", chosen),
        _refs(chosen),
    )
    return ActionOutput((_draft(context, value, chosen),), (artifact, _digest(context, chosen)))


def _description(
    context: EnhancementContext, own: list[Statement], corpus: list[Statement], steering: Steering
) -> ActionOutput:
    if not own and not corpus:
        return _nothing(context)
    summary = own[:3]
    background = corpus[:4]
    constraints = [s for s in own[3:] + corpus[4:] if _CONSTRAINT.search(s.text)][:5]
    parts = [f"## Summary\n\n{context.title}."]
    if summary:
        parts[0] += " " + " ".join(f"{s.text} {s.cite}" for s in summary)
    if background:
        parts.append("## Context\n\n" + _bullets(background))
    if constraints:
        parts.append("## Constraints\n\n" + _bullets(constraints))
    if not corpus:
        parts.append(
            "## Open questions\n\n- No project document mentions this work yet; confirm scope with "
            "the team before starting."
        )
    used = summary + background + constraints
    return ActionOutput((_draft(context, "\n\n".join(parts), used),), (_digest(context, used),))


# Paths, `code`, acronyms (PSP, MQTT) and CamelCase names: the nouns a design talks about.
_COMPONENT = re.compile(r"(/[a-z0-9_\-/{}.]+[a-z0-9}]|`[^`]+`|\b[A-Z]{3,}\b|\b[A-Z][a-z]+[A-Z][A-Za-z]+\b)")
_DECISION = re.compile(r"\b(decided|agreed|chose|will use|we use|approach|design|architecture|pattern)\b", re.I)


def _design(
    context: EnhancementContext, own: list[Statement], corpus: list[Statement], steering: Steering
) -> ActionOutput:
    if not own and not corpus:
        return _nothing(context)
    decisions = [s for s in corpus + own if _DECISION.search(s.text)][:6]
    constraints = [s for s in own + corpus if _CONSTRAINT.search(s.text) and s not in decisions][:6]
    components: dict[str, None] = {}
    for statement in own + corpus:
        for match in _COMPONENT.findall(statement.text):
            components.setdefault(match.strip("`"), None)
    parts = []
    if components:
        parts.append(
            "## Components and interfaces named in the evidence\n\n"
            + "\n".join(f"- `{c}`" for c in list(components)[:10])
        )
    if decisions:
        parts.append("## Decisions and approaches on record\n\n" + _bullets(decisions))
    if constraints:
        parts.append("## Constraints the design must meet\n\n" + _bullets(constraints))
    if not decisions:
        parts.append(
            "## Open design questions\n\n- No recorded decision covers this work item; the approach "
            "needs a decision by the team."
        )
    used = decisions + constraints
    value = "\n\n".join(parts)
    note = ArtifactProposal(
        "design_note",
        f"Design note for {context.work_item_key}",
        f"{len(decisions)} recorded decision(s) and {len(constraints)} constraint(s) found.",
        value,
        _refs(used),
    )
    return ActionOutput((_draft(context, value, used),), (note, _digest(context, used)))


def _plan(
    context: EnhancementContext, own: list[Statement], corpus: list[Statement], steering: Steering
) -> ActionOutput:
    requirements = _requirement_statements(own, corpus, steering)[:8]
    if not requirements:
        return _nothing(context)
    text = " ".join(s.text for s in own + corpus).lower()
    steps: list[str] = []
    if RISK_CATEGORIES["data migration"].search(text):
        steps.append(
            "Prepare the data change first: write the migration or backfill, rehearse it on a copy, "
            "and plan its rollback."
        )
    steps += [f"Implement: {s.text} {s.cite}" for s in requirements]
    steps.append("Cover each step above with the tests of the test plan before review.")
    if RISK_CATEGORIES["performance"].search(text):
        steps.append("Measure the stated performance targets under load before release.")
    steps.append("Release behind a flag or to a pilot group first, watch errors and metrics, then widen.")
    value = "\n".join(f"{i}. {step}" for i, step in enumerate(steps, 1))
    code_note = (
        f"Code context was unavailable: {context.code_context_unavailable_reason} The plan is built from the "
        "work item and project documents only; no code was read and none is written."
        if context.code_context_unavailable_reason
        else "Code context was read through the authorized connector."
    )
    outline = ArtifactProposal(
        "plan_outline",
        f"Implementation plan outline for {context.work_item_key}",
        f"{len(steps)} ordered steps. {code_note}",
        value + "\n\n> " + code_note,
        _refs(requirements),
    )
    return ActionOutput((_draft(context, value, requirements),), (outline, _digest(context, requirements)))


def _given_when_then(statement: Statement, key: str) -> str:
    match = _CONDITION.match(statement.text.rstrip("."))
    if match:
        when, then = match.group("when"), match.group("then")
    else:
        when, then = "the behaviour is exercised", statement.text.rstrip(".")
    if then[:2] != then[:2].upper():  # keep acronyms (PSP, API) as they are
        then = then[0].lower() + then[1:]
    return f"- **Given** {key} is delivered\n  **When** {when}\n  **Then** {then} {statement.cite}"


def _acceptance(
    context: EnhancementContext, own: list[Statement], corpus: list[Statement], steering: Steering
) -> ActionOutput:
    chosen = _requirement_statements(own, corpus, steering)[:8]
    if not chosen:
        return _nothing(context)
    value = "\n".join(_given_when_then(s, context.work_item_key) for s in chosen)
    artifact = ArtifactProposal(
        "requirements_trace",
        f"Acceptance criteria trace for {context.work_item_key}",
        f"{len(chosen)} criteria in Given/When/Then form, each traced to its source statement.",
        _trace("criterion", "AC", chosen),
        _refs(chosen),
    )
    return ActionOutput((_draft(context, value, chosen),), (artifact, _digest(context, chosen)))


def _test_type(text: str) -> str:
    lowered = text.lower()
    for name, keys in _TEST_TYPES:
        if any(k in lowered for k in keys):
            return name
    return "functional"


def _test_plan(
    context: EnhancementContext, own: list[Statement], corpus: list[Statement], steering: Steering
) -> ActionOutput:
    chosen = _requirement_statements(own, corpus, steering)[:10]
    if not chosen:
        return _nothing(context)
    rows = [
        f"| T{i} | {s.text.replace('|', '/')} | {_test_type(s.text)} | {_EXPECTED[_test_type(s.text)]} "
        f"| `{s.ref.kind}:{s.ref.id}` |"
        for i, s in enumerate(chosen, 1)
    ]
    value = "| # | what is verified | test type | expected | evidence |\n|---|---|---|---|---|\n" + "\n".join(rows)
    kinds = sorted({_test_type(s.text) for s in chosen})
    matrix = ArtifactProposal(
        "test_matrix",
        f"Test matrix for {context.work_item_key}",
        f"{len(rows)} test(s) across {', '.join(kinds)}.",
        value,
        _refs(chosen),
    )
    return ActionOutput((_draft(context, value, chosen),), (matrix, _digest(context, chosen)))


_FIBONACCI = (1, 2, 3, 5, 8, 13, 21)


def _estimate(
    context: EnhancementContext, own: list[Statement], corpus: list[Statement], steering: Steering
) -> ActionOutput:
    if not own and not corpus:
        return _nothing(context)
    requirements = _requirement_statements(own, corpus, steering)
    text = " ".join(s.text for s in own + corpus).lower()
    risks = [name for name, pattern in RISK_CATEGORIES.items() if pattern.search(text)]
    integrations = sum(1 for k in _TEST_TYPES[3][1] if k in text)
    signals = [
        (f"{len(requirements)} requirement statement(s)", min(len(requirements), 8) * 0.5),
        (f"{len(risks)} risk area(s): {', '.join(risks) or 'none'}", len(risks) * 1.0),
        (f"{integrations} integration point keyword(s)", min(integrations, 4) * 0.5),
        (
            "little written detail, so more unknowns" if len(own) < 3 else "written detail available",
            1.5 if len(own) < 3 else 0.0,
        ),
    ]
    raw = 1 + sum(weight for _, weight in signals)
    points = next((p for p in _FIBONACCI if p >= raw), _FIBONACCI[-1])
    used = requirements[:8]
    body = "\n".join(f"- {label}: +{weight:g}" for label, weight in signals)
    rationale = ArtifactProposal(
        "estimate_rationale",
        f"Estimate rationale for {context.work_item_key}",
        f"{points} story points: raw complexity {raw:g} rounded up to the Fibonacci scale.",
        f"Base 1, plus:\n{body}\n\nTotal {raw:g} → {points} points.",
        _refs(used),
    )
    return ActionOutput((_draft(context, points, used),), (rationale, _digest(context, used)))


def _risk_check(
    context: EnhancementContext, own: list[Statement], corpus: list[Statement], steering: Steering
) -> ActionOutput:
    found: dict[str, list[Statement]] = {}
    for statement in own + corpus:
        for name, pattern in RISK_CATEGORIES.items():
            if pattern.search(statement.text):
                found.setdefault(name, []).append(statement)
    if not found:
        if not own and not corpus:
            return _nothing(context)
        report = ArtifactProposal(
            "risk_report",
            f"Risk report for {context.work_item_key}",
            "No security, data migration, performance, dependency or scope risk is named in the evidence.",
            "The evidence names none of the tracked risk areas; that is an absence of evidence, not proof of no risk.",
            (),
        )
        return ActionOutput((), (report, _digest(context, [])))
    sections = []
    used: list[Statement] = []
    for name in RISK_CATEGORIES:
        if name in found:
            items = found[name][:3]
            used += items
            sections.append(f"### {name.capitalize()} risk\n\n" + _bullets(items))
    value = "\n\n".join(sections)
    report = ArtifactProposal(
        "risk_report",
        f"Risk report for {context.work_item_key}",
        f"{len(found)} risk area(s): {', '.join(n for n in RISK_CATEGORIES if n in found)}.",
        value,
        _refs(used),
    )
    return ActionOutput((_draft(context, value, used),), (report, _digest(context, used)))


_BUILDERS = {
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
            evidence.append(Evidence(EvidenceRef("work_item", work_item_id), value, f"work item {name}"))
    return evidence
