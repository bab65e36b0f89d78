"""A dependency out of reach, whatever raised it, is the caller's coded 503 `service_unavailable`."""

from __future__ import annotations

from groundwork.domain.errors import ServiceUnavailable
from groundwork.persistence.db import DatabaseUnavailable, is_connection_failure
from groundwork.platform.temporal.client import is_unreachable


def unavailable(exc: BaseException) -> ServiceUnavailable | None:
    """The 503 that `exc` stands for when it says PostgreSQL or Temporal is unreachable, else None."""
    if isinstance(exc, ServiceUnavailable):
        return exc
    if is_connection_failure(exc):
        return DatabaseUnavailable("The database cannot be reached right now; retry shortly.")
    if is_unreachable(exc):
        return ServiceUnavailable("The workflow service cannot be reached right now; retry shortly.")
    return None
