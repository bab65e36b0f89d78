"""Errors every transport renders the same way: a stable `code`, an HTTP status, and extra members."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass
class FieldError:
    """One invalid input value: where it is (`path`, e.g. `body.fields.estimate`) and what is wrong."""

    path: str
    message: str


class GroundworkError(Exception):
    """A failure a caller can act on; `code` is stable and documented in DESIGN.md."""

    status: int = 400
    code: str = "invalid_request"
    title: str = "Invalid request"

    def __init__(self, detail: str, *, extra: dict[str, Any] | None = None) -> None:
        super().__init__(detail)
        self.detail = detail
        self.extra: dict[str, Any] = extra or {}

    def summary(self) -> str:
        """The failure in one line for a report (an import's or a contribution file's): its detail."""
        return self.detail


class InvalidRequest(GroundworkError):
    """Malformed JSON, wrong types or unknown fields."""

    def __init__(self, detail: str, errors: list[FieldError] | None = None) -> None:
        extra = {"errors": [{"path": e.path, "message": e.message} for e in errors]} if errors else {}
        super().__init__(detail, extra=extra)
        self.errors = errors or []

    def summary(self) -> str:
        """Each field's error (`path: message`), or the detail when none is named."""
        return "; ".join(f"{e.path}: {e.message}" for e in self.errors) if self.errors else self.detail


class UnusableValue(InvalidRequest):
    """A value the caller sent that the database cannot store or compare (a NUL character, a number out of
    range): 400 `invalid_request` on every transport, saying what kind of value, never the driver's words."""

    def __init__(self, what: str) -> None:
        super().__init__(
            "A value in the request cannot be stored or compared.", [FieldError("request", f"{what}; send another")]
        )


class ValidationFailed(InvalidRequest):
    """Well-formed input that breaks a rule (a value out of range, an unknown project)."""

    status = 422
    code = "validation_failed"
    title = "Validation failed"


class Unauthenticated(GroundworkError):
    status = 401
    code = "unauthenticated"
    title = "Unauthenticated"


class InsufficientScope(GroundworkError):
    status = 403
    code = "insufficient_scope"
    title = "Insufficient scope"

    def __init__(self, required_scope: str) -> None:
        super().__init__(
            f"This API key lacks the scope {required_scope!r}.",
            extra={"required_scope": required_scope},
        )


class PermissionDenied(GroundworkError):
    """The caller sees the project, but its role there does not allow this change."""

    status = 403
    code = "permission_denied"
    title = "Permission denied"

    def __init__(self, detail: str, required_permission: str) -> None:
        super().__init__(detail, extra={"required_permission": required_permission})


class NotFound(GroundworkError):
    status = 404
    code = "not_found"
    title = "Not found"


class PassageSuperseded(GroundworkError):
    """A passage of a source version (or a segmenter version) that no longer serves: the body names what serves
    in its place (`active_passage_id`, null when nothing serving holds its text) and the source's active version."""

    status = 410
    code = "passage_superseded"
    title = "Passage superseded"

    def __init__(self, detail: str, *, active_passage_id: str | None, active_version_id: str | None) -> None:
        super().__init__(detail, extra={"active_passage_id": active_passage_id, "active_version_id": active_version_id})


class MethodNotAllowed(GroundworkError):
    status = 405
    code = "method_not_allowed"
    title = "Method not allowed"


class PayloadTooLarge(GroundworkError):
    status = 413
    code = "payload_too_large"
    title = "Payload too large"


class UnsupportedMediaType(GroundworkError):
    status = 415
    code = "unsupported_media_type"
    title = "Unsupported media type"


class VersionConflict(GroundworkError):
    """An `expected_version` guard failed; the body carries `current_version`."""

    status = 409
    code = "version_conflict"
    title = "Version conflict"

    def __init__(self, detail: str, current_version: Any) -> None:
        super().__init__(detail, extra={"current_version": current_version})


class IdempotencyKeyRequired(GroundworkError):
    code = "idempotency_key_required"
    title = "Idempotency-Key required"


class IdempotencyKeyInUse(GroundworkError):
    # Sent as `Retry-After`: a live request refreshes its claim; one of a process that died is taken over
    # by a retry after 10 s (persistence.repositories.idempotency.ABANDONED_AFTER).
    status = 409
    code = "idempotency_key_in_use"
    title = "Idempotency-Key in use"
    retry_after_seconds = 2


class IdempotencyKeyReused(GroundworkError):
    status = 422
    code = "idempotency_key_reused"
    title = "Idempotency-Key reused"


class ServiceUnavailable(GroundworkError):
    """A dependency (Temporal, PostgreSQL) cannot be reached right now; retrying later may succeed."""

    status = 503
    code = "service_unavailable"
    title = "Service unavailable"
    # Sent as `Retry-After`: long enough for a restart of PostgreSQL or Temporal to finish.
    retry_after_seconds = 5


class RateLimited(GroundworkError):
    status = 429
    code = "rate_limited"
    title = "Too many requests"

    def __init__(self, retry_after_seconds: int, headers: dict[str, str] | None = None) -> None:
        super().__init__(f"Rate limit exceeded; retry after {retry_after_seconds} s.")
        self.retry_after_seconds = retry_after_seconds
        # The quota's own header fields (`RateLimit-Policy`, `RateLimit`) when a per-key limit refused.
        self.headers = headers or {}
