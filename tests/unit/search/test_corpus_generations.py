"""A corpus generation stores its passages in small document-store blocks and answers them exactly as stored."""

from __future__ import annotations

import json
from pathlib import Path

from groundwork.domain.evidence_search.analysis import analyze_clauses
from groundwork.domain.evidence_search.corpus import parse_query
from groundwork.search.corpus_index import CorpusIndex, IndexedPassage
from groundwork.search.corpus_search import SearchFilters
from groundwork.search.passages import search_snapshot


def _passage(seq: int, text: str, **extra: object) -> IndexedPassage:
    return IndexedPassage(
        seq,
        text,
        "ws_1",
        "prj_1",
        f"src_{seq}",
        f"srcv_{seq}",
        "paragraph@1",
        "markdown",
        passage_id=f"psg_{seq}",
        title=f"Runbook {seq}",
        uri=f"docs/runbook-{seq}.md",
        **extra,  # type: ignore[arg-type]
    )


def test_a_new_generation_writes_small_store_blocks_and_answers_passages_exactly_as_stored(tmp_path: Path) -> None:
    index = CorpusIndex(tmp_path)
    generation = index.new_generation()
    settings = json.loads((generation.path / "meta.json").read_text())["index_settings"]
    assert settings["docstore_blocksize"] == 4096

    passages = [
        _passage(1, "Settlement files land at 02:00 — über-late ones retry ✓", paragraph=3, char_start=10, char_end=66),
        _passage(2, "A settlement timeout pages the on-call.", page=7, section="Runbook > Known failure: SFTP timeout"),
    ]
    passages += [_passage(seq, f"Filler paragraph {seq} about settlement batches.") for seq in range(3, 400)]
    generation.add_passages(passages)
    generation.commit(5)
    index.publish(generation)
    # A commit keeps the settings: segments merged later are written with the same blocks.
    assert json.loads((generation.path / "meta.json").read_text())["index_settings"]["docstore_blocksize"] == 4096

    snapshot = index.snapshot()
    assert snapshot is not None and snapshot.applied_seq == 5
    clauses = analyze_clauses(parse_query("über timeout"))
    page, found = search_snapshot(
        snapshot, index.schema, clauses, SearchFilters("ws_1", ["prj_1"]), limit=10, after=None
    )
    by_id = {p.id: p for p in found}
    assert set(by_id) == {"psg_1", "psg_2"} and page.total == 2
    first, second = by_id["psg_1"], by_id["psg_2"]
    assert first.text == passages[0].text
    assert (first.paragraph, first.page, first.section, first.char_start, first.char_end) == (3, None, None, 10, 66)
    assert (first.source_title, first.source_uri, first.source_kind) == ("Runbook 1", "docs/runbook-1.md", "markdown")
    assert first.text[first.highlights[0][0] : first.highlights[0][1]] == "über"
    assert (second.page, second.paragraph, second.section) == (7, None, "Runbook > Known failure: SFTP timeout")
    assert (second.version_id, second.segmenter_version, second.provenance_quality) == (
        "srcv_2",
        "paragraph@1",
        "exact_text",
    )
    index.release_writer()


def test_releasing_the_writer_after_an_import_lets_its_merges_finish(tmp_path: Path) -> None:
    index = CorpusIndex(tmp_path)
    index.heap_bytes = 100_000_000
    generation = index.new_generation()
    words = [f"w{i}" for i in range(5000)]
    seq = 0
    for commit in range(8):  # eight commits: eight segments of one size, which Tantivy merges into one
        batch = []
        for _ in range(10_000):
            seq += 1
            batch.append(_passage(seq, " ".join(words[(seq * k) % 5000] for k in range(1, 40))))
        generation.add_passages(batch)
        generation.commit(commit + 1)
    index.publish(generation)
    index.release_writer()

    segments = json.loads((generation.path / "meta.json").read_text())["segments"]
    assert len(segments) == 1 and segments[0]["max_doc"] >= 80_000
