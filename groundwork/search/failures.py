"""What an unreadable index raises: Tantivy's I/O and corruption errors, and its panics (which pyo3 raises as
a `BaseException`), as opposed to a bad query or a bug of ours."""

from __future__ import annotations


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
