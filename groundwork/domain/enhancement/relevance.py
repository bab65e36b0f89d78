"""Whether evidence is about the work item: stemmed whole-word overlap with the item, weighted by rarity.

The item is read as a question (its title, description and the run's focus), with the one shared analysis
(`content_terms`: stems of content words, stopwords and question words dropped), never by word prefixes.
A word weighs by its rarity among the run's evidence (the passages gathered for it and the item itself):
a word every passage shares says little about which one answers. A passage is relevant when it covers
enough of the item's weight and ranks near the best; inside a relevant passage a sentence is kept when it
shares a weighted word with the item, or when it states a cause, a fix, a limit, a setting or a command
(what a vague ticket most lacks, in words it does not use). A line is a restatement when most of its
content words are the item's own.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable
from dataclasses import dataclass

from groundwork.domain.enhancement.enhancer import CorpusRarity
from groundwork.domain.enhancement.neighbourhood import within_section
from groundwork.domain.evidence_search.analysis import content_terms

# The item's most distinctive words a sentence must share to be fully relevant (1.0).
_TOP_WORDS = 5
PASSAGE_MIN = 0.3  # a passage covers at least this share of the item's top words' weight...
PASSAGE_OF_BEST = 0.75  # ...and its source at least this share of the best source's
SOURCE_SHARE = 0.5  # inside a relevant source, a passage scoring this share of the source's best is relevant
SENTENCE_MIN = 0.2  # a sentence sharing less is kept only for what it states (a cause, a fix, ...)
RESTATED_SHARE = 0.8  # a line whose content words are this much the item's only restates it

FACETS = ("cause", "fix", "limit", "setting", "command")
_FACET_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("command", re.compile(r"^`[^`]+`\.?$|\$ \w|\b(?:the|this) `?[\w.-]+`? command\b|\bcommand line\b", re.I)),
    (
        "setting",
        re.compile(
            r"(?:^|[\s`(])/(?:etc|var|usr|srv|home|boot|dev|lib|opt|run)/[\w./-]+|\b[\w.-]+\.(?:conf|cfg|cf|ini|ya?ml|d)\b"
            # `key = value` or `key: value`, never an error message (`SSHException: Error reading ...`)
            r"|`(?![\w.]*(?:Error|Exception)\s*:)[\w.-]+\s*[=:]\s*[^`]+`"
            r"|\b(?:setting|option|directive|parameter|variable)s?\b",
            re.I,
        ),
    ),
    (
        "cause",
        re.compile(
            r"\b(?:because|due to|caused by|the cause|root cause|the reason|rotates|restarts|expires?|is full|fills? up"
            r"|fail(?:s|ed)? (?:with|when|if|because)|error)\b",
            re.I,
        ),
    ),
    (
        "fix",
        re.compile(
            r"\b(?:rerun|re-run|retry|retries|restart|workaround|to fix|fixe[sd]|solution|solves?"
            r"|recover\w*|repair\w*)\b",
            re.I,
        ),
    ),
    (
        "limit",
        re.compile(
            r"\b(?:at most|at least|no more than|up to|limit(?:s|ed)?|maximum|minimum|quota|grace period|never|must not"
            r"|cannot|only after|only before|does not)\b"
            r"|\b\d+(?:[.,]\d+)?\s?(?:ms|s|seconds?|minutes?|hours?|days?|weeks?|GB|MB|TB|%|k)\b|\b\d{1,2}:\d{2}\b",
            re.I,
        ),
    ),
)


def facet(text: str) -> str | None:
    """What a sentence states that a draft needs even without the item's words: a command, a setting, a cause,
    a fix or a limit (None: none of these)."""
    for name, pattern in _FACET_PATTERNS:
        if pattern.search(text):
            return name
    return None


def stems(text: str) -> frozenset[str]:
    """The distinct stems of a text's content words."""
    return frozenset(content_terms(text))


def item_words(title: str, description: str, focus: frozenset[str] = frozenset()) -> frozenset[str]:
    """The words (stems) a work item asks with: its title's and description's content words, and its focus."""
    return stems(f"{title} {description}") | focus


@dataclass(frozen=True)
class ItemQuery:
    """The work item read as a question: its words, each weighted by rarity, and the words it already states."""

    weights: dict[str, float]
    own: frozenset[str]
    focus: frozenset[str]

    present: frozenset[str] = frozenset()

    @classmethod
    def of(
        cls,
        question: str,
        own_text: str,
        focus: frozenset[str],
        passages: Iterable[str],
        rarity: CorpusRarity | None = None,
    ) -> ItemQuery:
        """Weights from the rarity of each question word in the project's corpus (BM25's idf), or, for evidence
        gathered without the corpus's frequencies, among the item and the passages gathered for it."""
        asked = stems(question) | focus  # `item_words` of the item
        found = [stems(d) for d in passages]
        count = len(found) + 1  # the item itself holds every word it asks with
        in_corpus = dict(rarity.frequencies) if rarity is not None else {}
        weights = {}
        for word in asked:
            if rarity is not None:
                held = min(in_corpus.get(word, 0), rarity.passages)
                weight = math.log(1 + (rarity.passages - held + 0.5) / (held + 0.5))
            else:
                weight = math.log(1 + count / (1 + sum(1 for d in found if word in d)))
            weights[word] = weight * (2.0 if word in focus else 1.0)
        present = frozenset(word for word in asked if any(word in d for d in found))
        return cls(weights, stems(own_text), focus, present)

    @property
    def scale(self) -> float:
        """The weight of the item's most distinctive words the evidence holds: a text sharing them all scores 1.

        Words no passage holds ("flaky", "last week") cannot be matched, so they do not set the scale."""
        counted = [w for word, w in self.weights.items() if word in self.present] or list(self.weights.values())
        return sum(sorted(counted, reverse=True)[:_TOP_WORDS]) or 1.0

    def relevance(self, text: str) -> float:
        """How much of the item's weight a text shares, 0 to 1."""
        shared = sum(self.weights.get(word, 0.0) for word in stems(text))
        return round(min(1.0, shared / self.scale), 3)

    def restates(self, text: str) -> bool:
        """Whether a line only restates the item: most of its content words are the item's own."""
        found = stems(text)
        return bool(found) and len(found & self.own) / len(found) >= RESTATED_SHARE

    def adds_to(self, text: str) -> bool:
        """Whether a line brings something the item does not state."""
        return not self.restates(text)


@dataclass(frozen=True)
class Scored:
    """A passage's relevance, the source it belongs to and the section it sits under."""

    key: str
    source: str
    section: str
    score: float


def relevant_passages(passages: list[Scored]) -> set[str]:
    """The passages (by key) that rank as relevant.

    A source is relevant when its best passage covers enough of the item's weight and comes near the best
    source's; inside it, a passage is relevant when it scores near its source's best or covers that much
    itself, or sits in the section of one that does or in a subsection of it (a runbook's fix is a paragraph
    after the symptom that names the item)."""
    best_of: dict[str, float] = {}
    for passage in passages:
        best_of[passage.source] = max(best_of.get(passage.source, 0.0), passage.score)
    if not best_of:
        return set()
    top = max(best_of.values())
    sources = {s for s, score in best_of.items() if score >= PASSAGE_MIN and score >= top * PASSAGE_OF_BEST}
    # A passage that alone would clear a source's bar is relevant however far its source's best one goes past it.
    strong = {
        p.key for p in passages if p.source in sources and p.score >= min(best_of[p.source] * SOURCE_SHARE, PASSAGE_MIN)
    }
    sections = {(p.source, p.section) for p in passages if p.key in strong and p.section}
    return strong | {p.key for p in passages if p.source in sources and _under(p, sections)}


def _under(passage: Scored, sections: set[tuple[str, str]]) -> bool:
    """Whether a passage sits in one of these sections of its source, or in a subsection of one."""
    return any(source == passage.source and within_section(passage.section, section) for source, section in sections)


def keeps(sentence_relevance: float, sentence_facet: str | None) -> bool:
    """Whether a sentence of a relevant passage is evidence for the item."""
    return sentence_relevance >= SENTENCE_MIN or sentence_facet is not None
