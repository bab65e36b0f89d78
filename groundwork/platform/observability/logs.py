"""JSON log lines: one object per line, with the request id, principal and workflow id where known.

The HTTP layer sets a `RequestContext` for each request; every line logged while it is handled (in
any task it starts) carries its `request_id` and, once the key is resolved, its `principal_id`. Lines
logged inside a Temporal activity or workflow carry that `workflow_id`. Only whitelisted fields are
written, and anything shaped like an API key, a webhook signing secret or a bearer credential is
masked in the message, as a last line of defence: no code logs them, message or notification bodies.
"""

from __future__ import annotations

import json
import logging
import re
import time
from contextvars import ContextVar
from typing import Any

from temporalio import activity

from groundwork.config import log_level

# Fields an `extra={...}` may add to a line; anything else passed as extra is not written.
EXTRA_FIELDS = ("method", "route", "status", "duration_ms", "workflow_id", "event")

_SECRETS = re.compile(
    r"gw_[A-Za-z0-9_\-]{8,}"  # API keys
    r"|whsec_[A-Za-z0-9+/=_\-]{8,}"  # webhook signing secrets
    r"|(?i:bearer)\s+[^\s\"',]+"  # credentials in an Authorization header
)


class RequestContext:
    """What the lines logged while one HTTP request is handled say about it."""

    __slots__ = ("request_id", "scope", "workflow_id")

    def __init__(self, request_id: str, scope: Any) -> None:
        self.request_id = request_id
        # The ASGI scope: the auth middleware puts the principal in `scope["user"]` after this is set.
        self.scope = scope
        self.workflow_id: str | None = None

    @property
    def principal_id(self) -> str | None:
        """The id of the caller, once its key has been resolved."""
        user = self.scope.get("user")
        principal_id = getattr(user, "id", None)
        return principal_id if isinstance(principal_id, str) else None


current_request: ContextVar[RequestContext | None] = ContextVar("groundwork_request", default=None)


def note_workflow(workflow_id: str) -> None:
    """Record that the current request started or addressed `workflow_id` (its later lines name it)."""
    context = current_request.get()
    if context is not None:
        context.workflow_id = workflow_id


def redact(text: str) -> str:
    """`text` with anything shaped like a key, signing secret or bearer credential masked."""
    return _SECRETS.sub("[redacted]", text)


def _temporal_workflow_id(record: logging.LogRecord) -> str | None:
    for name in ("temporal_activity", "temporal_workflow"):
        details = getattr(record, name, None)
        if isinstance(details, dict) and details.get("workflow_id"):
            return str(details["workflow_id"])
    if activity.in_activity():
        return activity.info().workflow_id
    return None


class JsonFormatter(logging.Formatter):
    """Format a record as one JSON object on one line."""

    def format(self, record: logging.LogRecord) -> str:
        entry: dict[str, Any] = {
            "time": time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(record.created)) + f".{int(record.msecs):03d}Z",
            "level": record.levelname.lower(),
            "logger": record.name,
            "message": redact(record.getMessage()),
            "pid": record.process,
        }
        context = current_request.get()
        if context is not None:
            entry["request_id"] = context.request_id
            principal_id = context.principal_id
            if principal_id is not None:
                entry["principal_id"] = principal_id
            if context.workflow_id is not None:
                entry["workflow_id"] = context.workflow_id
        workflow_id = _temporal_workflow_id(record)
        if workflow_id is not None:
            entry["workflow_id"] = workflow_id
        for name in EXTRA_FIELDS:
            value = record.__dict__.get(name)
            if value is not None:
                entry[name] = value
        if record.exc_info:
            entry["exception"] = redact(self.formatException(record.exc_info))
        return json.dumps(entry, default=str, ensure_ascii=False)


def logging_config(level: str | None = None, *, access_log: bool = False) -> dict[str, Any]:
    """A `logging.config.dictConfig` dict: every logger (uvicorn's too) writes JSON lines to stderr.

    `access_log` turns on one line per request (`groundwork.access`, with its request id, route,
    status and duration); uvicorn's own access lines, which know no request id, stay off.
    """
    level = level or log_level()
    loggers: dict[str, Any] = {
        # uvicorn's loggers have handlers of their own by default: route them to the root's instead.
        name: {"handlers": [], "propagate": True, "level": level}
        for name in ("uvicorn", "uvicorn.error", "litestar")
    }
    loggers["uvicorn.access"] = {"handlers": [], "propagate": False, "level": "WARNING"}
    loggers["groundwork.access"] = {"handlers": [], "propagate": True, "level": "INFO" if access_log else "WARNING"}
    # httpx logs every request's URL at INFO: webhook and chat webhook URLs (which can hold credentials)
    # and action links (signed tokens) must not reach the log.
    for name in ("httpx", "httpcore"):
        loggers[name] = {"handlers": [], "propagate": True, "level": "WARNING"}
    return {
        "version": 1,
        "disable_existing_loggers": False,
        "formatters": {"json": {"()": "groundwork.platform.observability.logs.JsonFormatter"}},
        "handlers": {"stderr": {"class": "logging.StreamHandler", "formatter": "json", "stream": "ext://sys.stderr"}},
        "root": {"handlers": ["stderr"], "level": level},
        "loggers": loggers,
    }


def configure_logging(level: str | None = None, *, access_log: bool = False) -> None:
    """Make this process log JSON lines to stderr."""
    import logging.config

    logging.config.dictConfig(logging_config(level, access_log=access_log))
