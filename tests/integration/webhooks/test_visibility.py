"""An endpoint receives only events about what its owner may see, judged when each event is dispatched."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import httpx

from groundwork.persistence import db
from groundwork.persistence.repositories.platform import outbox
from groundwork.platform.outbox.relay import OutboxRelay
from tests.conftest import Workspace, idem
from tests.integration.webhooks.conftest import Receiver, create_endpoint, delivery_of, emit, wait_until

EVERYTHING = ["work_item_enhancement.*", "context_engine.*", "notification.*"]
MANAGE = ["webhooks:manage"]


def _ids(receiver: Receiver) -> set[str]:
    return {r.headers["webhook-id"] for r in receiver.requests}


async def _dispatched(event_id: str) -> None:
    """Wait until the relay running in the background has dispatched the event."""

    async def done() -> bool:
        row = await db.fetchrow("SELECT dispatched_at FROM outbox WHERE event_id = $1", event_id)
        return row is not None and row["dispatched_at"] is not None

    await wait_until(done, what=f"{event_id} to be dispatched")


async def test_each_endpoint_gets_only_the_events_its_owner_may_see(
    client: httpx.AsyncClient,
    workspace: Workspace,
    relay: OutboxRelay,
    receivers: Callable[[], Awaitable[Receiver]],
) -> None:
    admin = await workspace.key(admin=True)
    member = await workspace.key("member", MANAGE, memberships={"ALPHA": "contributor"})
    guest = await workspace.key("guest", MANAGE, memberships={"ALPHA": "guest"})  # no context:read
    outsider = await workspace.key("outsider", MANAGE)
    hooks = {name: await receivers() for name in ("admin", "member", "guest", "outsider")}
    for name, key in (("admin", admin), ("member", member), ("guest", guest), ("outsider", outsider)):
        await create_endpoint(client, workspace, key, hooks[name].url, EVERYTHING)
    alpha, beta = workspace.projects["ALPHA"], workspace.projects["BETA"]

    run_alpha = await emit(workspace, "work_item_enhancement.queued", project_id=alpha)
    run_beta = await emit(workspace, "work_item_enhancement.queued", project_id=beta)
    context_alpha = await emit(workspace, "context_engine.merge_decided", project_id=alpha)
    workspace_wide = await emit(workspace, "work_item_enhancement.completed")
    for_member = await emit(workspace, "notification.created", private_to=workspace.principals["member"])
    for_admin = await emit(workspace, "notification.created", private_to=workspace.principals["admin"])
    await hooks["admin"].wait_for(5)
    await hooks["member"].wait_for(3)
    await hooks["guest"].wait_for(1)
    await relay.run_once()  # all dispatched: what each received is all it will receive

    assert _ids(hooks["admin"]) == {run_alpha, run_beta, context_alpha, workspace_wide, for_admin}
    assert _ids(hooks["member"]) == {run_alpha, context_alpha, for_member}
    assert _ids(hooks["guest"]) == {run_alpha}  # sees the project, not its context
    assert hooks["outsider"].requests == []


async def test_a_lost_membership_stops_the_flow_at_the_next_dispatch(
    client: httpx.AsyncClient,
    workspace: Workspace,
    relay: OutboxRelay,
    receivers: Callable[[], Awaitable[Receiver]],
) -> None:
    member = await workspace.key("member", MANAGE, memberships={"ALPHA": "lead"})
    receiver = await receivers()
    endpoint = await create_endpoint(client, workspace, member, receiver.url, ["work_item_enhancement.*"])
    alpha = workspace.projects["ALPHA"]
    before = await emit(workspace, "work_item_enhancement.queued", project_id=alpha)
    await receiver.wait_for(1)
    await db.execute(
        "DELETE FROM memberships WHERE principal_id = $1 AND project_id = $2", workspace.principals["member"], alpha
    )
    after = await emit(workspace, "work_item_enhancement.completed", project_id=alpha)
    await _dispatched(after)
    assert _ids(receiver) == {before}
    assert [d["eventId"] for d in await delivery_of(client, workspace, member, endpoint["id"])] == [before]


async def test_events_raised_while_an_endpoint_is_disabled_are_dropped_not_sent_on_enable(
    client: httpx.AsyncClient,
    workspace: Workspace,
    relay: OutboxRelay,
    receivers: Callable[[], Awaitable[Receiver]],
) -> None:
    key = await workspace.key(admin=True)
    receiver = await receivers()
    endpoint = await create_endpoint(client, workspace, key, receiver.url, ["notification.*"])
    url = f"/api/v1/webhook-endpoints/{endpoint['id']}"
    assert (await client.patch(url, json={"enabled": False}, headers=workspace.headers(key))).status_code == 200
    while_disabled = await emit(workspace, "notification.created")
    await _dispatched(while_disabled)
    assert (await client.patch(url, json={"enabled": True}, headers=workspace.headers(key))).status_code == 200
    after = await emit(workspace, "notification.created")
    await receiver.wait_for(1)
    await _dispatched(after)
    assert _ids(receiver) == {after}
    assert while_disabled not in {d["eventId"] for d in await delivery_of(client, workspace, key, endpoint["id"])}


async def test_a_non_admin_manages_only_its_own_endpoints(
    client: httpx.AsyncClient, workspace: Workspace, relay: OutboxRelay, receivers: Callable[[], Awaitable[Receiver]]
) -> None:
    admin = await workspace.key(admin=True)
    owner = await workspace.key("owner", MANAGE, memberships={"ALPHA": "lead"})
    other = await workspace.key("other", MANAGE, memberships={"ALPHA": "lead"})
    receiver = await receivers()
    mine = await create_endpoint(client, workspace, owner, receiver.url, ["notification.*"])
    admins = await create_endpoint(client, workspace, admin, "https://hooks.example.com/a", ["notification.*"])
    await emit(workspace, "notification.created", private_to=workspace.principals["owner"])
    await receiver.wait_for(1)
    [delivery] = await delivery_of(client, workspace, owner, mine["id"])
    base = "/api/v1/webhook-endpoints"
    refused = [
        ("GET", f"{base}/{mine['id']}", None),
        ("PATCH", f"{base}/{mine['id']}", {"url": "https://evil.example.com/steal"}),
        ("POST", f"{base}/{mine['id']}/rotate-secret", None),
        ("POST", f"{base}/{mine['id']}/test", None),
        ("GET", f"{base}/{mine['id']}/deliveries", None),
        ("GET", f"/api/v1/webhook-deliveries/{delivery['id']}", None),
        ("POST", f"/api/v1/webhook-deliveries/{delivery['id']}/redeliver", None),
        ("PATCH", f"{base}/{admins['id']}", {"url": "https://evil.example.com/steal"}),  # retarget admin's
        ("DELETE", f"{base}/{mine['id']}", None),
    ]
    for method, path, body in refused:
        response = await client.request(method, path, json=body, headers=workspace.headers(other, **idem()))
        assert response.status_code == 404, (method, path, response.text)
    listed: dict[str, Any] = (await client.get(base, headers=workspace.headers(other))).json()
    assert listed["data"] == []
    assert [e["id"] for e in (await client.get(base, headers=workspace.headers(owner))).json()["data"]] == [mine["id"]]
    seen_by_admin = {e["id"] for e in (await client.get(base, headers=workspace.headers(admin))).json()["data"]}
    assert seen_by_admin == {mine["id"], admins["id"]}
    assert (await client.get(f"{base}/{mine['id']}", headers=workspace.headers(admin))).status_code == 200


async def test_every_subscribable_event_names_its_project_or_its_owner(
    client: httpx.AsyncClient, workspace: Workspace, worker: Any
) -> None:
    from tests.integration.context_engine.helpers import body, contribute, register
    from tests.integration.enhancement.conftest import create_run

    key = await workspace.key(admin=True)
    item = (
        await client.post(
            "/api/v1/work-items",
            json={"project_id": workspace.projects["BETA"], "title": "Rotate keys"},
            headers=workspace.headers(key, **idem()),
        )
    ).json()["data"]
    await create_run(client, workspace, key, item["id"], ["requirements"])
    events = await outbox.events_for_workspace(workspace.id)
    run_events = [e for e in events if e.type.startswith("work_item_enhancement.")]
    assert run_events and {e.project_id for e in run_events} == {workspace.projects["BETA"]}
    assert all(e.private_to is None for e in run_events)

    provider = await register(workspace, "risk-radar")
    await contribute(workspace, body(provider, workspace.projects["ALPHA"], "Vendor risk", "The vendor may slip."))
    context = [e for e in await outbox.events_for_workspace(workspace.id) if e.type.startswith("context_engine.")]
    assert len(context) == 2 and {e.project_id for e in context} == {workspace.projects["ALPHA"]}
