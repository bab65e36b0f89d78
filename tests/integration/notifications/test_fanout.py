"""The relay's notification step (`NotificationFanout`): each outbox event notifies its recipients once, even when
the relay runs it again, and a relay dying inside its claim loses nothing."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from groundwork.config import Settings
from groundwork.persistence import db
from groundwork.persistence.repositories.platform import outbox
from groundwork.persistence.repositories.platform.outbox import ClaimedEventRow
from groundwork.services.notifications.fanout import NotificationFanout
from tests.integration.notifications.conftest import People, inbox, relay_pass, start_thread


async def test_an_event_is_notified_once_even_if_the_relay_runs_it_again(
    client: httpx.AsyncClient, people: People, temporal_client: Any, settings: Settings
) -> None:
    await start_thread(client, people, people.alice, [people.bob])
    await relay_pass(temporal_client, settings)
    [event] = [e for e in await outbox.events_for_workspace(people.workspace.id) if e.type == "message.posted"]
    await db.execute("UPDATE outbox SET dispatched_at = NULL WHERE event_id = $1", event.event_id)
    await relay_pass(temporal_client, settings)
    listed = await inbox(client, people, people.bob)
    assert len(listed["data"]) == 1 and listed["unreadCount"] == 1
    created = [e for e in await outbox.events_for_workspace(people.workspace.id) if e.type == "notification.created"]
    assert len(created) == 1


async def test_a_relay_dying_inside_its_claim_loses_nothing_and_the_next_pass_notifies_once(
    client: httpx.AsyncClient, people: People, temporal_client: Any, settings: Settings
) -> None:
    await start_thread(client, people, people.alice, [people.bob])
    fanout = NotificationFanout(lambda: temporal_client, settings)

    async def consume_then_die(events: list[ClaimedEventRow]) -> None:
        await fanout.consume(events)
        raise ConnectionError("relay lost its database connection before the commit")

    with pytest.raises(ConnectionError):
        await outbox.claim_batch(500, on_claimed=consume_then_die)
    assert (await inbox(client, people, people.bob))["data"] == []
    [event] = [e for e in await outbox.events_for_workspace(people.workspace.id) if e.type == "message.posted"]
    assert event.dispatched_at is None
    await relay_pass(temporal_client, settings)
    assert len((await inbox(client, people, people.bob))["data"]) == 1
