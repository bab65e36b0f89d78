"""Keyset pagination visits every hit exactly once; beyond the reachable cap the answer says `truncated`."""

from __future__ import annotations

import base64
import json
from typing import Any

import httpx
import pytest

from groundwork.domain.evidence_search.corpus import MAX_REACHABLE_HITS
from groundwork.domain.pagination import encode_cursor
from tests.conftest import Workspace
from tests.integration.evidence_search.helpers import contribute, search


async def _pages(client: httpx.AsyncClient, workspace: Workspace, key: str, query: str, limit: int) -> list[dict]:
    pages, cursor = [], None
    while True:
        extra: dict[str, Any] = {"limit": limit} | ({"cursor": cursor} if cursor else {})
        answer = await search(client, workspace, key, query, **extra)
        pages.append(answer)
        cursor = answer["page"]["nextCursor"]
        assert (cursor is not None) == answer["page"]["hasMore"]
        if cursor is None:
            return pages


async def test_pagination_visits_every_hit_once_in_score_order(
    client: httpx.AsyncClient, workspace: Workspace, worker: Any
) -> None:
    key = await workspace.key(admin=True)
    # Different paragraph lengths and repetitions give different scores; the repeated ones tie.
    paragraphs = [f"Ledger entry {i}: " + "ledger " * (i % 5) + "reconciled against the settlement." for i in range(45)]
    await contribute(workspace, "ALPHA", "ledger.md", "\n\n".join(paragraphs))

    pages = await _pages(client, workspace, key, "ledger", limit=7)
    ids = [p["id"] for page in pages for p in page["data"]]
    assert len(pages) == 7 and len(ids) == 45 and len(set(ids)) == 45
    assert all(page["totalCount"] == 45 and page["truncated"] is False for page in pages)
    scores = [p["score"] for page in pages for p in page["data"]]
    assert scores == sorted(scores, reverse=True)
    assert sorted(p["text"] for page in pages for p in page["data"]) == sorted(paragraphs)

    other = await search(client, workspace, key, "settlement", limit=5)
    stale = await search(client, workspace, key, "ledger", cursor=other["page"]["nextCursor"], expect=400)
    assert stale["errors"][0]["path"] == "cursor"


@pytest.mark.parametrize(
    "forged",
    [{"q": 1e400}, {"s": 1e400}, {"s": -1e400}, {"s": 10**400}, {"q": True}, {"q": "7"}, {"o": 2.5}, {"s": None}],
)
async def test_a_forged_cursor_position_is_a_400_not_a_500(
    client: httpx.AsyncClient, workspace: Workspace, worker: Any, forged: dict[str, Any]
) -> None:
    key = await workspace.key(admin=True)
    await contribute(workspace, "ALPHA", "kites.md", "\n\n".join(f"Kite {i} flies." for i in range(5)))
    first = await search(client, workspace, key, "kite", limit=2)
    cursor = first["page"]["nextCursor"]
    position = json.loads(base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)))
    assert set(position) == {"f", "s", "q", "o"}
    # The fingerprint is the real one, so only the forged value can make the cursor invalid.
    answer = await search(client, workspace, key, "kite", limit=2, cursor=encode_cursor(position | forged), expect=400)
    assert answer["code"] == "invalid_request" and answer["errors"][0]["path"] == "cursor"


async def test_hits_beyond_the_cap_are_unreachable_and_reported_as_truncated(
    client: httpx.AsyncClient, workspace: Workspace, worker: Any
) -> None:
    key = await workspace.key(admin=True)
    count = MAX_REACHABLE_HITS + 5
    body = "\n\n".join(f"Anvil {i}." for i in range(count))
    await contribute(workspace, "BETA", "anvils.txt", body, kind="text")
    pages, cursor = [], None
    while True:
        answer = await search(
            client, workspace, key, "anvil", project="BETA", limit=100, **({"cursor": cursor} if cursor else {})
        )
        pages.append(answer)
        cursor = answer["page"]["nextCursor"]
        if cursor is None:
            break
    ids = [p["id"] for page in pages for p in page["data"]]
    assert len(ids) == MAX_REACHABLE_HITS == len(set(ids))
    # Counting stops at the reachable hits: the count says 1,000 and `truncated` says there are more.
    assert all(page["truncated"] is True and page["totalCount"] == MAX_REACHABLE_HITS for page in pages)
