"""The risk check: only risks, each under its area, with the open questions the evidence leaves."""

from __future__ import annotations

import re

from groundwork.domain.enhancement.drafting import Line, digest, draft, refs
from groundwork.domain.enhancement.enhancer import EnhancementContext
from groundwork.domain.enhancement.model import ActionOutput, ArtifactProposal
from groundwork.domain.enhancement.statements import Pool, Statement

# Each risk area and the words that name it (whole words: "load" must not match "loads it into").
RISK_CATEGORIES: dict[str, re.Pattern[str]] = {
    name: re.compile(r"\b(?:" + words + r")\b", re.IGNORECASE)
    for name, words in {
        "security": r"security|auth\w*|tokens?|tokeni[sz]\w*|credentials?|secrets?|passwords?|pci|encrypt\w*|tls"
        r"|certificates?|gdpr|pii|personal data|permissions?|vault|hmac|oauth|sso|leak\w*|breach\w*|signature"
        r"|attack\w*|root|keys?",
        "data": r"migrat\w*|backfill\w*|schema changes?|legacy|cutover|data loss|lost|corrupt\w*|re-?import\w*"
        r"|historic(?:al)? data|export\w*|backups?|restore",
        "performance": r"p9\d|p50|latency|throughput|per second|under load|load[- ]tests?|slow\w*|timeouts?|timed out"
        r"|capacity|\d+\s?ms|speed|disk space|full",
        "dependency": r"vendors?|third[- ]party|contracts?|contracted|suppliers?|psp|licen[cs]\w*|upstream"
        r"|external (?:api|service|system)s?|firmware|renewals?|partners?|procurement|agency",
        "scope": r"also asked|additionally|nice to have|phase 2|add-ons?|on top of|statement of work|scope",
    }.items()
}
RISK_AREAS = (*RISK_CATEGORIES, "delivery")


def risk_area(statement: Statement) -> str:
    """The area a risk belongs to."""
    if statement.kind == "dependency":
        return "dependency"
    for name, pattern in RISK_CATEGORIES.items():
        if pattern.search(statement.text):
            return name
    return "delivery"


def risk_check(context: EnhancementContext, pool: Pool) -> ActionOutput:
    """The risks and outside dependencies the evidence states and the item does not, by area."""
    wanted = ("risk", "dependency", "question")
    found: dict[str, list[Statement]] = {}
    for statement in pool.of("risk", "dependency"):
        if statement.is_command or context.work_item_key.lower() in statement.text.lower():
            continue
        # A document's dependency is a risk when it names an outside party or contract, not merely an input.
        if statement.kind == "risk" or RISK_CATEGORIES["dependency"].search(statement.text):
            found.setdefault(risk_area(statement), []).append(statement)
    questions = pool.of("question")[:3]
    if not found and not questions:
        report = ArtifactProposal(
            "risk_report",
            f"Risk report for {context.work_item_key}",
            "The evidence adds no risk, dependency or open question to the item.",
            "Nothing in the passages about the item is stated as a risk, a dependency or an open question that the "
            "item does not already name; that is an absence of evidence, not proof of no risk.",
            (),
        )
        why = "no passage about the item states a risk the item does not name."
        return ActionOutput((), (report, digest(context, pool, [], wanted, why)))
    sections, lines = [], []
    for name in RISK_AREAS:
        if name in found:
            items = found[name][:3]
            lines += [Line(s.text, (s,)) for s in items]
            sections.append(f"### {name.capitalize()} risk\n\n" + "\n".join(f"- {s.text}" for s in items))
    if questions:
        lines += [Line(s.text, (s,)) for s in questions]
        sections.append("### Open questions\n\n" + "\n".join(f"- {s.text}" for s in questions))
    value = "\n\n".join(sections)
    report = ArtifactProposal(
        "risk_report",
        f"Risk report for {context.work_item_key}",
        f"{len(found)} risk area(s): {', '.join(n for n in RISK_AREAS if n in found) or 'none'}"
        + (f"; {len(questions)} open question(s)." if questions else "."),
        value,
        refs([s for line in lines for s in line.sources]),
    )
    return ActionOutput((draft(context, value, lines),), (report, digest(context, pool, lines, wanted)))
