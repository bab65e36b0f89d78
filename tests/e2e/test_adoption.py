"""A team adopts Groundwork (issue 33): a fresh, non-demo workspace set up end to end with only the CLI and REST."""

from __future__ import annotations

import json
import uuid
from pathlib import Path
from typing import Any

import httpx

from groundwork.persistence.repositories.tenancy import workspaces as tenancy
from tests.conftest import Workspace, idem
from tests.e2e.test_cli import groundwork
from tests.integration.evidence_search.helpers import contribute

EXPORTS = Path(__file__).parent.parent / "integration" / "work_items" / "exports"


def _data(response: httpx.Response, status: int = 200) -> Any:
    assert response.status_code == status, response.text
    return response.json()["data"]


async def test_a_team_adopts_groundwork_with_the_cli_and_rest_only(
    database: str, client: httpx.AsyncClient, internal_client: httpx.AsyncClient, worker: Any, tmp_path: Path
) -> None:
    slug = f"acme-{uuid.uuid4().hex[:8]}"
    made = groundwork(database, "workspaces", "create", slug, "--name", "Acme Payments", "--admin", "ana")
    assert made.returncode == 0, made.stderr
    ana = {"Authorization": f"Bearer {made.stdout.strip()}"}

    portfolio = _data(
        await client.post("/api/v1/portfolios", json={"name": "Payments"}, headers={**ana, **idem()}), 201
    )
    engagement = _data(
        await client.post(
            "/api/v1/engagements", json={"name": "Cards", "portfolio_id": portfolio["id"]}, headers={**ana, **idem()}
        ),
        201,
    )
    project = _data(
        await client.post(
            "/api/v1/projects",
            json={"key": "CARDS", "name": "Card issuing", "engagement_id": engagement["id"]},
            headers={**ana, **idem()},
        ),
        201,
    )
    ben = _data(
        await client.post("/api/v1/principals", json={"name": "ben", "kind": "user"}, headers={**ana, **idem()}), 201
    )
    member = await client.put(
        f"/api/v1/projects/{project['id']}/members/{ben['id']}", json={"role": "contributor"}, headers=ana
    )
    assert member.status_code == 200, member.text
    ben_key = _data(
        await client.post(
            "/api/v1/api-keys",
            json={
                "principal_id": ben["id"],
                "scopes": ["work-items:read", "work-item-enhance:read", "context-engine:read", "notifications:read"],
            },
            headers={**ana, **idem()},
        ),
        201,
    )["secret"]
    as_ben = {"Authorization": f"Bearer {ben_key}"}
    assert _data(await client.get("/api/v1/me", headers=as_ben))["projectRoles"][0]["projectKey"] == "CARDS"
    # Ben may address Ana once she joins the project; until then only himself.
    assert [p["name"] for p in _data(await client.get("/api/v1/principals", headers=as_ben))] == ["ben"]

    github = (EXPORTS / "github_issues.json").read_text()
    imported = _data(
        await client.post(
            f"/api/v1/projects/{project['id']}/imports",
            json={"format": "github", "content": github, "people_map": {"octo-ana": "ana"}},
            headers={**ana, **idem()},
        )
    )
    assert (imported["created"], imported["pullRequestsSkipped"]) == (["CARDS-1", "CARDS-2"], 1)
    people = tmp_path / "people.json"
    people.write_text(json.dumps({"ana@acme.test": "ana", "ben@acme.test": "ben", "octo-ana": "ana"}))
    jira = groundwork(
        database, "import", str(EXPORTS / "jira_export.csv"), "--format", "jira", "--workspace", slug,
        "--project", "CARDS", "--people-map", str(people),
    )  # fmt: skip
    assert jira.returncode == 1, jira.stderr  # one bad row, reported; the rest imported
    assert "row 4: skipped" in jira.stderr and "unmapped status 'Blocked'" in jira.stderr
    assert "created 3, updated 0, unchanged 0" in jira.stderr

    again = groundwork(
        database, "import", str(EXPORTS / "jira_export.csv"), "--format", "jira", "--workspace", slug,
        "--project", "CARDS", "--people-map", str(people),
    )  # fmt: skip
    assert "created 0, updated 0, unchanged 3" in again.stderr
    entries = json.loads(github)
    entries[2]["title"] = "Drop the legacy card vault export for good"
    changed = tmp_path / "issues.json"
    changed.write_text(json.dumps(entries))
    update = groundwork(
        database, "import", str(changed), "--format", "github", "--workspace", slug, "--project", "CARDS",
        "--people-map", str(people),
    )  # fmt: skip
    assert "created 0, updated 1, unchanged 1" in update.stderr, update.stderr
    items = _data(await client.get("/api/v1/work-items", params={"project_id": project["id"]}, headers=as_ben))
    assert len(items) == 5  # two GitHub issues, three Jira issues: no duplicates
    vault = next(i for i in items if i["source"]["externalId"] == "14")
    tokenise = next(i for i in items if i["source"]["externalId"] == "PAY-101")
    assert vault["title"] == "Drop the legacy card vault export for good"

    workspace = await tenancy.get_workspace_by_slug(slug)
    assert workspace is not None
    team = Workspace(workspace.id, slug, internal_client, projects={"CARDS": project["id"]})
    await contribute(team, "CARDS", "runbooks/vault.md", "# Card vault\n\nThe legacy card vault export runs nightly.")
    found = await client.post(
        "/api/v1/context/search",
        json={"subject_ref": {"type": "project", "id": project["id"]}, "query": "legacy vault export"},
        headers=as_ben,
    )
    assert found.status_code == 200, found.text
    assert found.json()["data"][0]["source"]["uri"] == "runbooks/vault.md"

    run = _data(
        await client.post(
            "/api/v1/work-item-enhancements?wait=30",
            json={
                "target": {"type": "work_item", "id": tokenise["id"]},
                "actions": ["description", "estimate"],
                "confirm": True,
            },
            headers={**ana, **idem()},
        ),
        201,
    )
    assert run["state"] == "ready_for_review" and run["drafts"]

    refused = await client.post("/api/v1/portfolios", json={"name": "Ben's"}, headers={**as_ben, **idem()})
    assert refused.status_code == 403 and refused.json()["required_scope"] == "workspace:admin"
