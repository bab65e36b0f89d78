"""Rewording a quoted sentence without changing what it claims: as an instruction, or as what to observe.

The extractive generator never invents a statement, but a requirement written as "Card numbers must
never be stored" reads differently as a plan step ("Never let card numbers be stored") and as an
acceptance criterion ("card numbers are never stored"). These functions do only such grammatical
rewrites, by rules, and give up (returning the sentence as written) when a sentence does not fit them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from groundwork.domain.enhancement.classify import IMPERATIVE_VERBS, is_instruction

# A sentence's link to the one before it, which says nothing once the sentence stands alone ("Note that X" says X).
_CONNECTIVE = re.compile(
    r"^(?:(?:finally|then|first|second|next|also|moreover|furthermore|however|therefore|as such|in addition"
    r"|of course|in particular|for instance|for example|fortunately|unfortunately|in practice|in fact"
    r"|in our example|in this case|in that case),|(?:please\s+)?note that)\s+",
    re.IGNORECASE,
)
_MODAL = re.compile(
    r"^(?P<subject>.+?)\s+(?P<modal>must|shall|should|needs to|need to|has to|have to|is required to|are required to)"
    r"\s+(?P<rest>.+)$",
    re.IGNORECASE,
)
_ADVERBS = (
    "still",
    "always",
    "also",
    "only",
    "immediately",
    "automatically",
    "silently",
    "clearly",
    "first",
    "then",
    "either",
    "simply",
    "just",
    "usually",
    "generally",
)
# Personal pronouns take the plural form of a verb ("you change", "we keep").
_PLURAL_PRONOUNS = frozenset({"you", "we", "they", "i"})
_IRREGULAR = {
    "build": "built",
    "buy": "bought",
    "cut": "cut",
    "do": "done",
    "feed": "fed",
    "find": "found",
    "give": "given",
    "hide": "hidden",
    "hold": "held",
    "keep": "kept",
    "let": "let",
    "make": "made",
    "pay": "paid",
    "put": "put",
    "read": "read",
    "rerun": "rerun",
    "run": "run",
    "send": "sent",
    "set": "set",
    "show": "shown",
    "split": "split",
    "take": "taken",
    "tell": "told",
    "write": "written",
}
_PARTICIPLE_END = re.compile(r"(?:ed|en|wn|ung|ept|ent|ilt|ound|eld|ade|aid|old|ut|un|et)$")
_THIRD_PERSON_IRREGULAR = {"be": "is", "have": "has", "do": "does", "go": "goes", "can": "can"}
_PLURAL_EXCEPTIONS = ("ss", "us", "is", "ics")
_PRONOUN_SUBJECT = {"them": "they", "it": "it", "both": "both", "these": "these", "those": "those"}
_LEADING_CONDITION = re.compile(
    r"^(?P<word>if|when|whenever|each time|every time|as soon as|once|after|while|unless|until)\s+(?P<clause>[^,]+?),"
    r"\s*(?P<rest>.+)$",
    re.IGNORECASE,
)
# Only "X if Y" is split from the end: "X only when Y" restricts X, and "at once" is no condition.
_TRAILING_CONDITION = re.compile(r"^(?P<rest>(?:\S+\s+){1,}?\S+?)(?<!\bonly)\s+(?P<word>if)\s+(?P<clause>.+)$", re.I)
_STATIVE = re.compile(
    r"\b(?:is|are|was|were|has|have|does not|do not|doesn't|don't|cannot|can't|unavailable|exists?|there is)\b", re.I
)
_VERB_ALTERNATIVES = "|".join(sorted((re.escape(v) for v in IMPERATIVE_VERBS), key=len, reverse=True))
# Where one instruction ends and the next begins: ", and verify ...", ", reject ...", " and never store ...".
_CLAUSE_SPLIT = re.compile(rf"(?:,\s+and|,|\s+and)\s+(?=(?:never\s+)?(?:{_VERB_ALTERNATIVES})\b(?!-))")
_OBJECT_END = re.compile(
    r"(?:^|\s+)(?=(?:with|to|from|into|through|on|in|for|by|at|so|as|until|before|after|when|if|via|over|under"
    r"|using|while|without)\s)|,|;",
    re.IGNORECASE,
)
_WISH = re.compile(
    r"^(?!(?:if|when|whenever|unless|once|after|while|until|as)\b)"  # "If you want to X, ..." is a condition
    r"(?P<who>(?:[\w'&-]+\s+){0,4}?[\w'&-]+)\s+(?P<verb>wants?|would like|asked)\s+"
    r"(?:(?P<how>that|us to|to|for)\s+)?(?P<rest>.+)$",
    re.IGNORECASE,
)
# The reader's option, written to the reader: "you can define rights", "the administrator can use visudo".
_YOU_CAN = re.compile(r"^(?:you|one|the administrator|an administrator)\s+can\s+(?!be\b|not\b)(?P<rest>.+)$", re.I)
# A personal pronoun and the word after it: "you consider", "we keep" (a verb, whatever its ending).
_PRONOUN_VERB = re.compile(r"\b(?:you|we|they|i)\s+(?!and\b|or\b)[a-z]{2,}", re.IGNORECASE)
_FINITE = re.compile(r"\b(?:is|are|was|were|has|have|had|must|should|shall|can|will|may|does|do|did)\b", re.I)
# "Reconciliation report: cards exported = ..." - a spec line with a label, no verb before the colon.
_LABEL = re.compile(r"^(?P<label>[A-Z][\w -]{2,60}?):\s+(?P<rest>.+)$")
_WANTED_DONE = re.compile(r"^(?P<np>(?:\S+\s+){0,2}?\S+)\s+(?P<part>[a-z-]+(?:ed|en|wn))\b(?P<tail>.*)$")
_CONSTRAINT_LABEL = re.compile(r"^(hard|soft)\s*:\s*(.+)$", re.I)
_NAME_FOLLOWS = re.compile(r"^\S+(?:'s\b|\s+(?:&|[A-Z]))")


@dataclass(frozen=True)
class Condition:
    """A requirement split into its condition (when it applies) and its outcome."""

    word: str  # if, when, ...
    clause: str
    outcome: str

    @property
    def is_state(self) -> bool:
        """A condition describing a state ("the PSP is unavailable") is a Given; an event is a When."""
        return self.word.lower() in ("if", "while", "unless", "until") and bool(_STATIVE.search(self.clause))


def bare(sentence: str) -> str:
    """The sentence without its closing punctuation and surrounding emphasis."""
    return sentence.strip().strip("*_ ").rstrip(".:;!").strip()


def lower_first(text: str) -> str:
    """Lowercase the first word when it is an ordinary word (never an acronym, a name or `code`)."""
    first = text.split(" ", 1)[0]
    if re.fullmatch(r"[A-Z][a-z]*(?:-[a-z]+)*", first) and not _NAME_FOLLOWS.match(text):
        return first.lower() + text[len(first) :]
    return text


def upper_first(text: str) -> str:
    """Capitalise the first letter (leaving `code` and numbers alone)."""
    return text[:1].upper() + text[1:] if text[:1].isalpha() else text


def is_plural(subject: str) -> bool:
    """A rough number for a subject: plural nouns and lists take "are"."""
    words = re.findall(r"[A-Za-z][A-Za-z'-]*", subject)
    if not words:
        return False
    if " and " in f" {subject.lower()} " or words[0].lower() in ("both", "all", "several", "two", "three", "many"):
        return True
    if words[0].lower() in ("each", "every", "a", "an", "one", "no"):
        return False
    # The head noun is the last word before a preposition ("cards in the vault" -> cards).
    head = words[0]
    for word in words:
        if word.lower() in (
            "of",
            "in",
            "on",
            "for",
            "with",
            "from",
            "to",
            "that",
            "which",
            "who",
            "at",
            "by",
            "than",
            "older",
            "newer",
        ):
            break
        head = word
    lowered = head.lower()
    return lowered.endswith("s") and not lowered.endswith(_PLURAL_EXCEPTIONS) and lowered not in ("its", "this")


def third_person(verb: str) -> str:
    """The verb for a singular subject: complete -> completes, carry -> carries, be -> is."""
    lowered = verb.lower()
    if lowered in _THIRD_PERSON_IRREGULAR:
        return _THIRD_PERSON_IRREGULAR[lowered]
    if re.search(r"(?:s|sh|ch|x|z|o)$", lowered):
        return verb + "es"
    if re.search(r"[^aeiou]y$", lowered):
        return verb[:-1] + "ies"
    return verb + "s"


def participle(verb: str) -> str:
    """The past participle of a verb: replace -> replaced, verify -> verified, drop -> dropped, send -> sent."""
    head, dash, last = verb.rpartition("-")
    lowered = last.lower()
    if lowered in _IRREGULAR:
        done = _IRREGULAR[lowered]
    elif lowered.endswith("e"):
        done = lowered + "d"
    elif re.search(r"[^aeiou]y$", lowered):
        done = lowered[:-1] + "ied"
    elif re.fullmatch(r"[^aeiou]?[^aeiou][aeiou][bdglmnprt]", lowered):
        done = lowered + lowered[-1] + "ed"
    else:
        done = lowered + "ed"
    return f"{head}{dash}{done}"


def split_condition(sentence: str) -> Condition | None:
    """`If X, Y` / `When X, Y` / `Y if X`: the condition and the outcome; None when there is none.

    "After import, map each token" names no event of its own (no verb in "import"), and "After migration our
    services hold only a token, the card brand, ..." is a list, not an outcome: neither is split.
    """
    text = bare(sentence)
    leading = _LEADING_CONDITION.match(text)
    if leading:
        clause, rest = leading.group("clause").strip(), leading.group("rest").strip()
        if _has_verb(clause) and _has_verb(rest):
            return Condition(leading.group("word"), clause, rest)
        return None
    trailing = _TRAILING_CONDITION.match(text)
    if trailing and " and " not in trailing.group("rest") and _has_verb(trailing.group("rest")):
        if not _balanced(trailing.group("rest")):  # "accessible (and, if it is mounted, ...)" is an aside
            return None
        return Condition(trailing.group("word"), trailing.group("clause").strip(), trailing.group("rest").strip())
    return None


# A comma between clauses or list items, not inside a number ("1,800 vehicles").
_CLAUSE_COMMA = re.compile(r",(?!\d{3}\b)")


def _balanced(text: str) -> bool:
    return text.count("(") == text.count(")")


def split_consequence(sentence: str) -> tuple[str, str] | None:
    """`X; Y`, two statements with their verbs: what happens (X) and what follows from it (Y); None otherwise.

    "The user generates a key pair with ssh-keygen; the public key is stored in ~/.ssh/id_rsa.pub" is an event
    and its observable result, as a criterion's When and Then."""
    head, semicolon, rest = standalone(bare(sentence)).partition("; ")
    # A head with commas of its own ("Unlike Munin, Nagios ...", "even this, however, ...") is an argument, not
    # an event.
    if not semicolon or ";" in rest or _CLAUSE_COMMA.search(head) or len(head.split()) > 20:
        return None
    if not _has_verb(head) or not _has_verb(rest):
        return None
    return head.strip(), rest.strip()


def _first_word(text: str) -> str:
    match = re.match(r"[A-Za-z][A-Za-z-]*", text)
    return match.group(0) if match else ""


def _is_instruction(text: str) -> bool:
    return is_instruction(text)


def _has_verb(text: str) -> bool:
    """Whether a clause reads as a statement with a verb, not a bare noun phrase or list."""
    if (len(text.split()) > 1 and _is_instruction(text)) or _FINITE.search(text) or _PRONOUN_VERB.search(text):
        return True
    words = text.split()
    return any(w.endswith("s") and not w.endswith(("ss", "'s", ",")) for w in words[1:4])


def _passive(clause: str) -> str:
    """An instruction as the state it produces: "replace PANs with tokens" -> "PANs are replaced with tokens"."""
    never = clause.lower().startswith("never ")
    if never:
        clause = clause[len("never ") :]
    verb = _first_word(clause)
    remainder = clause[len(verb) :].strip()
    if verb.lower() == "let":  # "let shoppers check out" -> "shoppers can check out"
        subject, _, action = remainder.partition(" ")
        return f"{_PRONOUN_SUBJECT.get(subject.lower(), subject)} can {action}".strip()
    particle = ""
    for candidate in ("up", "out", "in", "down", "off", "back"):
        if remainder.lower().startswith(candidate + " "):
            particle, remainder = " " + candidate, remainder[len(candidate) + 1 :]
            break
    end = _OBJECT_END.search(remainder)
    obj = remainder[: end.start()].strip() if end else remainder
    tail = remainder[end.start() :].strip() if end else ""
    words = obj.split()
    if len(words) > 1 and words[-1].endswith("ly"):  # "refresh the token silently" -> "is refreshed silently"
        tail = f"{words[-1]} {tail}".strip()
        obj = " ".join(words[:-1])
    if not obj:  # "reject with 409 if ..." names no object
        obj = "it"
    obj = _PRONOUN_SUBJECT.get(obj.lower(), obj)
    be = "are" if is_plural(obj) or obj in ("they", "both", "these", "those") else "is"
    done = participle(verb.lower())
    tail = tail if not tail or tail[0] in ",;" else " " + tail
    return f"{lower_first(obj)} {be} {'never ' if never else ''}{done}{particle}{tail}".strip()


def _modal_as_fact(subject: str, modal: str, rest: str) -> str:
    """'X must V ...' as what is observed once it holds: 'X Vs ...' (or 'X V ...' for a plural X or a pronoun)."""
    plural = is_plural(subject) or subject.split()[-1].lower() in _PLURAL_PRONOUNS
    rest = re.sub(r"\band (?:must|should|shall) not\b", "and does not" if not plural else "and do not", rest)
    words = rest.split(" ")
    adverbs = []
    while words and words[0].lower() in (*_ADVERBS, "never", "not"):
        adverbs.append(words.pop(0))
    if not words:
        return f"{subject} {modal} {rest}"
    verb, tail = words[0], " ".join(words[1:])
    negative = [a for a in adverbs if a.lower() == "not"]
    others = " ".join(a for a in adverbs if a.lower() != "not")
    if verb.lower() == "be":
        if tail.lower().startswith("able to "):
            action = tail[len("able to ") :]
            return f"{subject} {'cannot' if negative else 'can'} {(others + ' ') if others else ''}{action}"
        copula = "are" if plural else "is"
        negation = " not" if negative else ""
        return f"{subject} {copula}{negation} {(others + ' ') if others else ''}{tail}".strip()
    if negative:
        return f"{subject} {'do' if plural else 'does'} not {(others + ' ') if others else ''}{verb} {tail}".strip()
    conjugated = verb if plural else third_person(verb)
    return f"{subject} {(others + ' ') if others else ''}{conjugated} {tail}".strip()


def instruction_clauses(sentence: str) -> list[str]:
    """An instruction with several verbs, one clause per instruction ("Pick up the file, validate it, ...")."""
    text = bare(sentence)
    if not _is_instruction(text):
        return [text]
    clauses: list[str] = []
    for clause in (c.strip() for c in _CLAUSE_SPLIT.split(text) if c.strip()):
        if _is_instruction(clause) or not clauses:
            clauses.append(clause)
        else:  # a clause that is not an instruction belongs to the one before
            clauses[-1] += ", " + clause
    return clauses


def _wish(text: str) -> tuple[str, str, str] | None:
    """A stakeholder's wish: (who, what kind, what) for "X wants Y to V", "X wants to V", "X wants/asked for Y"."""
    match = _WISH.match(text)
    if not match:
        return None
    who, rest, how = match.group("who"), match.group("rest"), (match.group("how") or "").lower()
    if match.group("verb").lower().startswith("ask") and how:
        return who, {"that": "that", "us to": "to", "to": "to"}.get(how, "for"), rest
    if how == "to":  # "dispatchers want to drag a job" -> they can drag a job
        return who, "can", rest
    done = _WANTED_DONE.match(rest)
    if done:  # "Finance wants this finished before ..." -> this is finished before ...
        return who, "done", rest
    infinitive = re.match(r"^(?:(?P<whom>.+?)\s+)?to\s+(?P<action>[a-z][a-z-]*\b.*)$", rest)
    if infinitive and (infinitive.group("whom") is None or len(infinitive.group("whom").split()) <= 4):
        whom = infinitive.group("whom")
        return (whom or who), "can", infinitive.group("action")
    return who, "for", rest


def observable(sentence: str) -> list[str]:
    """What a reviewer observes once a requirement holds, as present-tense facts (one per instruction clause)."""
    text = bare(sentence)
    labelled = _CONSTRAINT_LABEL.match(text)
    if labelled:
        return [f"the {labelled.group(1).lower()} constraints hold: {labelled.group(2)}"]
    if _LABEL.match(text):  # "Reconciliation report: cards exported = ..." is checked as written
        return [text]
    leading = _LEADING_CONDITION.match(text)
    if leading and not _has_verb(leading.group("clause")):  # "After import, map ..." keeps its time
        facts = observable(leading.group("rest"))
        return [f"{leading.group('word').lower()} {leading.group('clause')}, {facts[0]}", *facts[1:]]
    if _is_instruction(text):
        return [_passive(clause) for clause in instruction_clauses(text)]
    wish = _wish(text)
    if wish:
        who, kind, what = wish
        if kind == "can":
            return [f"{lower_first(who)} can {what}"]
        if kind == "to":
            return [_passive(what) if _is_instruction(what) else lower_first(what)]
        if kind == "that":
            return [lower_first(what)]
        if kind == "done":
            parts = _WANTED_DONE.match(what)
            assert parts is not None
            be = "are" if is_plural(parts.group("np")) else "is"
            return [f"{lower_first(parts.group('np'))} {be} {parts.group('part')}{parts.group('tail')}"]
        return [f"{lower_first(who)} {'get' if is_plural(who) else 'gets'} {what}"]
    modal = _MODAL.match(text)
    if modal:
        return [lower_first(_modal_as_fact(modal.group("subject"), modal.group("modal"), modal.group("rest")))]
    return [lower_first(text)]


def standalone(sentence: str) -> str:
    """A sentence without its link to the one before it ("Finally, ", "Note that ")."""
    return _CONNECTIVE.sub("", sentence.strip())


def imperative(sentence: str) -> str:
    """A requirement as an instruction to carry out, keeping every word of substance."""
    text = standalone(bare(sentence))
    if _is_instruction(text):
        return upper_first(text)
    condition = split_condition(text)
    if condition is not None and _LEADING_CONDITION.match(text):
        outcome = condition.outcome
        step = outcome if _is_instruction(outcome) else _instruction(outcome)
        return f"{upper_first(condition.word.lower())} {condition.clause}, {lower_first(step)}"
    leading = _LEADING_CONDITION.match(text)
    if leading and not _has_verb(leading.group("clause")) and _is_instruction(leading.group("rest")):
        return upper_first(text)  # "After import, map each token ..." is already an instruction
    return _instruction(text)


def is_labelled(text: str) -> bool:
    """A spec line with a label ("Reconciliation report: cards exported = ..."), checked as written."""
    return bool(_LABEL.match(bare(text)))


def _noun_phrase(subject: str) -> bool:
    """Whether the words before a modal can be its subject: a noun phrase, not a clause or an aside."""
    padded = f" {subject} "
    return not (
        _FINITE.search(subject) or " that " in padded or "," in subject or ";" in subject or len(subject.split()) > 10
    )


def _instruction(text: str) -> str:
    labelled = _CONSTRAINT_LABEL.match(text)
    if labelled:
        return f"Respect the {labelled.group(1).lower()} constraints: {labelled.group(2)}"
    if _LABEL.match(text):
        return text
    wish = _wish(text)
    if wish:
        who, kind, what = wish
        if kind == "can":
            return f"Let {lower_first(who)} {what}"
        if kind == "to":
            return f"{upper_first(what)}, as {who} asked"
        if kind == "that":
            return f"Make sure {lower_first(what)}, as {who} asked"
        if kind == "done":
            return f"Have {what}, as {who} asked"
        return f"Provide {what}, as {who} asked"
    modal = _MODAL.match(text)
    you_can = _YOU_CAN.match(text)
    if modal:
        head, comma, last = modal.group("subject").rpartition(", ")
        if comma and last.lower() in ("you", "one", "we") and ";" not in head:
            # "To enable quotas, you must indicate usrquota": the purpose, then the instruction.
            rest = modal.group("rest")
            return f"{upper_first(head)}, {'do not ' + rest[4:] if rest.lower().startswith('not ') else rest}"
        if not _noun_phrase(modal.group("subject")):
            modal = None  # "The idea is that updates should be ...", "For big sites, X should ...": not its subject
    if not modal and you_can:  # "You can define rights ..." is the reader's option: "Define rights ..."
        return upper_first(you_can.group("rest"))
    if not modal:
        return f"Make sure {lower_first(text)}"
    subject, rest = lower_first(modal.group("subject")), modal.group("rest")
    if subject in ("you", "one", "we", "the administrator", "an administrator") and not rest.lower().startswith("be "):
        # "You have to indicate a time" is "Indicate a time"; "you must not share it", "Do not share it".
        if rest.lower().startswith("not "):
            return f"Do not {rest[4:]}"
        return upper_first(rest)
    rest = re.sub(r"\band (?:must|should|shall) not\b", "and not", rest)
    rest = re.sub(r"\band (?:must|should|shall)\b", "and", rest)
    lowered = rest.lower()
    if lowered.startswith(("never be ", "not be ")):
        return f"Never let {subject} be {rest.split(' ', 2)[2]}"
    if lowered.startswith(("never ", "not ")):
        return f"Never let {subject} {rest.split(' ', 1)[1]}"
    if lowered.startswith("be able to "):
        return f"Let {subject} {rest[len('be able to ') :]}"
    if lowered.startswith(("still be ", "always be ")):
        return f"Keep {subject} {rest.split(' ', 2)[2]}"
    if lowered.startswith("be "):
        complement = rest[3:]
        if _PARTICIPLE_END.search(_first_word(complement).lower()):
            return f"Have {subject} {complement}"
        return f"Make {subject} {complement}"
    return f"Make {subject} {rest}"
