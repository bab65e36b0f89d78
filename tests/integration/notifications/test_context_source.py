"""A context entry superseded by a governed successor tells the leads of its project, and only them."""

from __future__ import annotations

from typing import Any

import httpx

from groundwork.config import Settings
from tests.integration.context_engine.helpers import body, contribute, register
from tests.integration.notifications.conftest import People, inbox, relay_pass


async def _supersede(
    client: httpx.AsyncClient, people: People, term: str, classification: str = "delivery"
) -> tuple[str, str]:
    provider = await register(people.workspace, f"radar-{classification}", classification=classification)
    project = people.workspace.projects["ALPHA"]
    old = await contribute(people.workspace, body(provider, project, term, f"{term} slips a week."))
    new = await contribute(
        people.workspace,
        body(provider, project, term, f"{term} slips a month.", supersedes=old["entryId"]),
    )
    assert new["decision"] == "superseded"
    return old["entryId"], new["entryId"]


async def test_a_superseded_entry_notifies_the_leads_of_its_project_only(
    client: httpx.AsyncClient, people: People, worker: Any, temporal_client: Any, settings: Settings
) -> None:
    old, new = await _supersede(client, people, "Quokka rollout")
    await relay_pass(temporal_client, settings)
    [notification] = (await inbox(client, people, people.alice))["data"]
    assert notification["eventType"] == "context_engine.entry_superseded"
    assert notification["source"] == {"kind": "context_engine", "externalId": old}
    assert notification["resource"] == {"type": "context_package", "id": old}
    assert "Quokka rollout" in notification["title"] and new in notification["body"]
    # A contributor, a viewer of another project and a workspace admin lead nothing here.
    for other in (people.bob, people.carol, people.dana):
        assert (await inbox(client, people, other))["data"] == []
    await relay_pass(temporal_client, settings)
    assert len((await inbox(client, people, people.alice))["data"]) == 1  # once per event and recipient

    summary = await client.get(
        "/api/v1/notifications/summary", params={"since": "2020-01-01T00:00:00Z"}, headers=people.headers(people.alice)
    )
    assert summary.status_code == 200, summary.text
    assert summary.json()["data"]["counts"]["context_engine"] == 1
    [item] = [i for i in summary.json()["data"]["items"] if i["kind"] == "context_engine"]
    assert item["resourceId"] == old and "Quokka rollout" in item["title"]


async def test_a_superseded_financial_entry_never_names_its_term(
    client: httpx.AsyncClient, people: People, worker: Any, temporal_client: Any, settings: Settings
) -> None:
    old, _ = await _supersede(client, people, "Margin squeeze", classification="financial")
    await relay_pass(temporal_client, settings)
    [notification] = (await inbox(client, people, people.alice))["data"]
    assert notification["resource"] == {"type": "context_package", "id": old}
    assert "Margin" not in notification["title"] + notification["body"]
    # Alice's key holds every scope, so her summary shows it; a key without the financial scope does not.
    narrow = await people.workspace.key("alice", ["notifications:read", "context-engine:read"])
    summary = await client.get(
        "/api/v1/notifications/summary", params={"since": "2020-01-01T00:00:00Z"}, headers=people.headers(people.alice)
    )
    assert summary.json()["data"]["counts"]["context_engine"] == 1
    hidden = await client.get(
        "/api/v1/notifications/summary",
        params={"since": "2020-01-01T00:00:00Z"},
        headers=people.workspace.headers(narrow),
    )
    assert hidden.json()["data"]["counts"]["context_engine"] == 0
