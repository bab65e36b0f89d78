"""Demo notifications: the threads of `data/threads.jsonl`, so the demo admin's inbox is not empty on first look.

Each thread and its messages (`data/messages.jsonl`) are written through the messaging service and
their `message.posted` events through the same notification step the outbox relay runs, so everything
is as real as a live conversation; the relay later finds those events already notified (unique on
event and recipient) and adds nothing. Then each line of `data/notification_moves.jsonl` moves one
notification of its recipient, oldest first, through the lifecycle command (`via: demo` in their
history): the data leaves the admin one notification in each state.
"""

from __future__ import annotations

from groundwork.config import Settings
from groundwork.demo.records import WORKSPACE_SLUG, records
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
    """Seed the threads and the moves of their notifications unless the demo has a thread; True when seeded."""
    workspace = await tenancy.get_workspace_by_slug(WORKSPACE_SLUG)
    if workspace is None:
        return False
    ws = workspace.id
    threads, conversation, moves = records("threads"), records("messages"), records("notification_moves")
    names = {t["creator"] for t in threads} | {n for t in threads for n in t["participants"]}
    names |= {m["sender"] for m in conversation} | {m["recipient"] for m in moves}
    people = {name: await _principal(ws, name) for name in sorted(names)}
    if await messages.list_threads(people[threads[0]["creator"]], limit=1) != (
        [],
        {"next_cursor": None, "has_more": False},
    ):
        return False
    for record in threads:
        creator = people[record["creator"]]
        project = next(p for p in await tenancy.visible_projects(creator) if p.key == record["project"])
        thread = await messages.create_thread(
            creator,
            record["title"],
            [people[name].id for name in record["participants"]],
            {"type": "project", "id": project.id},
            record["body"],
        )
        for message in conversation:
            if message["thread"] == record["title"]:
                await messages.post_message(people[message["sender"]], thread.id, message["body"])
    async with db.transaction():
        for event in await outbox.events_for_workspace(ws):
            if event.type == MESSAGE_POSTED:
                await notify(source_event(event), settings)
    for recipient, source_kind in dict.fromkeys((m["recipient"], m["source_kind"]) for m in moves):
        person = people[recipient]
        inbox, _ = await notification_repo.list_inbox(
            person.id, status=None, source_kind=source_kind, since=None, after_id=None, limit=100
        )
        commands = [m["commands"] for m in moves if (m["recipient"], m["source_kind"]) == (recipient, source_kind)]
        for notification, steps in zip(reversed(inbox), commands, strict=False):
            version = notification.version
            for command in steps:
                result = await change_notification(
                    person, notification.id, command, expected_version=version, confirm=True, via="demo"
                )
                version = result.version
    return True
