"""REST: the caller's live feed of its own notifications, as Server-Sent Events (`text/event-stream`).

Events: `ready` (or `reset`) first, then `notification.created`, `notification.updated`,
`notification.acknowledged`, each with `id:` (the change's number, for `Last-Event-ID`) and as `data:`
the change's `changedFields` and the notification as the change left it; `: heartbeat` comments keep
the connection alive.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

from litestar import Request, get
from litestar.params import Parameter
from litestar.response import ServerSentEvent
from litestar.response.sse import ServerSentEventMessage

from groundwork.api.auth import bearer_key
from groundwork.api.resources.notifications import notification_resource
from groundwork.domain.notifications.feed import RESUME_WINDOW
from groundwork.domain.notifications.inbox import SCOPE_READ
from groundwork.domain.tenancy.principals import Principal
from groundwork.domain.times import format_timestamp
from groundwork.services.notifications.feed import Feed, FeedEvent, StreamSettings, open_feed

# How soon a client reconnects after the stream ends (EventSource's `retry`), in milliseconds.
RECONNECT_MS = 1000
_WINDOW_HOURS = int(RESUME_WINDOW.total_seconds() // 3600)


def _message(event: FeedEvent, principal: Principal) -> ServerSentEventMessage:
    if event.kind == "heartbeat":
        return ServerSentEventMessage(data=None, comment=f"heartbeat {(event.data or {}).get('at', '')}")
    if event.kind == "change":
        assert event.change is not None
        change = event.change
        data: dict[str, Any] = {
            "type": change.event_type,
            "changedFields": change.changed_fields,
            "occurredAt": format_timestamp(change.notification.updated_at),
            "notification": notification_resource(change.notification, principal),
        }
        return ServerSentEventMessage(
            data=json.dumps(data, separators=(",", ":")), event=change.event_type, id=event.id
        )
    return ServerSentEventMessage(
        data=json.dumps(event.data, separators=(",", ":")),
        event=event.kind,
        id=event.id,
        retry=RECONNECT_MS if event.kind in ("ready", "reset") else None,
    )


async def _messages(feed: Feed) -> AsyncIterator[ServerSentEventMessage]:
    async for event in feed.events():
        yield _message(event, feed.principal)


@get(
    "/api/v1/notifications/stream",
    opt={"scope": SCOPE_READ},
    tags=["notifications"],
    summary="The caller's own notification changes as Server-Sent Events",
    description="Contract v0.2 (preview). `text/event-stream`: `ready` (or `reset`), then `notification.created`, "
    "`notification.updated` and `notification.acknowledged` of the caller's own notifications as they commit "
    "(each `id:` is the change's number; `data:` holds `changedFields` and the notification as it left it), and "
    f"a `: heartbeat` comment while idle. Resume with `Last-Event-ID` within {_WINDOW_HOURS} hours; an older or "
    "unknown id gets `reset` (list again, then follow). A stream ends after its lifetime (reconnect with "
    "`Last-Event-ID`); an API key holds a bounded number of open streams (429 `rate_limited` past it).",
    status_code=200,
    media_type="text/event-stream",
)
async def notification_stream(
    request: Request[Principal, Any, Any],
    last_event_id: str | None = Parameter(
        header="Last-Event-ID", default=None, description="The id of the last event received, to resume after it."
    ),
) -> ServerSentEvent:
    """Follow the caller's notifications live."""
    settings = request.app.state.settings
    options = StreamSettings(
        heartbeat_seconds=settings.notification_stream_heartbeat_seconds,
        lifetime_seconds=settings.notification_stream_seconds,
        per_key=settings.notification_streams_per_key,
    )
    feed = await open_feed(request.user, bearer_key(request.scope) or "", last_event_id, options)
    return ServerSentEvent(_messages(feed), headers={"Cache-Control": "no-store", "X-Content-Type-Options": "nosniff"})
