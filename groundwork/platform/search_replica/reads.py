"""Reading a search index whose files may be missing or damaged: a coded 503, never a 500 or a wrong page."""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Iterator
from typing import Any

from groundwork.domain.errors import ServiceUnavailable
from groundwork.search.failures import IndexUnreadable, reading

log = logging.getLogger(__name__)


class SearchIndexUnavailable(ServiceUnavailable):
    """The index cannot be read (missing, corrupted, or being rebuilt by the worker from PostgreSQL)."""


@contextlib.contextmanager
def readable(index: Any) -> Iterator[None]:
    """Index files that cannot be read are a 503 (the worker rebuilds them from PostgreSQL), never a 500."""
    try:
        with reading(index):
            yield
    except IndexUnreadable as exc:
        log.error("%s", exc)
        raise SearchIndexUnavailable("The search index cannot be read right now; retry shortly.") from None
