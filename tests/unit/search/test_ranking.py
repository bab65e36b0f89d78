"""Structure counts in proportion: a heading lifts a passage by the rarity of the content words it matches,
so a heading of stopwords and one frequent word never outranks prose matching two rarer words; holding more
of a question's words counts, however often one of them is repeated; proximity pairs neighbouring words, but
not a word in most passages of a large corpus."""

from __future__ import annotations

from pathlib import Path

from groundwork.domain.evidence_search.analysis import analyze_question
from groundwork.domain.evidence_search.corpus import parse_query
from groundwork.domain.evidence_search.word_forms import with_other_forms
from groundwork.search.corpus_index import CorpusIndex, IndexedPassage
from groundwork.search.corpus_search import SearchFilters
from groundwork.search.passages import GROUNDING_PRESENCE, search_snapshot
from groundwork.search.ranking import PRESENCE_WEIGHT, idf, proximity_clauses


def _passage(seq: int, text: str, section: str, *, opens_section: bool = False) -> IndexedPassage:
    return IndexedPassage(
        seq,
        text,
        "ws_a",
        "prj_a",
        f"src_{seq}",
        f"srcv_{seq}",
        "paragraph@1",
        "markdown",
        passage_id=f"psg_{seq}",
        title=section.split(" > ")[0],
        section=section,
        opens_section=opens_section,
    )


def _ranked(index: CorpusIndex, query: str, presence: float = PRESENCE_WEIGHT) -> list[str]:
    snapshot = index.snapshot()
    assert snapshot is not None
    _, passages = search_snapshot(
        snapshot,
        index.schema,
        analyze_question(parse_query(query)),
        SearchFilters("ws_a", ["prj_a"]),
        limit=50,
        after=None,
        presence=presence,
    )
    return [p.id for p in passages]


def test_a_heading_of_stopwords_and_one_frequent_word_ranks_below_prose_matching_two_rarer_words(
    tmp_path: Path,
) -> None:
    index = CorpusIndex(tmp_path)
    generation = index.new_generation()
    # "settlement" is in most passages; "file" and "late" in few.
    notes = [_passage(seq, f"The settlement ran on day {seq} as planned.", f"Note {seq}") for seq in range(1, 30)]
    heading = _passage(30, "The team meets on Mondays.", "When we run the settlement", opens_section=True)
    prose = _passage(31, "When the PSP file is late, the job waits an hour.", "Runbook")
    file_only = _passage(32, "The file arrived on time.", "Other")
    generation.add_passages([*notes, heading, prose, file_only])
    generation.commit(1)
    index.publish(generation)
    ranked = _ranked(index, "what happens when the settlement file is late")
    assert ranked[0] == "psg_31"
    # "when" and "we" count for nothing and "settlement" for little: even one rare word in prose ranks above.
    assert ranked.index("psg_30") > ranked.index("psg_32")


def test_a_passage_holding_both_words_of_a_question_outranks_one_repeating_a_single_word(tmp_path: Path) -> None:
    index = CorpusIndex(tmp_path)
    generation = index.new_generation()
    notes = [
        _passage(seq, f"Each disk in rack {seq} was checked on the morning round by the operator.", f"Note {seq}")
        for seq in range(1, 30)
    ]
    repeated = _passage(30, "Rebuild, rebuild and rebuild again.", "Glossary")
    # Both words, once each and too far apart for proximity, in a long passage: BM25 alone prefers the short
    # passage that says one of them three times.
    both = _passage(
        31,
        "The mirror holds two copies of every block. Once a new disk is in the rack and the operator on duty has"
        " checked its cabling, its serial number and its firmware against the list, the array can rebuild.",
        "Runbook",
    )
    generation.add_passages([*notes, repeated, both])
    generation.commit(1)
    index.publish(generation)
    assert _ranked(index, "rebuild the mirror") == ["psg_31", "psg_30"]
    # Grounding a draft asks with a work item's many words and ranks without the presence weight: BM25's order.
    assert _ranked(index, "rebuild the mirror", presence=GROUNDING_PRESENCE) == ["psg_30", "psg_31"]


class _Frequencies:
    """Document frequencies of a corpus of `total` passages (what `proximity_clauses` reads of the statistics)."""

    def __init__(self, total: int, docs: dict[str, int]) -> None:
        self.total_docs = total
        self._docs = docs

    def doc_freq(self, field: str, term: str) -> int:
        return self._docs.get(term, 1)

    def idf(self, field: str, terms: tuple[str, ...]) -> float:
        return sum(idf(self.doc_freq(field, t), self.total_docs) for t in terms)


def _pairs(tmp_path: Path, stats: _Frequencies, question: str) -> list[tuple[str, ...]]:
    clauses = analyze_question(parse_query(question))
    return [w.analyzed.terms for w in proximity_clauses(CorpusIndex(tmp_path).schema, clauses, stats)]  # type: ignore[arg-type]


def test_a_word_in_most_passages_of_a_large_corpus_is_paired_with_nothing(tmp_path: Path) -> None:
    large = _Frequencies(1_000_000, {"settlement": 600_000, "file": 500, "late": 800})
    assert _pairs(tmp_path, large, "when is the settlement file late") == [("file", "late")]


def test_in_a_small_corpus_every_neighbouring_pair_counts_however_frequent(tmp_path: Path) -> None:
    small = _Frequencies(100, {"settlement": 60, "file": 5, "late": 8})
    assert _pairs(tmp_path, small, "when is the settlement file late") == [("settlement", "file"), ("file", "late")]


def test_another_form_of_an_asked_verb_pairs_with_no_word_for_proximity(tmp_path: Path) -> None:
    stats = _Frequencies(100, {"send": 5, "sms": 5, "night": 5, "sent": 5})
    clauses = with_other_forms(analyze_question(parse_query("send SMS at night")))
    assert [a.terms for a in clauses][-1] == ("sent",)
    pairs = [w.analyzed.terms for w in proximity_clauses(CorpusIndex(tmp_path).schema, clauses, stats)]  # type: ignore[arg-type]
    assert pairs == [("send", "sms"), ("sms", "night")]
