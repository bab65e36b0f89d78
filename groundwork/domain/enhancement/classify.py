"""What an evidence sentence is: requirement, constraint, risk, decision, dependency, context or question.

The extractive generator draws each field from the classes that belong in it (requirements never
list risks, risks never list requirements), so every sentence is classified once, by ordered rules:
the first rule that matches decides. The rules read the sentence itself and, when it says nothing
decisive, the section it came from (the work item field, or the document heading above it).

- requirement: a behaviour or capability to deliver, including instructions and acceptance
  statements ("Verify the signature on every notification.");
- constraint: a bound on the solution: a quantified target or limit, a deadline, a prohibition
  ("Alerts must fire within 60 s.");
- risk: what may go wrong, is unknown, exposed or out of scope ("Export speed is unknown.");
- decision: a choice made or agreed ("Trading agreed we honour the old price.");
- dependency: something needed from outside the team or from other work ("This depends on the gift
  card provider's API.");
- context: the situation today: background, measurements, causes, action items ("Dispatchers share
  three accounts today.");
- question: a point left open to confirm or resolve ("Confirm with the data warehouse team that ...").
"""

from __future__ import annotations

import functools
import re

CLASSES = ("requirement", "constraint", "risk", "decision", "dependency", "context", "question")


def _any(*patterns: str) -> re.Pattern[str]:
    return re.compile("|".join(f"(?:{p})" for p in patterns), re.IGNORECASE)


# An explicit label at the start of the sentence ("Decision: ...", "Hard: ...") says it all.
_LABELS: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"^(?:decisions?|agreed|status:\s*approved)\b", re.I), "decision"),
    (re.compile(r"^(?:risks?|concern)\s*:", re.I), "risk"),
    (re.compile(r"^(?:open )?questions?\s*:", re.I), "question"),
    (re.compile(r"^(?:dependency|dependencies|depends on)\s*:", re.I), "dependency"),
    (re.compile(r"^(?:constraints?|hard|soft|limits?)\s*:", re.I), "constraint"),
    (re.compile(r"^(?:requirements?|must have)\s*:", re.I), "requirement"),
    # Meeting action items ("Action: Priya to add ...", "Maya: send ...") are project management, not scope.
    (re.compile(r"^(?:actions?\s*:|[A-Z][a-z]+:\s+[a-z])"), "context"),
)
_ACTION_ITEM = re.compile(r"^([A-Z][a-z]+) to (?!the\b|an?\b)[a-z]+\b")
_QUESTION = _any(
    r"\?\s*$",
    r"^confirm\b",
    r"\bwhether\b",
    r"\b(?:tbd|to be (?:decided|confirmed)|open question|unclear whether)\b",
    r"\bsees it as\b",
)
_DECISION = _any(
    # A design document's "we <do X>" states the approach taken (not "we need", "we must").
    r"^we (?!need|must|should|want|have to|cannot|can't|don't|do not|will need)\w+\b",
    # "agreed" records a decision, unless it is still to come ("until the rules are agreed", "not agreed").
    r"(?<!not )(?<!are )(?<!is )(?<!be )(?<!the )\bagreed\b",
    r"\b(?:decided|decision|chose|chosen|approved|proposed)\b",
    r"\bwe (?:are using|will use|use|have chosen|went with)\b",
)
# Scope creep first: such a sentence may also name a dependency, but its point is the scope.
_SCOPE_RISK = _any(
    r"\b(?:not|none of \w+ (?:are|is)) in the statement of work\b",
    r"\boutside the [\w\s-]*statement of work\b",
    r"\bnot (?:part of|in) the (?:agreed |current )?(?:[\w-]+ )?scope\b",
    r"\balso asked for\b",
    r"\bquick add-on\b",
    r"\bcalled \W?small\b",
)
_RISK = _any(
    r"\brisks?\b|\brisky\b",
    r"^if\b[^,;]*\b(?:does not|do not|doesn't|don't|is not|are not|no longer)\b",
    r"\bnot enough\b|\bhas no \w+ key\b|\bships alone\b",
    r"\bunknown\b|\bnot (?:been )?(?:[\w-]+-)?(?:measured|tested|agreed|confirmed)\b",
    r"\bleak(?:ed|s)?\b|\bexposed\b|\bturned up in\b|\bfound in\b|\bbreach\w*\b|\bvulnerab\w*\b",
    r"\banyone who\b|\bplain (?:text|environment variables?)\b|\bshared (?:username and )?password\b",
    r"\bfailed\b|\b(?:does not|doesn't) (?:retry|scale|recover)\b",
    r"\b(?:lose|loses)\b(?! no\b)|\blost (?:access|data|messages|orders)\b|\bis gone\b|\bdata loss\b",
    r"\bhides (?:how|what|whether|the)\b|\bstays valid until\b|\bcannot be \w+ while\b",
    r"\bfinding\b",
)
_DEPENDENCY = _any(
    r"\bdepends? on\b|\bdependent on\b|\bblocked (?:by|on)\b|\bwaiting (?:for|on)\b",
    r"\bneeds? [^.;]{0,80}\bfrom\b",
    r"\b(?:requires?|needs?) [^.;]{0,80}\bto be (?:finished|done|completed?|delivered|signed|in place)\b",
    r"\b(?:vendor|agency|auditor|provider|supplier|procurement)\b[^.;]*\b(?:needs?|requires?|pushes|controls?)\b",
    r"\bcontrols that\b|\bprocurement\b|\bcan give us\b|\bwill (?:send|give|provide|deliver)\b",
    r"\b(?:maintained|owned|provided|supplied|controlled) by\b",
    r"\buntil [^.;]*\b(?:agreed|signed|confirmed|delivered|approved) (?:with|by)\b",
    r"\bcannot (?!be\b)\w+(?: \w+)? without\b",
)
# A request left open for days is a stalled dependency: a risk to the date.
_STALLED = re.compile(r"\bopen for \w+ (?:days|weeks)\b", re.I)
# A sentence opening with a verb in the imperative is an instruction: a requirement of the work.
IMPERATIVE_VERBS = frozenset(
    """accept add adjust append agree alert allow analyse analyze apply archive ask assign audit avoid backfill block
    book build bulk-migrate bump call cancel cap capture change check choose clean clear close collect compare
    complete compress configure confirm connect convert copy correct cover create cut debug decommission define
    delete deliver deploy describe design detect disable display do document download drop emit enable encrypt
    edit ensure escalate estimate evaluate exclude expose export extend extract feed fetch find fix flag follow
    generate give group handle hide identify implement import improve include inform inject inspect install
    integrate introduce investigate isolate keep kill label let limit link list load lock log look make map mark
    measure merge migrate mirror modify monitor move notify offer open page parse pause persist pick ping plan poll
    prepare prevent prioritise produce profile provide publish purge push put queue raise re-price read reboot rebuild
    record reduce refresh register reject release reload remove rename render repeat replace replay report
    request require rerun re-run reset resolve restart restore retain retry return reuse review revoke rewrite
    roll rotate route run save scale scan schedule secure select send serve set share show shut sign simplify
    sort specify split start stop store stream subscribe support switch sync take tell test throttle track
    transform trigger trim turn uncomment unify update upgrade upload use validate verify wait warn watch
    write""".split()
)
# After a conditional clause, a verb followed by one of these is an instruction ("..., reject the file").
_DETERMINERS = frozenset("the a an it its them their this that these those all each every both any one".split())
_NOT_IMPERATIVE_NEXT = frozenset("is are was were has have had must should can will may runs".split())
_CONDITIONAL_INSTRUCTION = re.compile(
    r"^(?:if|when|whenever|once|after|before|while|until|unless)\b[^,]+,\s*(?P<verb>[a-z-]+)\s+(?P<next>[a-z`]+)", re.I
)
_MODAL = re.compile(r"\b(?:must|shall|should)\b", re.I)
_OBLIGATION = re.compile(r"\b(?:must|shall)\b", re.I)
_STRONG_PROHIBITION = re.compile(r"\b(?:must|may|shall|should) (?:never|not)\b", re.I)
_IF_OUTCOME = re.compile(r"^(?:if|unless)\b[^,]+,\s*\S+", re.I)
_PROHIBITION_FIRST = re.compile(r"^(?:never|do not|don't)\b", re.I)
_CONTEXT = _any(
    r"\btoday\b(?!'s)|\bcurrently\b|\bcurrent\b|\bat the moment\b|\balready\b",
    r"\bby hand\b|\bbecause\b|\bfield data\b|\bprofiling\b|\blegacy\b",
    r"\b(?:is|takes) \W*p\d\d\b|\btakes (?:about |around |roughly |~)?\d",
    r"\b(?:confirmed|walked through|tested|logged)\b",
)
_CONSTRAINT = _any(
    r"\b(?:never|must not|may not|mustn't|should not|shouldn't|do not|don't|cannot|can't)\b",
    r"^(?:no|nothing)\b|\bnothing\b[^.;]*\bmay\b|\bno further\b",
    r"\bonly (?:ever|in|after|on|if)\b|\b(?:exists?|holds?|keeps?|hold) only\b|\b(?:is|are) only\b",
    r"\bonly (?!when\b|if\b)\w+s\b",
    r"\b(?:within|under|below|less than|more than|at most|at least|no more than|up to|not exceed)\s+"
    r"(?:about |around |~)?[£$€]?\d",
    r"\bat (?:most|least)\b|\bcapped at\b|\blimited to\b|\blimit of\b|\bmaximum\b|\bminimum\b",
    r"(?:<=|>=|≤|≥|<|>)\s*\d",
    r"\bp\d\d\b|\bpercentile\b|\btarget of\b",
    r"\bby \d{1,2}:\d{2}\b|\bbefore (?:the )?\W*\d",
    r"\bbefore the [\w\s-]*(?:re-assessment|re-audit|freeze|release|launch)\b",
    r"\b(?:per second|per hour|requests/s|messages/s)\b|\d\w* messages a month\b|\bsize for\b",
    r"\b(?:kept|retained|valid|live|lasts?) (?:for )?(?:\d+|one|two|twelve)"
    r" (?:seconds?|minutes?|hours?|days?|months?)\b",
)
_REQUIREMENT = _any(
    r"\b(?:must|shall|should|needs? to|has to|have to|(?:is|are) required to)\b",
    r"\b(?:wants?|asked (?:us )?(?:that|for|to)|asks (?:us )?(?:that|for|to)|would like)\b",
    r"\bidempotent\b|\bresumable\b|\bthe (?:aim|goal|objective) is to\b",
    # A component doing something: "the importer rejects rows", "each move re-sequences the routes".
    r"^(?:[\w`'-]+ ){1,4}(?:rejects|accepts|returns|creates|updates|lists|generates|skips|flags|validates"
    r"|recalculates|re-checks|re-sequences|scans|deduplicates|hides?|shows|sends|exchanges|publishes|attaches"
    r"|stores|writes)\b",
    r"\bcan(?: be)? \w+",
    r"\b(?:is|are) allowed\b",
    # Specifications use the present passive for behaviour: "is validated", "are written", "is rejected".
    r"\b(?:is|are) (?:\w+ly )?[\w-]+(?:ed|en|wn)\b(?! (?:in|on|at) (?:the )?\d)",
)
# Where the sentence came from, when it says nothing decisive itself: a work item field or a heading.
_SECTION_PRIORS: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"\bout of scope\b", re.I), "context"),
    (re.compile(r"\brisks?\b|\bmitigation|\bknown failure|\bthreat", re.I), "risk"),
    (re.compile(r"\bopen questions?\b|\bquestions?\b", re.I), "question"),
    (re.compile(r"\bdecisions?\b|\bapproach\b|\bdesign[_ ]notes\b", re.I), "decision"),
    (re.compile(r"\bdependenc|\binputs?\b|\bprerequisites?\b", re.I), "dependency"),
    (re.compile(r"\bconstraints?\b|\bperformance\b|\bthroughput\b|\blimits?\b|\bbudget\b", re.I), "constraint"),
    (
        re.compile(
            r"\brequirements?\b|\bacceptance[_ ]criteria\b|\btest[_ ]plan\b|\bimplementation[_ ]plan\b|\bbehaviou?r\b"
            r"|\brules?\b|\bvalidation\b|\bstorage\b|\boutput\b|\brequest\b|\bscope\b|\bintegration\b"
            r"|\bgoal\b",
            re.I,
        ),
        "requirement",
    ),
)
# Sections that describe the situation rather than the work: their sentences are context unless they say otherwise.
_CONTEXT_SECTION = re.compile(r"\bproblem\b|\bsymptom\b|\bwhy it happens\b|\bcauses?\b|\bsource\b|\bbackground\b", re.I)


def section_prior(section: str | None) -> str | None:
    """The class a section (a work item field, or the heading path above a passage) suggests, if any."""
    if not section:
        return None
    # The innermost heading speaks for the sentence: "Spec > Risks" is a risk section.
    innermost = section.rsplit(">", 1)[-1].replace("_", " ")
    for pattern, label in _SECTION_PRIORS:
        if pattern.search(innermost):
            return label
    return None


def is_instruction(text: str) -> bool:
    """Whether a sentence opens with a verb in the imperative ("Replace ...", "Never store ...")."""
    words = re.findall(r"[A-Za-z][A-Za-z-]*", text)
    if words and words[0].lower() == "never":
        words = words[1:]
    if len(words) < 2:
        return bool(words) and words[0].lower() in IMPERATIVE_VERBS
    first, second = words[0].lower(), words[1].lower()
    if first not in IMPERATIVE_VERBS or second in _NOT_IMPERATIVE_NEXT:
        return False
    # "Export runs on the host": a noun followed by its verb, not an instruction.
    if second.endswith("s") and (second[:-1] in IMPERATIVE_VERBS or second[:-2] in IMPERATIVE_VERBS):
        return False
    # "Plan generation ... must finish" opens with a noun: a later modal gives the subject away.
    return second in _DETERMINERS or not _MODAL.search(text)


@functools.lru_cache(maxsize=65536)
def classify(sentence: str, section: str | None = None) -> str:
    """The class of an evidence sentence (one of `CLASSES`), given the section it came from (memoised: pure)."""
    text = sentence.strip().strip("*_ ")
    for pattern, label in _LABELS:
        if pattern.search(text):
            return label
    action_item = _ACTION_ITEM.match(text)
    if action_item and action_item.group(1).lower() not in IMPERATIVE_VERBS:
        return "context"
    if _QUESTION.search(text):
        return "question"
    if _DECISION.search(text):
        return "decision"
    if _SCOPE_RISK.search(text) or _RISK.search(text):
        return "risk"
    if _DEPENDENCY.search(text):
        return "dependency"
    if _STALLED.search(text):
        return "risk"
    if _PROHIBITION_FIRST.search(text):
        return "constraint"
    conditional = _CONDITIONAL_INSTRUCTION.match(text)
    if is_instruction(text) or (
        conditional
        and conditional.group("verb").lower() in IMPERATIVE_VERBS
        and conditional.group("next").lower() in _DETERMINERS
    ):
        return "requirement"
    if _STRONG_PROHIBITION.search(text):
        return "constraint"
    if _OBLIGATION.search(text):  # "must"/"shall" states what the work must meet, never background
        return "constraint" if _CONSTRAINT.search(text) else "requirement"
    if _IF_OUTCOME.match(text):  # "If the PSP is unavailable, checkout continues without ..." specifies behaviour
        return "requirement"
    if _CONTEXT.search(text) or (section and _CONTEXT_SECTION.search(section.rsplit(">", 1)[-1])):
        return "context"
    if _CONSTRAINT.search(text):
        return "constraint"
    prior = section_prior(section)
    if _REQUIREMENT.search(text):
        # A requirement-looking sentence under a risk heading is a risk ("the shared password stays valid").
        return prior if prior in ("risk", "decision", "dependency", "question") else "requirement"
    return prior or "context"
