"""Descriptions that mean the same wherever a field or argument of that name appears."""

from __future__ import annotations

# Field name -> its description, on any type that has no more particular one.
FIELDS: dict[str, str] = {
    "id": "Its id.",
    "edges": "The page's items, each with the cursor that resumes the list after it.",
    "nodes": "The page's items, in the list's order.",
    "pageInfo": "Whether more items follow and the cursor to continue after.",
    "ok": "True when the mutation did what was asked; false with `errors` otherwise.",
    "idempotencyReplayed": "True when this answer is the replay of an earlier call with the same idempotency key.",
    "errors": "Why the mutation did not do what was asked: each error's code, message and input path.",
    "idempotencyKey": "A key chosen by the caller: a call repeated with it answers the first result and changes "
    "nothing again (the `Idempotency-Key` header does the same).",
    "confirm": "Must be exactly true: the explicit confirmation of a change.",
    "wait": "How many seconds (0-30, default 10) to wait for the work to finish before answering with `pending`.",
    "createdAt": "When it was created.",
    "updatedAt": "When it last changed.",
    "projectId": "The project's id.",
    "engagementId": "The engagement's id.",
    "title": "Its title.",
    "name": "Its name.",
    "key": "Its key, unique in its workspace.",
    "reason": "The reason given, if any.",
    "freshness": "How recent the evidence is.",
    "provenance": "Where it comes from: source, promoter identity and generation time.",
    "coverage": "How much evidence and how many providers stand behind it, and what is missing.",
}

# Argument name -> its description, on any field that has no more particular one.
ARGUMENTS: dict[str, str] = {
    "id": "The id of the object to read.",
    "first": "How many items a page holds (1-100, default 20).",
    "after": "Start after this cursor: the `endCursor` of the previous page, or any edge's cursor.",
    "projectId": "Only this project.",
    "engagementId": "Only this engagement's projects the caller may read.",
    "input": "What the mutation is asked to do.",
    "runId": "The run's id.",
}


def connection_description(node: str) -> str:
    """A connection's description from its node type."""
    return f"A page of {node} items: `edges` with cursors, `nodes` and `pageInfo` to continue."
