"""Keyset pagination visits every hit exactly once; beyond the reachable cap the answer says `truncated`."""

from __future__ import annotations

from typing import Any

import httpx

from groundwork.domain.corpus import MAX_REACHABLE_HITS
from tests.conftest import Workspace
from tests.integration.search.helpers import contribute, search


async def _pages(client: httpx.AsyncClient, workspace: Workspace, key: str, query: str, limit: int) -> list[dict]:
    pages, cursor = [], None
    while True:
        extra: dict[str, Any] = {"limit": limit} | ({"cursor": cursor} if cursor else {})
        answer = await search(client, workspace, key, query, **extra)
        pages.append(answer)
        cursor = answer["page"]["next_cursor"]
        assert (cursor is not None) == answer["page"]["has_more"]
        if cursor is None:
            return pages


async def test_pagination_visits_every_hit_once_in_score_order(
    client: httpx.AsyncClient, workspace: Workspace, worker: Any
) -> None:
    key = await workspace.key(admin=True)
    # Different paragraph lengths and repetitions give different scores; the repeated ones tie.
    paragraphs = [f"Ledger entry {i}: " + "ledger " * (i % 5) + "reconciled against the settlement." for i in range(45)]
    await contribute(client, workspace, key, "ALPHA", "ledger.md", "\n\n".join(paragraphs))

    pages = await _pages(client, workspace, key, "ledger", limit=7)
    ids = [p["id"] for page in pages for p in page["data"]]
    assert len(pages) == 7 and len(ids) == 45 and len(set(ids)) == 45
    assert all(page["totalCount"] == 45 and page["truncated"] is False for page in pages)
    scores = [p["score"] for page in pages for p in page["data"]]
    assert scores == sorted(scores, reverse=True)
    assert sorted(p["text"] for page in pages for p in page["data"]) == sorted(paragraphs)

    other = await search(client, workspace, key, "settlement", limit=5)
    stale = await search(client, workspace, key, "ledger", cursor=other["page"]["next_cursor"], expect=400)
    assert stale["errors"][0]["path"] == "cursor"


async def test_hits_beyond_the_cap_are_unreachable_and_reported_as_truncated(
    client: httpx.AsyncClient, workspace: Workspace, worker: Any
) -> None:
    key = await workspace.key(admin=True)
    count = MAX_REACHABLE_HITS + 5
    body = "\n\n".join(f"Anvil {i}." for i in range(count))
    await contribute(client, workspace, key, "BETA", "anvils.txt", body, kind="text")
    pages, cursor = [], None
    while True:
        answer = await search(
            client, workspace, key, "anvil", project="BETA", limit=100, **({"cursor": cursor} if cursor else {})
        )
        pages.append(answer)
        cursor = answer["page"]["next_cursor"]
        if cursor is None:
            break
    ids = [p["id"] for page in pages for p in page["data"]]
    assert len(ids) == MAX_REACHABLE_HITS == len(set(ids))
    assert all(page["truncated"] is True and page["totalCount"] == count for page in pages)
