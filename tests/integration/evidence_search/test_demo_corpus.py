"""The demo corpus: every document ingests, seeding twice changes nothing, and a first search finds evidence."""

from __future__ import annotations

from typing import Any

import httpx

from groundwork.demo.corpus import CORPUS_DIR, seed_demo_corpus
from groundwork.demo.records import WORKSPACE_SLUG
from groundwork.demo.seed import seed_demo_data
from groundwork.persistence import db
from groundwork.platform.search_replica.corpus_projection import catch_up_index
from groundwork.search.corpus_index import corpus_index
from groundwork.services.tenancy import api_keys


async def test_demo_corpus_seeds_once_and_answers_a_first_search(
    client: httpx.AsyncClient, database: str, settings: Any
) -> None:
    await seed_demo_data()
    documents = [p for p in CORPUS_DIR.rglob("*") if p.is_file()]
    assert len(documents) >= 16 and any(p.suffix == ".pdf" for p in documents)
    first = await seed_demo_corpus()
    second = await seed_demo_corpus()
    assert first.count("failed") == 0 and first.count("skipped") == 0
    assert first.count("added") + first.count("unchanged") == len(documents)
    assert second.count("unchanged") == len(documents)
    # The seeder writes PostgreSQL only; the worker's follower indexes. Here the test plays that part.
    await catch_up_index(corpus_index())

    key = (await api_keys.issue_key(WORKSPACE_SLUG, "priya", ["context-engine:read"])).key
    portfolio = await db.fetchrow(
        "SELECT f.id FROM portfolios f JOIN workspaces w ON w.id = f.workspace_id WHERE w.slug = $1",
        WORKSPACE_SLUG,
    )
    assert portfolio is not None
    response = await client.post(
        "/api/v1/context/search",
        json={"subject_ref": {"type": "portfolio", "id": portfolio["id"]}, "query": "settlement report", "limit": 5},
        headers={"Authorization": f"Bearer {key}"},
    )
    assert response.status_code == 200, response.text
    hits = response.json()["data"]
    assert hits and any("settlement" in h["text"].lower() for h in hits)
    pdf = await client.post(
        "/api/v1/context/search",
        json={"subject_ref": {"type": "portfolio", "id": portfolio["id"]}, "query": '"OSTN15 grid"'},
        headers={"Authorization": f"Bearer {key}"},
    )
    [hit] = pdf.json()["data"]
    assert hit["source"]["kind"] == "pdf" and hit["page"] == 1

    jonas = (await api_keys.issue_key(WORKSPACE_SLUG, "jonas", ["context-engine:read"])).key
    hidden = await client.post(
        "/api/v1/context/search",
        json={"subject_ref": {"type": "portfolio", "id": portfolio["id"]}, "query": "settlement"},
        headers={"Authorization": f"Bearer {jonas}"},
    )
    assert hidden.status_code == 404  # a guest on CHK holds no context:read anywhere
