"""Where a search looks: a filter is left out only when every passage of the index satisfies it, never when it
would exclude one (another workspace's or project's, or one deleted but not yet merged away); an exclusion only
when no passage holds what it excludes."""

from __future__ import annotations

from pathlib import Path

import tantivy

from groundwork.domain.evidence_search.analysis import analyze_clauses
from groundwork.domain.evidence_search.corpus import parse_query
from groundwork.search.corpus_index import CorpusIndex, IndexedPassage
from groundwork.search.corpus_search import SearchFilters, filter_clauses
from groundwork.search.passages import search_snapshot, snapshot_statistics


def _passage(seq: int, workspace: str, project: str, text: str) -> IndexedPassage:
    return IndexedPassage(
        seq, text, workspace, project, f"src_{seq}", f"srcv_{seq}", "paragraph@1", "text", passage_id=f"psg_{seq}"
    )


def _found(index: CorpusIndex, query: str, filters: SearchFilters) -> set[str]:
    snapshot = index.snapshot()
    assert snapshot is not None
    clauses = analyze_clauses(parse_query(query))
    page, passages = search_snapshot(snapshot, index.schema, clauses, filters, limit=50, after=None)
    assert page.total == len(passages)
    return {p.id for p in passages}


def test_a_workspace_or_project_filter_keeps_out_every_other_passage_and_is_dropped_only_when_it_admits_all(
    tmp_path: Path,
) -> None:
    index = CorpusIndex(tmp_path)
    generation = index.new_generation()
    generation.add_passages(
        [
            _passage(seq, "ws_a", "prj_a1" if seq % 2 else "prj_a2", f"Ledger {seq} of the heron depot")
            for seq in range(1, 9)
        ]
    )
    generation.commit(1)
    index.publish(generation)
    both_projects = SearchFilters("ws_a", ["prj_a1", "prj_a2"], ["prj_a1", "prj_a2"])
    one_project = SearchFilters("ws_a", ["prj_a1"], ["prj_a1", "prj_a2"])
    # One workspace in the whole index: its filter admits everything, and the answers are all of it.
    assert _found(index, "heron", both_projects) == {f"psg_{s}" for s in range(1, 9)}
    assert _found(index, "heron", one_project) == {f"psg_{s}" for s in range(1, 9, 2)}

    # Another workspace's passage arrives: the same searches must not see it.
    generation.add_passages([_passage(9, "ws_b", "prj_b1", "Ledger 9 of the heron depot")])
    generation.commit(2)
    assert _found(index, "heron", both_projects) == {f"psg_{s}" for s in range(1, 9)}
    assert _found(index, "heron", SearchFilters("ws_b", ["prj_b1"], ["prj_b1"])) == {"psg_9"}

    # Deleted but not merged away, it still counts: the filter stays, and the deleted passage is not found.
    generation.delete_version("srcv_9")
    generation.commit(3)
    assert _found(index, "heron", both_projects) == {f"psg_{s}" for s in range(1, 9)}
    assert _found(index, "heron", SearchFilters("ws_b", ["prj_b1"], ["prj_b1"])) == set()
    index.release_writer()


def test_an_exclusion_is_left_out_only_while_no_passage_holds_it_and_then_keeps_that_passage_out(
    tmp_path: Path,
) -> None:
    index = CorpusIndex(tmp_path)
    generation = index.new_generation()
    generation.add_passages([_passage(seq, "ws_a", "prj_a1", f"Heron depot note {seq}") for seq in range(1, 5)])
    generation.commit(1)
    index.publish(generation)
    snapshot = index.snapshot()
    assert snapshot is not None
    general_only = SearchFilters("ws_a", ["prj_a1"], classes=("general",), excluded_sources=("src_2", "src_404"))
    built = filter_clauses(index.schema, general_only, snapshot_statistics(snapshot))
    # Nothing is classed financial or staffing and no passage comes from src_404: those exclusions cost a lookup
    # in every segment and exclude nothing. src_2 has passages: its exclusion stays.
    assert [str(query) for _, query in built] == [str(tantivy.Query.term_query(index.schema, "source_id", "src_2"))]
    assert _found(index, "heron", general_only) == {"psg_1", "psg_3", "psg_4"}

    # A financial passage arrives: a caller without that class must not see it.
    financial = IndexedPassage(
        5, "Heron depot ledger", "ws_a", "prj_a1", "src_5", "srcv_5", "paragraph@1", "text", "financial", "psg_5"
    )
    generation.add_passages([financial])
    generation.commit(2)
    assert _found(index, "heron", general_only) == {"psg_1", "psg_3", "psg_4"}
    assert "psg_5" in _found(index, "heron", SearchFilters("ws_a", ["prj_a1"], classes=("general", "financial")))
    index.release_writer()
