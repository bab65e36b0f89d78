"""services/notifications/threads: a thread exists only for its participants, who must share a project with the creator
and see its subject; each message is an internal event the others are notified from, and reading clears the unread."""

from __future__ import annotations

import pytest

from groundwork.domain.errors import InvalidRequest, NotFound, ValidationFailed
from groundwork.domain.tenancy.principals import Principal
from groundwork.persistence import db
from groundwork.services.notifications import threads
from groundwork.services.tenancy.api_keys import resolve_key
from tests.integration.notifications.conftest import People, Person


async def _as(person: Person) -> Principal:
    principal = await resolve_key(person.key)
    assert principal is not None
    return principal


async def test_participants_read_write_and_clear_their_unread_and_outsiders_see_nothing(people: People) -> None:
    alice, bob, carol, dana = [await _as(p) for p in (people.alice, people.bob, people.carol, people.dana)]
    subject = {"type": "project", "id": people.workspace.projects["ALPHA"]}
    thread = await threads.create_thread(alice, "  Release   plan ", [bob.id, alice.id], subject, "First")
    assert thread.title == "Release plan" and thread.message_count == 1
    reply = await threads.post_message(bob, thread.id, "Second")
    assert reply.sender_name == "bob"
    seen, messages, _ = await threads.get_thread(alice, thread.id)
    assert [m.body for m in messages] == ["Second", "First"] and seen.unread_count == 1
    assert (await threads.mark_thread_read(alice, thread.id)).unread_count == 0
    listed, _ = await threads.list_threads(bob)
    assert [t.id for t in listed] == [thread.id]
    for outsider in (carol, dana):  # not a participant, a workspace admin included
        with pytest.raises(NotFound):
            await threads.get_thread(outsider, thread.id)
        with pytest.raises(NotFound):
            await threads.post_message(outsider, thread.id, "Let me in")
    posted = await db.fetch(
        "SELECT payload->>'sender_id' AS sender FROM outbox WHERE type = 'message.posted' AND resource_id = $1"
        " ORDER BY id",
        thread.id,
    )
    assert [row["sender"] for row in posted] == [alice.id, bob.id]


async def test_a_participant_who_shares_no_project_or_cannot_see_the_subject_is_refused(people: People) -> None:
    alice, bob = await _as(people.alice), await _as(people.bob)
    with pytest.raises(ValidationFailed) as refused:
        await threads.create_thread(alice, "Hi", [people.carol.id], None, "Hello")
    assert [(e.path, e.message) for e in refused.value.errors] == [
        ("participant_ids[0]", "is not a principal you share a project with")
    ]
    with pytest.raises(NotFound):  # the creator cannot see BETA: the subject does not exist for it
        await threads.create_thread(
            bob, "Hi", [alice.id], {"type": "project", "id": people.workspace.projects["BETA"]}, "x"
        )
    assert (await threads.list_threads(alice))[0] == []


async def test_an_invalid_thread_reports_every_problem_by_path(people: People) -> None:
    alice = await _as(people.alice)
    with pytest.raises(ValidationFailed) as refused:
        await threads.create_thread(alice, "", [alice.id], {"type": "galaxy", "id": "x"}, "")
    assert {e.path for e in refused.value.errors} == {"title", "participant_ids", "subject_ref", "body"}


async def test_a_cursor_this_api_did_not_issue_is_refused(people: People) -> None:
    with pytest.raises(InvalidRequest, match="cursor"):
        await threads.list_threads(await _as(people.alice), cursor="bm90LWEtY3Vyc29y")
