"""Importing a team's GitHub Issues and Jira exports (issue 33): mapped to canonical items that keep their
source, idempotent by external id, a changed entry updating its item, bad entries reported by position."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx

from tests.conftest import Workspace, idem

EXPORTS = Path(__file__).parent / "exports"


async def _import(
    client: httpx.AsyncClient, workspace: Workspace, key: str, kind: str, content: str, **maps: Any
) -> dict[str, Any]:
    response = await client.post(
        f"/api/v1/projects/{workspace.projects['ALPHA']}/imports",
        json={"format": kind, "content": content, **maps},
        headers=workspace.headers(key, **idem()),
    )
    assert response.status_code == 200, response.text
    return dict(response.json()["data"])


async def _items(client: httpx.AsyncClient, workspace: Workspace, key: str) -> dict[str, dict[str, Any]]:
    response = await client.get(
        "/api/v1/work-items",
        params={"project_id": workspace.projects["ALPHA"], "limit": 100},
        headers=workspace.headers(key),
    )
    return {i["source"]["externalId"]: i for i in response.json()["data"] if i["source"]}


async def test_a_github_export_becomes_canonical_items_and_a_reimport_changes_nothing(
    client: httpx.AsyncClient, workspace: Workspace
) -> None:
    admin = await workspace.key("admin", admin=True)
    await workspace.key("ana", memberships={"ALPHA": "contributor"})
    text = (EXPORTS / "github_issues.json").read_text()
    report = await _import(client, workspace, admin, "github", text, people_map={"octo-ana": "ana"})
    assert report["created"] == ["ALPHA-1", "ALPHA-2"] and report["updated"] == []
    assert report["pullRequestsSkipped"] == 1
    assert report["rejected"] == [{"position": 4, "reason": "title is missing"}]
    assert report["createdPrincipals"] == ["stranger-sam"]  # not in the map, no principal of that name
    items = await _items(client, workspace, admin)
    assert set(items) == {"12", "14"}  # no pull request, no bad entry
    retry = items["12"]
    assert retry["title"] == "Retry settlement file upload when the SFTP server times out"
    assert (retry["status"], retry["sprint"], retry["fields"]["estimate"]) == ("todo", "Sprint 14", None)
    assert retry["fields"]["description"].startswith("The nightly settlement file upload fails")
    assert (
        retry["source"]["kind"] == "github" and retry["source"]["url"] == "https://github.com/acme/payments/issues/12"
    )
    assert retry["source"]["labels"] == ["bug", "settlement"]
    assert retry["watchers"][0] == workspace.principals["ana"] and len(retry["watchers"]) == 2
    assert items["14"]["status"] == "done"  # closed as not planned

    again = await _import(client, workspace, admin, "github", text, people_map={"octo-ana": "ana"})
    assert (again["created"], again["updated"], again["unchanged"]) == ([], [], ["ALPHA-1", "ALPHA-2"])
    assert again["createdPrincipals"] == []
    after = await _items(client, workspace, admin)
    assert {k: v["version"] for k, v in after.items()} == {k: v["version"] for k, v in items.items()}

    entries = json.loads(text)
    entries[0]["title"] = "Retry settlement uploads with backoff"
    entries[0]["state"] = "closed"
    changed = await _import(client, workspace, admin, "github", json.dumps(entries), people_map={"octo-ana": "ana"})
    assert (changed["created"], changed["updated"], changed["unchanged"]) == ([], ["ALPHA-1"], ["ALPHA-2"])
    updated = (await _items(client, workspace, admin))["12"]
    assert (updated["key"], updated["title"], updated["status"]) == (
        "ALPHA-1",
        "Retry settlement uploads with backoff",
        "done",
    )
    assert updated["version"] > retry["version"]
    history = (await client.get(f"/api/v1/work-items/{retry['id']}/history", headers=workspace.headers(admin))).json()
    assert len(history["data"]) == 2  # created, then the changed entry's update
    assert len(await _items(client, workspace, admin)) == 2  # never a duplicate


async def test_a_jira_export_maps_statuses_points_sprints_and_people_and_reports_bad_rows(
    client: httpx.AsyncClient, workspace: Workspace
) -> None:
    admin = await workspace.key("admin", admin=True)
    await workspace.key("ana")
    text = (EXPORTS / "jira_export.csv").read_text()
    report = await _import(client, workspace, admin, "jira", text, people_map={"ana@acme.test": "ana"})
    assert report["created"] == ["ALPHA-1", "ALPHA-2", "ALPHA-3"]
    [(row, reason)] = [(r["position"], r["reason"]) for r in report["rejected"]]
    assert row == 4 and "31/Foo/26" in reason  # rows as a spreadsheet shows them: header 1, a two-line cell one row
    assert report["warnings"] == ["unmapped status 'Blocked' became 'backlog'; map it with a status map"]
    assert report["createdPrincipals"] == ["ben@acme.test"]
    items = await _items(client, workspace, admin)
    tokenise = items["PAY-101"]
    assert (tokenise["status"], tokenise["sprint"], tokenise["fields"]["estimate"]) == (
        "in_progress",
        "PAY Sprint 14",
        5,
    )
    assert tokenise["source"]["labels"] == ["pci", "ledger"] and tokenise["source"]["url"] is None
    assert tokenise["watchers"][0] == workspace.principals["ana"]
    assert items["PAY-102"]["status"] == "backlog" and items["PAY-104"]["status"] == "done"

    mapped = await _import(
        client,
        workspace,
        admin,
        "jira",
        text,
        people_map={"ana@acme.test": "ana"},
        status_map={"Blocked": "in_progress"},
    )
    assert (mapped["updated"], mapped["warnings"]) == (["ALPHA-2"], [])
    assert (await _items(client, workspace, admin))["PAY-102"]["status"] == "in_progress"


async def test_an_unreadable_file_or_status_map_imports_nothing(
    client: httpx.AsyncClient, workspace: Workspace
) -> None:
    admin = await workspace.key("admin", admin=True)
    for body in (
        {"format": "github", "content": "{not json"},
        {"format": "jira", "content": "just,some,columns\n1,2,3\n"},
        {"format": "github", "content": "[]", "status_map": {"open": "started"}},
        {"format": "trello", "content": "[]"},
    ):
        response = await client.post(
            f"/api/v1/projects/{workspace.projects['ALPHA']}/imports",
            json=body,
            headers=workspace.headers(admin, **idem()),
        )
        assert response.status_code == 422, response.text
    assert await _items(client, workspace, admin) == {}
