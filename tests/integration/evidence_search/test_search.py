"""services/evidence_search/search, after ingest: exact passages with page, paragraph, span and highlights; versions;
errors."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from groundwork.demo.pdf import build_pdf
from groundwork.persistence import db
from groundwork.search import passages
from groundwork.search.passages import project_passages
from tests.conftest import Workspace, idem
from tests.integration.evidence_search.helpers import contribute, marked, search

RUNBOOK = """# Settlement runbook

The settlement import runs at 02:00 and downloads the PSP report over SFTP.

## Failures

An SFTP banner timeout means the PSP rotated its host keys; rerun the import after 02:15.
"""

PDF_PAGES = [
    ["FleetView data migration plan.", "Data is exported one calendar month at a time to Parquet files."],
    ["Coordinates are converted from OSGB36 with the OSTN15 grid.", "Vehicle identifiers were reused in 2025."],
]
PASSAGE_KEYS = {
    "id", "projectId", "source", "page", "paragraph", "section", "span", "text", "score", "highlights",
    "provenanceQuality", "segmenterVersion",
}  # fmt: skip


async def test_ingested_markdown_is_found_as_the_exact_passage(
    client: httpx.AsyncClient, workspace: Workspace, worker: Any
) -> None:
    key = await workspace.key(admin=True)
    added = await contribute(workspace, "ALPHA", "runbooks/settlement.md", RUNBOOK)
    assert added["outcome"] == "added" and added["version"]["status"] == "active"
    assert added["version"]["passageCount"] == 2 and added["source"]["title"] == "Settlement runbook"

    answer = await search(client, workspace, key, "banner timeouts")
    [hit] = answer["data"]
    assert hit["text"] == "An SFTP banner timeout means the PSP rotated its host keys; rerun the import after 02:15."
    assert (hit["page"], hit["paragraph"], hit["section"]) == (None, 2, "Settlement runbook > Failures")
    assert RUNBOOK[hit["span"]["start"] : hit["span"]["end"]] == hit["text"]
    assert marked(hit) == ["banner", "timeout"]
    assert hit["provenanceQuality"] == "exact_text" and hit["segmenterVersion"] == "paragraph@1"
    assert hit["source"] == {
        "id": added["source"]["id"],
        "title": "Settlement runbook",
        "uri": "runbooks/settlement.md",
        "kind": "markdown",
        "versionId": added["version"]["id"],
    }
    assert hit["id"].startswith("psg_") and hit["score"] > 0


async def test_pdf_passages_carry_their_page_and_paragraph(
    client: httpx.AsyncClient, workspace: Workspace, worker: Any
) -> None:
    key = await workspace.key(admin=True)
    pdf = build_pdf(PDF_PAGES, title="FleetView migration")
    added = await contribute(workspace, "ALPHA", "plans/fleetview.pdf", pdf, kind="pdf")
    assert added["source"]["title"] == "FleetView migration"

    [hit] = (await search(client, workspace, key, '"OSTN15 grid" coordinates'))["data"]
    assert (hit["page"], hit["paragraph"]) == (2, 1)
    assert hit["text"] == "Coordinates are converted from OSGB36 with the OSTN15 grid."
    assert marked(hit) == ["Coordinates", "OSTN15 grid"]
    assert hit["provenanceQuality"] == "extracted"
    [first_page] = (await search(client, workspace, key, "Parquet"))["data"]
    assert (first_page["page"], first_page["paragraph"]) == (1, 2)


async def test_a_new_version_replaces_the_old_passages_and_identical_content_is_a_no_op(
    client: httpx.AsyncClient, workspace: Workspace, worker: Any
) -> None:
    key = await workspace.key(admin=True)
    first = await contribute(workspace, "ALPHA", "vault.md", "The vault key rotates quarterly.")
    assert [p["text"] for p in (await search(client, workspace, key, "quarterly"))["data"]] == [
        "The vault key rotates quarterly."
    ]

    second = await contribute(workspace, "ALPHA", "vault.md", "The vault key rotates monthly.")
    assert second["source"]["id"] == first["source"]["id"]
    assert second["version"]["id"] != first["version"]["id"]
    assert second["source"]["activeVersionId"] == second["version"]["id"]
    assert (await search(client, workspace, key, "quarterly"))["data"] == []
    [hit] = (await search(client, workspace, key, "vault rotates"))["data"]
    assert hit["text"] == "The vault key rotates monthly." and hit["source"]["versionId"] == second["version"]["id"]

    again = await contribute(workspace, "ALPHA", "vault.md", "The vault key rotates monthly.", expect=200)
    assert again["outcome"] == "unchanged" and again["version"]["id"] == second["version"]["id"]
    statuses = await db.fetch(
        "SELECT status FROM corpus_source_versions WHERE source_id = $1 ORDER BY seq", first["source"]["id"]
    )
    assert [r["status"] for r in statuses] == ["inactive", "active"]


async def test_the_answer_holds_stored_passages_and_nothing_synthesized(
    client: httpx.AsyncClient, workspace: Workspace, worker: Any
) -> None:
    key = await workspace.key(admin=True)
    await contribute(workspace, "ALPHA", "runbooks/settlement.md", RUNBOOK)
    answer = await search(client, workspace, key, "settlement OR import PSP")
    assert set(answer) == {"data", "page", "truncated", "totalCount"}
    assert set(answer["page"]) == {"nextCursor", "hasMore", "next_cursor", "has_more"}
    assert answer["data"], "expected passages"
    stored = {
        r["id"]: r["text"]
        for r in await db.fetch(
            "SELECT id, text FROM corpus_passages WHERE project_id = $1", workspace.projects["ALPHA"]
        )
    }
    for passage in answer["data"]:
        assert set(passage) == PASSAGE_KEYS
        assert passage["text"] == stored[passage["id"]]
        assert passage["text"] in RUNBOOK
        assert RUNBOOK[passage["span"]["start"] : passage["span"]["end"]] == passage["text"]


async def test_malformed_queries_and_requests_are_400_never_500(
    client: httpx.AsyncClient, workspace: Workspace, worker: Any
) -> None:
    key = await workspace.key(admin=True)
    unclosed = await search(client, workspace, key, 'refund "captured amount', expect=400)
    assert unclosed["code"] == "invalid_query" and unclosed["position"] == 7
    assert unclosed["errors"] == [{"path": "query", "message": "unclosed phrase: the closing quote is missing"}]
    for query, position in [("+", 0), ("a -", 2), ("-only", 0), ("!!! ???", 0), ("", 0)]:
        answer = await search(client, workspace, key, query, expect=400)
        assert (answer["code"], answer["position"]) == ("invalid_query", position), query

    wrong_type = await search(client, workspace, key, "x", subject=("team", "t1"), expect=400)
    assert wrong_type["code"] == "invalid_request" and wrong_type["errors"][0]["path"] == "subject_ref.type"
    assert (await search(client, workspace, key, "x", subject=("project", "prj_nope"), expect=404))[
        "code"
    ] == "not_found"
    assert (await search(client, workspace, key, "x", cursor="garbage!", expect=400))["errors"][0]["path"] == "cursor"
    assert (await search(client, workspace, key, "x", limit=0, expect=400))["errors"][0]["path"] == "limit"
    assert (await search(client, workspace, key, "x", kind="docx", expect=400))["errors"][0]["path"] == "kind"
    unknown = await search(client, workspace, key, "x", colour="blue", expect=400)
    assert unknown["code"] == "invalid_request"
    nul = await search(client, workspace, key, "x", subject=("project", "prj_\u0000"), expect=400)
    assert nul["errors"][0]["path"] == "subject_ref.id"
    too_long = await search(client, workspace, key, "word " * 300, expect=400)
    assert too_long["errors"][0]["path"] == "query"
    not_json = await client.post(
        "/api/v1/context/search",
        content=b"{nope",
        headers=workspace.headers(key, **{"content-type": "application/json"}),
    )
    assert not_json.status_code == 400


async def test_search_needs_no_idempotency_key_but_contributing_does(
    client: httpx.AsyncClient, workspace: Workspace, worker: Any
) -> None:
    key = await workspace.key(admin=True)
    assert (await search(client, workspace, key, "anything"))["data"] == []
    response = await workspace.internal.post(
        "/internal/v1/corpus/sources",
        json={"project_id": workspace.projects["ALPHA"], "uri": "a.txt", "kind": "text", "content": "x"},
        headers=workspace.headers(await workspace.provider_key()),
    )
    assert response.status_code == 400 and response.json()["code"] == "idempotency_key_required"


async def test_contributions_are_validated_field_by_field(
    client: httpx.AsyncClient, workspace: Workspace, worker: Any
) -> None:
    key = await workspace.provider_key()

    async def post(body: dict[str, Any]) -> httpx.Response:
        return await workspace.internal.post(
            "/internal/v1/corpus/sources", json=body, headers=workspace.headers(key, **idem())
        )

    base = {"project_id": workspace.projects["ALPHA"], "uri": "doc.md", "kind": "markdown"}
    cases = [
        ({**base, "kind": "docx", "content": "x"}, 422, "kind"),
        ({**base, "content": "x", "content_base64": "eA=="}, 400, "content"),
        ({**base}, 400, "content"),
        ({**base, "content_base64": "not base64!"}, 400, "content_base64"),
        ({**base, "kind": "pdf", "content": "x"}, 400, "content_base64"),
        ({**base, "kind": "pdf", "content_base64": "JVBERi0xLjQgYnJva2Vu"}, 422, "content"),
        ({**base, "content": "x", "provenance_quality": "perfect"}, 422, "provenance_quality"),
        (
            {**base, "kind": "html", "content": "<p>x</p>", "provenance_quality": "exact_text"},
            422,
            "provenance_quality",
        ),
        ({**base, "uri": "", "content": "x"}, 422, "uri"),
        ({**base, "uri": "a\u0000b", "content": "x"}, 422, "uri"),
        ({**base, "title": "t\u0000", "content": "x"}, 422, "title"),
        ({**base, "content": "nul \u0000 inside"}, 422, "content"),
        ({**base, "content": "x", "classification": "secret"}, 422, "classification"),
    ]
    for body, status, path in cases:
        response = await post(body)
        assert response.status_code == status, (body, response.text)
        assert response.json()["errors"][0]["path"] == path, (body, response.text)

    reader = await workspace.provider_key("reader", ["context-engine:read"])
    denied = await workspace.internal.post(
        "/internal/v1/corpus/sources", json={**base, "content": "x"}, headers=workspace.headers(reader, **idem())
    )
    assert denied.status_code == 403 and denied.json()["required_scope"] == "context-engine:contribute"


async def test_grounding_passages_are_the_searched_passages_without_highlights(
    client: httpx.AsyncClient, workspace: Workspace, worker: Any
) -> None:
    key = await workspace.key(admin=True)
    await contribute(workspace, "ALPHA", "runbooks/settlement.md", RUNBOOK)
    searched = (await search(client, workspace, key, "SFTP OR banner OR timeout"))["data"]
    assert searched and all(hit["highlights"] for hit in searched)

    grounding = await project_passages(workspace.id, workspace.projects["ALPHA"], "SFTP banner timeout")
    assert [p.id for p in grounding] == [hit["id"] for hit in searched]
    assert [p.text for p in grounding] == [hit["text"] for hit in searched]
    assert all(p.highlights == [] for p in grounding)  # drafts quote passages; nobody sees highlights there

    # A small search runs on the event loop, a large one in a worker thread: both answer the same passages.
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(passages, "INLINE_POSTINGS", 0)
        threaded = await project_passages(workspace.id, workspace.projects["ALPHA"], "SFTP banner timeout")
    assert [(p.id, p.score) for p in threaded] == [(p.id, p.score) for p in grounding]
