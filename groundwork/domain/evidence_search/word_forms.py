"""The other forms of an irregular English verb, asked for beside the form a question uses.

The Snowball stemmer joins "sends", "sending" and "send", but not "sent": a question asking how to "send" an SMS
never matches "the evening message is sent at 19:00". For a plain word that is a form of an irregular verb,
evidence search also ranks the verb's other forms, as if the question had asked for them too (query side only:
the index is unchanged). Verbs with a form that is also a common word of another sense are not listed ("bit"
as in 32-bit, "led", "mean", "shot", "sink", "feed", "ring", "tear", "left", "ground", "bound", "lay"), nor verbs
whose forms are stopwords ("be", "have", "do", "get").
"""

from __future__ import annotations

from functools import lru_cache

from groundwork.domain.evidence_search.analysis import AnalyzedClause, terms
from groundwork.domain.evidence_search.corpus import QueryClause

# One verb a line: its base form, simple past and past participle (a form said once when they are equal).
_IRREGULAR_VERBS = """
arise arose arisen | awake awoke awoken | beat beaten | become became | begin began begun
bend bent | bleed bled | blow blew blown | break broke broken | breed bred | bring brought
build built | burn burnt | buy bought | catch caught | choose chose chosen | cling clung | come came
creep crept | deal dealt | dig dug | draw drew drawn | dream dreamt | drink drank drunk | drive drove driven
eat ate eaten | fall fell fallen | feel felt | fight fought | find found | flee fled | fly flew flown
forbid forbade forbidden | forget forgot forgotten | forgive forgave forgiven | freeze froze frozen
give gave given | go went gone | grow grew grown | hang hung | hear heard | hide hid hidden | hold held
keep kept | kneel knelt | know knew known | leap leapt | learn learnt | lend lent
light lit | lose lost | make made | meet met | mislead misled | mistake mistook mistaken
override overrode overridden | overwrite overwrote overwritten | pay paid | rebuild rebuilt | rerun reran
rewrite rewrote rewritten | ride rode ridden | run ran | say said | see saw seen | seek sought
sell sold | send sent | shake shook shaken | shine shone | show shown | shrink shrank shrunk
sing sang sung | sit sat | sleep slept | slide slid | speak spoke spoken | spend spent
spin spun | stand stood | steal stole stolen | stick stuck | strike struck | swear swore sworn | sweep swept
swim swam swum | swing swung | take took taken | teach taught | tell told | think thought
throw threw thrown | understand understood | undo undid undone | uphold upheld | wake woke woken
wear wore worn | weep wept | win won | withdraw withdrew withdrawn | write wrote written
"""


@lru_cache(maxsize=1)
def _forms_by_word() -> dict[str, tuple[str, ...]]:
    """Every listed form, to the index terms of all its verb's forms."""
    found: dict[str, tuple[str, ...]] = {}
    for verb in _IRREGULAR_VERBS.replace("\n", "|").split("|"):
        forms = verb.split()
        stems = tuple(dict.fromkeys(stem for form in forms for stem in terms(form)))
        for form in forms:
            found[form] = stems
    return found


@lru_cache(maxsize=65_536)
def other_forms(word: str) -> tuple[str, ...]:
    """The index terms of the other forms of the irregular verb `word` is a form of (none if it is not one)."""
    stems = _forms_by_word().get(word.lower(), ())
    if not stems:
        return ()
    own = terms(word)
    return tuple(stem for stem in stems if stem not in own)


def with_other_forms(analyzed: list[AnalyzedClause]) -> list[AnalyzedClause]:
    """The clauses, then each plain word's other verb forms not asked already, as plain words of their own
    marked `alternative` (proximity pairs only the words asked)."""
    asked = {a.terms for a in analyzed if a.clause.occur == "should" and not a.clause.phrase}
    more: list[AnalyzedClause] = []
    for item in analyzed:
        if item.clause.occur != "should" or item.clause.phrase or len(item.terms) != 1:
            continue
        for stem in other_forms(item.clause.text):
            if (stem,) not in asked:
                asked.add((stem,))
                more.append(AnalyzedClause(QueryClause(stem, False, "should", item.clause.position), (stem,), True))
    return analyzed + more
