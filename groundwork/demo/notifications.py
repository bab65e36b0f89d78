"""Demo notifications: one thread on PAY, so the demo admin's inbox is not empty on first look.

The thread is written through the messaging service and its `message.posted` events through the
same notification step the outbox relay runs, so everything is as real as a live conversation; the
relay later finds those events already notified (unique on event and recipient) and adds nothing.
The admin then reads, acknowledges and dismisses some of them through the lifecycle command
(`via: demo` in their history), leaving one notification in each state.
"""

from __future__ import annotations

from groundwork.config import Settings
from groundwork.demo import catalog
from groundwork.domain.notifications.inbox import MESSAGE_POSTED
from groundwork.domain.tenancy.principals import Principal
from groundwork.domain.tenancy.scopes import ALL_SCOPES
from groundwork.persistence import db
from groundwork.persistence.repositories.notifications import inbox as notification_repo
from groundwork.persistence.repositories.platform import outbox
from groundwork.persistence.repositories.tenancy import workspaces as tenancy
from groundwork.services.notifications import threads as messages
from groundwork.services.notifications.fanout import notify, source_event
from groundwork.services.notifications.inbox import change_notification

THREAD_TITLE = "PAY: settlement file timeouts before the cut-over"
CONVERSATION = (
    ("priya", "The last two nightly settlement runs hit the 30 s PSP timeout. Do we raise it or batch smaller?"),
    ("admin", "Let's not raise the timeout. Maya, can the job split the file by merchant?"),
    ("maya", "Yes: I'll draft the change on PAY and ask for a review before Thursday's go/no-go."),
    ("priya", "Thanks. I added the failing run IDs to the settlement runbook."),
)
# What the admin does with its notifications, oldest first: one ends in each state.
MOVES = (("read", "acknowledge", "dismiss"), ("read", "acknowledge"), ("read",), ())


async def _principal(workspace_id: str, name: str) -> Principal:
    row = await tenancy.get_principal_by_name(workspace_id, name)
    assert row is not None, name
    return Principal(
        id=row.id,
        workspace_id=workspace_id,
        name=row.name,
        kind=row.kind,
        is_admin=row.is_admin,
        api_key_id="",
        scopes=frozenset(ALL_SCOPES),
    )


async def seed_demo_notifications(settings: Settings) -> bool:
    """Seed the thread and the admin's notifications unless the demo workspace has a thread; True when seeded."""
    workspace = await tenancy.get_workspace_by_slug(catalog.WORKSPACE_SLUG)
    if workspace is None:
        return False
    ws = workspace.id
    people = {name: await _principal(ws, name) for name in ("admin", "maya", "priya")}
    maya = people["maya"]
    if await messages.list_threads(maya, limit=1) != ([], {"next_cursor": None, "has_more": False}):
        return False
    pay = next(p for p in await tenancy.visible_projects(people["admin"]) if p.key == "PAY")
    thread = await messages.create_thread(
        maya,
        THREAD_TITLE,
        [people["admin"].id, people["priya"].id],
        {"type": "project", "id": pay.id},
        "Heads-up: settlement for Marlow & Finch failed twice this week. Notes below.",
    )
    for name, text in CONVERSATION:
        await messages.post_message(people[name], thread.id, text)
    async with db.transaction():
        for event in await outbox.events_for_workspace(ws):
            if event.type == MESSAGE_POSTED:
                await notify(source_event(event), settings)
    admin = people["admin"]
    inbox, _ = await notification_repo.list_inbox(
        admin.id, status=None, source_kind="messages", since=None, after_id=None, limit=100
    )
    for notification, moves in zip(reversed(inbox), MOVES, strict=False):
        version = notification.version
        for command in moves:
            result = await change_notification(
                admin, notification.id, command, expected_version=version, confirm=True, via="demo"
            )
            version = result.version
    return True
