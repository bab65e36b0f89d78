"""What an unreadable index raises: Tantivy's I/O and corruption errors, and its panics (which pyo3 raises as
a `BaseException`), as opposed to a bad query or a bug of ours."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any


class IndexUnreadable(RuntimeError):
    """A search could not read the serving index's files (missing or damaged; its replica rebuilds them)."""


def is_index_failure(exc: BaseException) -> bool:
    """Whether `exc` says the index files are missing, unreadable or corrupted."""
    if type(exc).__name__ == "PanicException":  # pyo3_runtime.PanicException: Tantivy hit bytes it cannot read
        return True
    if isinstance(exc, (FileNotFoundError, IsADirectoryError, NotADirectoryError, PermissionError)):
        return True
    text = str(exc)
    return isinstance(exc, (ValueError, OSError)) and any(
        sign in text for sign in ("IoError", "corrupt", "Corrupt", "InvalidData", "magic", "FileDoesNotExist", "open")
    )


@contextlib.contextmanager
def reading(index: Any) -> Iterator[None]:
    """Read `index`: a failure of its files is reported to it (the process's replica checks them at its next
    round) and raised as `IndexUnreadable`, an ordinary exception even when Tantivy panicked."""
    try:
        yield
    except BaseException as exc:
        if not is_index_failure(exc):
            raise
        index.report_unreadable()  # the next search reloads; this process's replica checks the files at once
        raise IndexUnreadable(f"the {index.folder} index cannot be read: {type(exc).__name__}: {exc}") from None
