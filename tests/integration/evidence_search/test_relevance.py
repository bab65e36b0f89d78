"""Document structure counts in ranking: a passage under a matching heading ranks above one that only
repeats a query word, and a document's title lifts its passages."""

from __future__ import annotations

from typing import Any

import httpx

from groundwork.demo.corpus import CORPUS_DIR
from tests.conftest import Workspace
from tests.integration.evidence_search.helpers import contribute, marked, search

RUNBOOK = (CORPUS_DIR / "PAY" / "runbooks" / "settlement-job-failures.md").read_text(encoding="utf-8")


async def test_the_paragraph_under_a_matching_heading_ranks_above_a_code_block_that_repeats_a_word(
    client: httpx.AsyncClient, workspace: Workspace, worker: Any
) -> None:
    key = await workspace.key(admin=True)
    await contribute(workspace, "ALPHA", "runbooks/settlement-job-failures.md", RUNBOOK)
    hits = (await search(client, workspace, key, "settlement timeout", limit=10))["data"]
    first = hits[0]
    assert first["section"] == "Runbook: nightly settlement job failures > Known failure: SFTP timeout"
    assert first["text"].startswith("Twice in the week of 8 June the job failed")
    code = next(i for i, h in enumerate(hits) if h["text"].startswith("```bash"))
    assert code > 0
    # Highlights stay in the text: the heading made it rank, the text shows what matched there (nothing).
    assert first["highlights"] == []


async def test_a_title_match_lifts_a_documents_passages_above_a_mere_mention(
    client: httpx.AsyncClient, workspace: Workspace, worker: Any
) -> None:
    key = await workspace.key(admin=True)
    # A mere mention holds one of the title's words in passing. (A passage whose prose holds every query word
    # close together outranks a title match once the index holds more than a few passages: BM25 weighs the
    # body's words by their rarity across every passage, and proximity adds to that; bench/ measures headings.)
    await contribute(
        workspace,
        "ALPHA",
        "narwhal.md",
        "# Narwhal tusk survey\n\nCounts are taken every quarter by the platform team.",
    )
    await contribute(workspace, "ALPHA", "notes.md", "# Weekly notes\n\nThe narwhal came up briefly; more later.")
    hits = (await search(client, workspace, key, "narwhal tusk"))["data"]
    assert [h["source"]["uri"] for h in hits] == ["narwhal.md", "notes.md"]


async def test_stopwords_and_question_words_neither_match_nor_highlight(
    client: httpx.AsyncClient, workspace: Workspace, worker: Any
) -> None:
    key = await workspace.key(admin=True)
    await contribute(
        workspace, "ALPHA", "sms.md", "# SMS\n\nNo messages are sent to customers between 21:00 and 08:00."
    )
    await contribute(workspace, "ALPHA", "grammar.md", "# Notes\n\nWhat can we do when it is the end of the day?")
    hits = (await search(client, workspace, key, "can we send messages to customers at night"))["data"]
    # The grammar-only passage shares "can", "we", "to", "at" with the question: none of them counts.
    assert [h["source"]["uri"] for h in hits] == ["sms.md"]
    # "sent" is the irregular past of the question's "send": it counted, so it is marked; "are" is not.
    assert marked(hits[0]) == ["messages", "sent", "customers"]


async def test_asking_for_one_form_of_an_irregular_verb_finds_another(
    client: httpx.AsyncClient, workspace: Workspace, worker: Any
) -> None:
    key = await workspace.key(admin=True)
    await contribute(workspace, "ALPHA", "evening.md", "# Rules\n\nThe evening message is sent at 19:00.")
    await contribute(workspace, "ALPHA", "bits.md", "# Builds\n\nOnly 64-bit builds are published.")
    hits = (await search(client, workspace, key, "who can send it"))["data"]
    assert [h["source"]["uri"] for h in hits] == ["evening.md"] and marked(hits[0]) == ["sent"]
    # "bit" in "32-bit" is not read as the past of "bite" (a form with a common sense of its own is not listed).
    assert (await search(client, workspace, key, "bitten"))["data"] == []


async def test_document_furniture_ranks_below_prose_that_matches_as_well(
    client: httpx.AsyncClient, workspace: Workspace, worker: Any
) -> None:
    key = await workspace.key(admin=True)
    await contribute(
        workspace,
        "ALPHA",
        "runbook.md",
        "# Settlement runbook\n\nOwner: Payments platform team. Pager: `payments-oncall`.\n\n"
        "## Contents\n\n3.1. Settlement file checks\n\n"
        "The payments team checks the settlement file before 06:00 and pages on-call if it is missing.",
    )
    hits = (await search(client, workspace, key, "payments settlement file"))["data"]
    texts = [h["text"] for h in hits]
    prose = next(i for i, t in enumerate(texts) if t.startswith("The payments team checks"))
    assert prose == 0
    # Still findable: furniture ranks lower, it is not hidden.
    assert any(t.startswith("Owner:") for t in texts) and any(t.startswith("3.1.") for t in texts)


async def test_a_phrase_and_a_required_stopword_still_count(
    client: httpx.AsyncClient, workspace: Workspace, worker: Any
) -> None:
    key = await workspace.key(admin=True)
    await contribute(workspace, "ALPHA", "a.md", "# A\n\nThe job does not retry on its own.")
    await contribute(workspace, "ALPHA", "b.md", "# B\n\nThe job retries on its own schedule.")
    phrase = (await search(client, workspace, key, '"does not retry" job'))["data"]
    assert [h["source"]["uri"] for h in phrase] == ["a.md", "b.md"][: len(phrase)] and phrase[0]["source"][
        "uri"
    ] == "a.md"
    assert "does not retry" in marked(phrase[0])
    required = (await search(client, workspace, key, "+not job"))["data"]
    assert [h["source"]["uri"] for h in required] == ["a.md"]


async def test_a_query_of_stopwords_only_still_answers(
    client: httpx.AsyncClient, workspace: Workspace, worker: Any
) -> None:
    key = await workspace.key(admin=True)
    await contribute(workspace, "ALPHA", "song.md", "# Lyrics\n\nTo be or not to be.")
    hits = (await search(client, workspace, key, "to be or not"))["data"]
    assert [h["source"]["uri"] for h in hits] == ["song.md"]
    assert set(marked(hits[0])) >= {"To", "be", "or", "not"}
