"""Connected apps: what an app declares before activation, and how that declaration bounds its keys."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from groundwork.domain.enhancement.model import ACTION_FIELDS
from groundwork.domain.errors import FieldError, GroundworkError, InsufficientScope, ValidationFailed
from groundwork.domain.tenancy.principals import Principal

SCOPE_MANAGE = "connected-apps:manage"
KINDS = ("assistant", "ide", "chat", "email")
DIRECTIONS = ("read", "propose", "deliver")
CONFLICT_BEHAVIOURS = ("reject",)
STATUSES = ("registered", "active", "inactive")
# Consumer applications read and propose; action sinks deliver (and acknowledge, never dismiss).
KIND_DIRECTIONS: dict[str, tuple[str, ...]] = {
    "assistant": ("read", "propose"),
    "ide": ("read", "propose"),
    "chat": ("deliver",),
    "email": ("deliver",),
}
MAX_NAME = 100
MAX_PROVENANCE = 200

_READ_SCOPES = frozenset(
    {
        "work-items:read",
        "work-item-enhance:read",
        "context-engine:read",
        "context-engine:financial",
        "context-engine:staffing",
        "agent:read",
        "notifications:read",
    }
)
# What each direction lets an app's key do, whatever scopes the key carries: `read` reads only;
# `propose` also creates proposals (enhancement runs, notification change drafts) but never applies
# or writes canonical state; `deliver` reads the recipient's notifications and runs lifecycle
# commands as a sink may.
DIRECTION_SCOPES: dict[str, frozenset[str]] = {
    "read": _READ_SCOPES,
    "propose": _READ_SCOPES | {"work-item-enhance:run", "work-item-enhance:code-context", "notifications:write"},
    "deliver": frozenset({"notifications:read", "notifications:operate"}),
}
# Fields an app may be given authority over: a notification's `status`, and the work item fields
# enhancement drafts propose.
AUTHORITY_FIELDS = ("status", *sorted(set(ACTION_FIELDS.values())))


class AppNotActive(GroundworkError):
    """The key belongs to a connected app that is not active (not yet, or no longer)."""

    status = 403
    code = "app_not_active"
    title = "App not active"

    def __init__(self, app_id: str, app_status: str) -> None:
        super().__init__(
            f"This key belongs to the connected app {app_id}, which is {app_status}; a workspace admin must "
            "activate it first.",
            extra={"app_id": app_id, "app_status": app_status},
        )


class AppDirectionForbidden(GroundworkError):
    """The key's connected app declared a direction that does not allow this."""

    status = 403
    code = "app_direction_forbidden"
    title = "Outside the app's direction"

    def __init__(self, app_id: str, direction: str, detail: str, **extra: Any) -> None:
        super().__init__(detail, extra={"app_id": app_id, "direction": direction, **extra})


class AppFieldNotAuthorized(GroundworkError):
    """The key's connected app has no authority over a field this request would change."""

    status = 403
    code = "app_field_not_authorized"
    title = "Field outside the app's authority"

    def __init__(self, app_id: str, fields: list[str]) -> None:
        super().__init__(
            f"The connected app {app_id} has no authority over {', '.join(fields)}.",
            extra={"app_id": app_id, "fields": fields},
        )


def effective_scopes(scopes: frozenset[str], direction: str | None) -> frozenset[str]:
    """The scopes a key may use: all it carries, or for an app's key only those its direction allows."""
    return scopes if direction is None else scopes & DIRECTION_SCOPES[direction]


def scope_refusal(principal: Principal, scope: str) -> GroundworkError:
    """The error for a caller lacking `scope`: its app's direction when that is why, else the scope."""
    app = principal.app
    if app is not None and scope not in DIRECTION_SCOPES[app.direction]:
        return AppDirectionForbidden(
            app.id,
            app.direction,
            f"The connected app {app.name!r} declared the direction {app.direction!r}, which does not allow "
            f"what needs {scope!r}.",
            required_scope=scope,
        )
    return InsufficientScope(scope)


def check_field_authority(principal: Principal, fields: list[str]) -> None:
    """Refuse a change by an app's key to fields outside the app's declared authority."""
    app = principal.app
    if app is None:
        return
    outside = sorted({f for f in fields if f not in app.field_authority})
    if outside:
        raise AppFieldNotAuthorized(app.id, outside)


def check_sink_command(principal: Principal, command: str, allowed: frozenset[str]) -> None:
    """A `deliver` app is an action sink: it may run only the commands a sink may."""
    app = principal.app
    if app is not None and app.direction == "deliver" and command not in allowed:
        raise AppDirectionForbidden(
            app.id, app.direction, f"An action sink may not {command} a notification.", command=command
        )


@dataclass(frozen=True)
class Declaration:
    """What an app declares at registration: who it is, its direction, authority, provenance, conflicts."""

    name: str
    kind: str
    direction: str
    field_authority: tuple[str, ...]
    provenance: str
    conflict: str


def validate_declaration(
    name: Any, kind: Any, direction: Any, field_authority: Any, provenance: Any, conflict: Any
) -> Declaration:
    """A complete, consistent declaration, or a 422 listing every problem."""
    errors: list[FieldError] = []
    if not isinstance(name, str) or not name.strip() or len(name) > MAX_NAME:
        errors.append(FieldError("name", f"1-{MAX_NAME} characters"))
    if kind not in KINDS:
        errors.append(FieldError("kind", f"must be one of {', '.join(KINDS)}"))
    if direction not in DIRECTIONS:
        errors.append(FieldError("direction", f"must be one of {', '.join(DIRECTIONS)}"))
    elif kind in KINDS and direction not in KIND_DIRECTIONS[kind]:
        errors.append(FieldError("direction", f"a {kind} app's direction is one of {', '.join(KIND_DIRECTIONS[kind])}"))
    fields: list[str] = []
    if not isinstance(field_authority, list) or not all(isinstance(f, str) for f in field_authority):
        errors.append(FieldError("field_authority", "must be an array of field names (may be empty)"))
    else:
        fields = list(dict.fromkeys(field_authority))
        for index, name_ in enumerate(fields):
            if name_ not in AUTHORITY_FIELDS:
                errors.append(
                    FieldError(f"field_authority[{index}]", f"unknown field; one of {', '.join(AUTHORITY_FIELDS)}")
                )
        if direction == "read" and fields:
            errors.append(FieldError("field_authority", "a read app sets no field: leave it empty"))
        if direction == "deliver" and any(f != "status" for f in fields):
            errors.append(FieldError("field_authority", "a deliver app may hold authority over status only"))
    if not isinstance(provenance, str) or not provenance.strip() or len(provenance) > MAX_PROVENANCE:
        errors.append(FieldError("provenance", f"how the app labels what it submits, 1-{MAX_PROVENANCE} characters"))
    if conflict not in CONFLICT_BEHAVIOURS:
        errors.append(FieldError("conflict", "must be reject (a version conflict is refused, never merged)"))
    if errors:
        raise ValidationFailed("Invalid app declaration.", errors)
    return Declaration(str(name).strip(), str(kind), str(direction), tuple(fields), str(provenance).strip(), "reject")
