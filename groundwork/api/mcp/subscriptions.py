"""MCP resource subscriptions: `notifications/resources/updated` when a run's state or a notification's status changes.

A client opens a `subscriptions/listen` stream (protocol 2026-07-28; over Streamable HTTP its response is the
SSE stream, so it works with the stateless transport) naming the resource URIs it follows. Only URIs of
subscribable templates that the caller may read now are honored (the acknowledgment lists them); any other is
left out, whether it does not exist or is not the caller's, so a subscription reveals nothing a read would not.

Updates come from this process's change feeds, which hear every process's commits: a run's state change on
`groundwork_enhancement_run` (services.enhancement.run_waits) and a change of a recipient's notifications on
`groundwork_cache` as `inbox:<recipient>` (the feed of the notifications SSE stream). A run's update is sent for
each new state; a notification is read again and its update sent only when its status, version or snooze moved.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass
from typing import Any

from mcp.server.context import ServerRequestContext
from mcp.server.subscriptions import ListenHandler, ResourceUpdated, SubscriptionBus
from mcp.types import SubscriptionsListenRequestParams, SubscriptionsListenResult

from groundwork.api.mcp.resources import TEMPLATES, read_as
from groundwork.api.mcp.server import principal_of
from groundwork.domain.errors import GroundworkError
from groundwork.domain.tenancy.principals import Principal
from groundwork.persistence import change_feed
from groundwork.services.enhancement import run_waits
from groundwork.services.notifications.feed import TOPIC as INBOX_TOPIC

log = logging.getLogger(__name__)
# At most this many resources followed by one listen stream (the rest are not honored).
MAX_SUBSCRIPTIONS_PER_STREAM = 100
SUBSCRIBABLE = tuple(t for t in TEMPLATES if t.subscribable)


@dataclass
class Watch:
    """One followed resource: who may read it, what changes it, and what it looked like last."""

    uri: str
    principal: Principal
    run_id: str | None
    fingerprint: Any
    streams: int = 1


def _run_of(uri: str) -> str | None:
    for template in SUBSCRIBABLE:
        match = template.pattern().match(uri)
        if match is not None and template.name in ("enhancement_run", "enhancement_draft"):
            ids = match.groupdict()
            return ids.get("run_id") or ids["id"]
    return None


def _fingerprint(resource: dict[str, Any]) -> Any:
    """A notification: its status, version and snooze; a run: its state (a draft: none until its run moves)."""
    if "status" in resource:
        return (resource["status"], resource["version"], resource.get("snoozedUntil"))
    return resource.get("state")


class ResourceUpdates:
    """The resources this process's listen streams follow, and the change feeds that tell when they changed."""

    def __init__(self, bus: SubscriptionBus) -> None:
        self._bus = bus
        self._watches: dict[str, Watch] = {}
        self._tasks: set[asyncio.Task[None]] = set()

    async def follow(self, principal: Principal, uri: str) -> bool:
        """Follow `uri` for `principal` if it names a subscribable resource the principal may read now."""
        if not any(t.pattern().match(uri) for t in SUBSCRIBABLE):
            return False
        try:
            resource = await read_as(principal, uri)
        except GroundworkError:
            return False
        watch = self._watches.get(uri)
        if watch is None:
            self._watches[uri] = Watch(uri, principal, _run_of(uri), _fingerprint(resource))
        else:
            watch.streams += 1
            watch.principal = principal
        if len(self._watches) == 1:
            change_feed.subscribe(self._on_change)
            run_waits.observe(self._on_run)
        return True

    def leave(self, uri: str) -> None:
        """One stream stopped following `uri`."""
        watch = self._watches.get(uri)
        if watch is None:
            return
        watch.streams -= 1
        if watch.streams <= 0:
            del self._watches[uri]
            if not self._watches:
                change_feed.unsubscribe(self._on_change)
                run_waits.unobserve(self._on_run)

    def _soon(self, watches: list[Watch]) -> None:
        if watches:
            task = asyncio.get_running_loop().create_task(self._recheck(watches))
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)

    def _on_run(self, run_id: str, state: str) -> None:
        # The notification names the new state: no read needed (a read could still see the cached view).
        moved = [w for w in self._watches.values() if w.run_id == run_id and w.fingerprint != state]
        for watch in moved:
            watch.fingerprint = state
        if moved:
            task = asyncio.get_running_loop().create_task(self._publish(moved))
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)

    async def _publish(self, watches: list[Watch]) -> None:
        for watch in watches:
            await self._bus.publish(ResourceUpdated(uri=watch.uri))

    def _on_change(self, topic: str) -> None:
        if topic == "*":
            self._soon([w for w in self._watches.values() if w.run_id is None])
        elif topic.startswith(INBOX_TOPIC):
            recipient = topic.removeprefix(INBOX_TOPIC)
            self._soon([w for w in self._watches.values() if w.run_id is None and w.principal.id == recipient])

    async def _recheck(self, watches: list[Watch]) -> None:
        for watch in watches:
            try:
                fingerprint: Any = _fingerprint(await read_as(watch.principal, watch.uri))
            except GroundworkError:
                fingerprint = None  # gone, or no longer visible: one last update, the read then tells why
            except Exception:
                log.exception("could not read %s again for its subscribers", watch.uri)
                continue
            if fingerprint != watch.fingerprint:
                watch.fingerprint = fingerprint
                await self._bus.publish(ResourceUpdated(uri=watch.uri))


class VisibleListenHandler(ListenHandler):
    """The SDK's `subscriptions/listen` handler, honoring only the resources the caller may read."""

    def __init__(self, bus: SubscriptionBus, updates: ResourceUpdates) -> None:
        super().__init__(bus)
        self._updates = updates

    async def __call__(
        self, ctx: ServerRequestContext[Any, Any], params: SubscriptionsListenRequestParams
    ) -> SubscriptionsListenResult:
        """Serve one listen stream over the readable part of what it asks to follow."""
        principal = principal_of(ctx)
        followed: list[str] = []
        for uri in list(dict.fromkeys(params.notifications.resource_subscriptions or ()))[
            :MAX_SUBSCRIPTIONS_PER_STREAM
        ]:
            if principal is not None and await self._updates.follow(principal, uri):
                followed.append(uri)
        honored = params.notifications.model_copy(update={"resource_subscriptions": followed or None})
        try:
            return await super().__call__(ctx, params.model_copy(update={"notifications": honored}))
        finally:
            for uri in followed:
                self._updates.leave(uri)
