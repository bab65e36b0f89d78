"""REST: message threads the caller takes part in (contract v0.2, preview); a thread it is not in is 404."""

from __future__ import annotations

from typing import Annotated, Any, ClassVar

import msgspec
from litestar import Controller, Request, Response, get, post

from groundwork.api.documented import LIMIT, documented, text
from groundwork.api.resources.notifications import message_resource, thread_resource
from groundwork.api.rest.documents.common import created, typed
from groundwork.api.rest.documents.notifications import MessageDocument, ThreadDocument, ThreadList, ThreadWithMessages
from groundwork.domain.notifications.inbox import SCOPE_OPERATE, SCOPE_READ, SCOPE_WRITE
from groundwork.domain.notifications.threads import MAX_BODY, MAX_TITLE, SUBJECT_TYPES
from groundwork.domain.tenancy.principals import Principal
from groundwork.services.notifications import threads as service

PREVIEW = "Contract v0.2 (preview). "
READ = {"scope": SCOPE_READ}


class SubjectRef(msgspec.Struct, forbid_unknown_fields=True):
    type: Annotated[str, documented(enum=list(SUBJECT_TYPES))]
    id: str


class CreateThreadBody(msgspec.Struct, forbid_unknown_fields=True):
    __documented_required__: ClassVar[tuple[str, ...]] = ("title", "participant_ids", "body")
    title: Annotated[str, text(MAX_TITLE)] | None = None
    participant_ids: Annotated[list[str], documented(minItems=1)] | None = None
    subject_ref: SubjectRef | None = None
    body: Annotated[str, text(MAX_BODY)] | None = None


class PostMessageBody(msgspec.Struct, forbid_unknown_fields=True):
    __documented_required__: ClassVar[tuple[str, ...]] = ("body",)
    body: Annotated[str, text(MAX_BODY)] | None = None


class MessageController(Controller):
    path = "/api/v1/messages"
    tags = ["notifications"]

    @get("/", opt=READ, summary="The caller's threads with unread counts", description=PREVIEW)
    async def list_threads(
        self,
        request: Request[Principal, Any, Any],
        limit: int | None = LIMIT,
        cursor: str | None = None,
    ) -> ThreadList:
        rows, page = await service.list_threads(request.user, limit=limit, cursor=cursor)
        return typed(ThreadList, {"data": [thread_resource(t) for t in rows], "page": page})

    @post(
        "/",
        opt={"scope": SCOPE_WRITE, "idempotent": True},
        summary="Start a thread with its first message",
        description=PREVIEW + "Participants must share a project with you; a subject needs their visibility.",
    )
    async def create_thread(
        self, request: Request[Principal, Any, Any], data: CreateThreadBody
    ) -> Response[ThreadDocument]:
        subject = {"type": data.subject_ref.type, "id": data.subject_ref.id} if data.subject_ref else None
        thread = await service.create_thread(request.user, data.title, data.participant_ids, subject, data.body)
        return created(typed(ThreadDocument, {"data": thread_resource(thread)}), f"/api/v1/messages/{thread.id}")

    @get("/{thread_id:str}", opt=READ, summary="A thread with its messages, newest first", description=PREVIEW)
    async def get_thread(
        self,
        request: Request[Principal, Any, Any],
        thread_id: str,
        limit: int | None = LIMIT,
        cursor: str | None = None,
    ) -> ThreadWithMessages:
        thread, messages, page = await service.get_thread(request.user, thread_id, limit=limit, cursor=cursor)
        data = {**thread_resource(thread), "messages": [message_resource(m) for m in messages]}
        return typed(ThreadWithMessages, {"data": data, "page": page})

    @post(
        "/{thread_id:str}/messages",
        opt={"scope": SCOPE_WRITE, "idempotent": True},
        summary="Post a message; the other participants are notified",
        description=PREVIEW,
    )
    async def post_message(
        self, request: Request[Principal, Any, Any], thread_id: str, data: PostMessageBody
    ) -> Response[MessageDocument]:
        message = await service.post_message(request.user, thread_id, data.body)
        # A message has no route of its own: `Location` is its thread, which lists it.
        return created(typed(MessageDocument, {"data": message_resource(message)}), f"/api/v1/messages/{thread_id}")

    @post(
        "/{thread_id:str}/read",
        opt={"scope": SCOPE_OPERATE, "idempotent": True},
        summary="Mark the thread read",
        description=PREVIEW,
        status_code=200,
    )
    async def read_thread(self, request: Request[Principal, Any, Any], thread_id: str) -> ThreadDocument:
        thread = await service.mark_thread_read(request.user, thread_id)
        return typed(ThreadDocument, {"data": thread_resource(thread)})
