"""Message threads: participant-authorized conversations, their limits and input rules."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from groundwork.domain.errors import FieldError, ValidationFailed

MAX_TITLE = 200
MAX_BODY = 10_000
MAX_PARTICIPANTS = 50
# What a thread may be about; its participants must all be able to see it.
SUBJECT_TYPES = ("project", "work_item")


@dataclass(frozen=True)
class NewThread:
    """A validated thread request: title, the other participants, an optional subject, the first message."""

    title: str
    participant_ids: tuple[str, ...]
    subject_type: str | None
    subject_id: str | None
    body: str


def _body_errors(body: Any, path: str) -> list[FieldError]:
    if not isinstance(body, str) or not body.strip():
        return [FieldError(path, "a message needs text")]
    if len(body) > MAX_BODY:
        return [FieldError(path, f"at most {MAX_BODY} characters")]
    if "\x00" in body:
        return [FieldError(path, "must not contain NUL characters")]
    return []


def validate_body(body: Any) -> str:
    """A message body: 1-10,000 characters of text."""
    errors = _body_errors(body, "body")
    if errors:
        raise ValidationFailed("Invalid message.", errors)
    return str(body)


def validate_new_thread(creator_id: str, title: Any, participant_ids: Any, subject_ref: Any, body: Any) -> NewThread:
    """A thread request with every problem reported by path; the creator is always a participant."""
    errors: list[FieldError] = []
    if not isinstance(title, str) or not title.strip() or len(title) > MAX_TITLE or "\x00" in title:
        errors.append(FieldError("title", f"1-{MAX_TITLE} characters"))
    others: list[str] = []
    if not isinstance(participant_ids, list) or not all(isinstance(p, str) for p in participant_ids):
        errors.append(FieldError("participant_ids", "must be an array of principal ids"))
    else:
        others = [p for p in dict.fromkeys(participant_ids) if p != creator_id]
        if not others:
            errors.append(FieldError("participant_ids", "name at least one participant besides yourself"))
        elif len(others) > MAX_PARTICIPANTS:
            errors.append(FieldError("participant_ids", f"at most {MAX_PARTICIPANTS} participants"))
    subject_type = subject_id = None
    if subject_ref is not None:
        if (
            not isinstance(subject_ref, dict)
            or set(subject_ref) - {"type", "id"}
            or subject_ref.get("type") not in SUBJECT_TYPES
            or not isinstance(subject_ref.get("id"), str)
            or not subject_ref["id"]
        ):
            errors.append(
                FieldError("subject_ref", f"must be {{type, id}} with type one of {', '.join(SUBJECT_TYPES)}")
            )
        else:
            subject_type, subject_id = subject_ref["type"], subject_ref["id"]
    errors += _body_errors(body, "body")
    if errors:
        raise ValidationFailed("Invalid thread.", errors)
    return NewThread(" ".join(str(title).split()), tuple(others), subject_type, subject_id, str(body))
