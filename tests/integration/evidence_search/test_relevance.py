"""Document structure counts in ranking: a passage under a matching heading ranks above one that only
repeats a query word, and a document's title lifts its passages."""

from __future__ import annotations

from typing import Any

import httpx

from groundwork.demo.corpus import CORPUS_DIR
from tests.conftest import Workspace
from tests.integration.evidence_search.helpers import contribute, search

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
    await contribute(
        workspace,
        "ALPHA",
        "vault.md",
        "# Card vault rotation\n\nKeys are replaced every quarter by the platform team.",
    )
    await contribute(workspace, "ALPHA", "notes.md", "# Weekly notes\n\nThe vault came up briefly; rotation later.")
    hits = (await search(client, workspace, key, "vault rotation"))["data"]
    assert [h["source"]["uri"] for h in hits] == ["vault.md", "notes.md"]
