"""Context engine evolution events reach subscribers as signed v1 envelopes through the outbox relay."""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from typing import Any

import httpx
from standardwebhooks import Webhook

from tests.conftest import Workspace
from tests.integration.context_engine.helpers import body, contribute, evidence, register
from tests.integration.webhooks.conftest import Receiver, create_endpoint


async def test_contribution_events_are_delivered_signed_with_the_evolution_resource(
    client: httpx.AsyncClient,
    workspace: Workspace,
    relay: Any,
    receivers: Callable[[], Awaitable[Receiver]],
) -> None:
    key = await workspace.key(admin=True)
    receiver = await receivers()
    endpoint = await create_endpoint(client, workspace, key, receiver.url, ["context_engine.*"])
    provider = await register(workspace, "risk-radar")
    alpha = workspace.projects["ALPHA"]
    old = await contribute(workspace, body(provider, alpha, "Vendor", "Renews yearly."))
    new = await contribute(
        workspace,
        body(provider, alpha, "Vendor", "Renews monthly.", items=[evidence(ref="e2")], supersedes=old["entryId"]),
    )
    requests = await receiver.wait_for(5)
    verifier = Webhook(endpoint["secret"])
    envelopes = [verifier.verify(r.body, r.headers) for r in requests]
    assert all(json.loads(r.body) == e for r, e in zip(requests, envelopes, strict=True))
    seen = {(e["type"], e["resource"]["id"], e["payload"]["evolution_kind"]) for e in envelopes}
    assert seen == {
        ("context_engine.contribution_persisted", old["id"], "contribution_persisted"),
        ("context_engine.merge_decided", old["entryId"], "created"),
        ("context_engine.contribution_persisted", new["id"], "contribution_persisted"),
        ("context_engine.merge_decided", new["entryId"], "created"),
        ("context_engine.entry_superseded", old["entryId"], "superseded"),
    }
    for envelope in envelopes:
        assert envelope["resource"]["type"] == "context_engine_evolution"
        assert envelope["workspace_id"] == workspace.id and envelope["event_version"] == 1
        assert set(envelope["payload"]) == {"subject_id", "related_entry_id", "evolution_kind", "occurred_at"}
