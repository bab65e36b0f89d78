"""Reading a search index whose files may be missing or damaged: a coded 503, never a 500 or a wrong page."""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Iterator
from typing import Any

from groundwork.domain.errors import ServiceUnavailable
from groundwork.search.failures import is_index_failure

log = logging.getLogger(__name__)


class SearchIndexUnavailable(ServiceUnavailable):
    """The index cannot be read (missing, corrupted, or being rebuilt by the worker from PostgreSQL)."""


@contextlib.contextmanager
def readable(index: Any) -> Iterator[None]:
    """Index files that cannot be read are a 503 (the worker rebuilds them from PostgreSQL), never a 500."""
    try:
        yield
    except BaseException as exc:
        if not is_index_failure(exc):
            raise
        log.error("the %s index cannot be read: %s: %s", index.folder, type(exc).__name__, exc)
        index.report_unreadable()  # the next search reloads; this process's replica checks the files at once
        raise SearchIndexUnavailable("The search index cannot be read right now; retry shortly.") from None
