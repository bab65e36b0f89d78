"""What a caller's instructions ask for, and which parts a draft could not follow.

Instructions are split into parts (at `;`, `.` and line breaks). A part is one of:

- a focus ("focus on X and Y", "emphasise X", "prioritise X"): its words steer the evidence search and
  put the statements that carry them first; a topic no evidence mentions is reported as not followed;
- an exclusion ("exclude X", "ignore X", "without X", "do not mention X"): statements naming X are left out;
- a format the generator supports: acceptance criteria as Given/When/Then, numbered steps;
- anything else, which the extractive generator cannot follow and reports as such.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from groundwork.domain.evidence_search.analysis import content_terms

_PARTS = re.compile(r"[;\n]|\.(?:\s|$)")
_FOCUS = re.compile(
    r"^(?:please\s+)?(?:focus(?: on)?|emphasi[sz]e|prioriti[sz]e|concentrate on)\s*:?\s*(?P<what>.+)$", re.I
)
_EXCLUDE = re.compile(
    r"^(?:please\s+)?(?:exclude|ignore|without|skip|leave out|do not mention|don't mention)\s*:?\s*(?P<what>.+)$", re.I
)
_GWT = re.compile(r"given\s*/\s*when\s*/\s*then|given[, ]+when[, ]+(?:and )?then|gherkin|\bbdd\b", re.I)
_NUMBERED = re.compile(r"\bnumbered\b|\bnumber (?:the|each) steps?\b|\bstep[- ]by[- ]step\b", re.I)
_TOPICS = re.compile(r",|\band(?: on)?\b|\bor\b")


@dataclass(frozen=True)
class Instructions:
    """The parts of a caller's instructions, by what the generator does with them."""

    focus: tuple[tuple[str, frozenset[str]], ...]  # (topic as written, its stems)
    exclude: tuple[str, ...]
    formats: frozenset[str]  # "given_when_then", "numbered_steps"
    unsupported: tuple[str, ...]

    @classmethod
    def parse(cls, text: str) -> Instructions:
        """Split the instructions into focus topics, exclusions, formats and what cannot be followed."""
        focus: list[tuple[str, frozenset[str]]] = []
        exclude: list[str] = []
        formats: set[str] = set()
        unsupported: list[str] = []
        for raw in _PARTS.split(text):
            part = raw.strip().strip(",").strip()
            if not part:
                continue
            if _GWT.search(part):
                formats.add("given_when_then")
            elif _NUMBERED.search(part):
                formats.add("numbered_steps")
            elif match := _FOCUS.match(part):
                for topic in _TOPICS.split(match.group("what")):
                    words = frozenset(content_terms(topic))
                    if words:
                        focus.append((topic.strip(), words))
            elif match := _EXCLUDE.match(part):
                exclude += [p.strip().lower() for p in _TOPICS.split(match.group("what")) if p.strip()]
            else:
                unsupported.append(part)
        return cls(tuple(focus), tuple(exclude), frozenset(formats), tuple(unsupported))

    @property
    def focus_words(self) -> frozenset[str]:
        """The stems of every focus topic."""
        return frozenset(word for _, words in self.focus for word in words)

    def allows(self, text: str) -> bool:
        """Whether a statement may be used: it names nothing the caller excluded."""
        lowered = text.lower()
        return not any(term in lowered for term in self.exclude)

    def not_followed(self, used_words: frozenset[str], action: str) -> list[str]:
        """Each part of the instructions this action's draft did not follow, with why."""
        missing = [
            f"focus on “{topic}”: no evidence used for this draft mentions it"
            for topic, words in self.focus
            if not words & used_words
        ]
        if "given_when_then" in self.formats and action not in ("acceptance_criteria", "test_plan"):
            missing.append("Given/When/Then applies to acceptance criteria and test plans, not to this field")
        if "numbered_steps" in self.formats and action != "implementation_plan":
            missing.append("numbered steps apply to the implementation plan, not to this field")
        missing += [f"“{part}”: not a request the extractive generator can follow" for part in self.unsupported]
        return missing
