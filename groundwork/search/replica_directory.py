"""A search replica's directory: one process per directory, claimed with an exclusive lock for its lifetime.

A process asks for `GROUNDWORK_INDEX_DIR`; if another live process holds it (the other processes of
`groundwork serve --workers N`, or two processes configured alike by mistake), it takes the first free
sibling `<dir>-2`, `<dir>-3`, ... instead, so no two processes ever share a Tantivy writer lock or a
directory. The lock dies with its process (`flock`), and a restarted process finds its replica again
and only catches up. Never put an index directory on a network file system.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
from dataclasses import dataclass
from pathlib import Path

LOCK_FILE = ".replica.lock"
# More processes than this on one machine asking for one directory is a configuration error.
MAX_SLOTS = 64


class NoFreeReplicaDirectory(RuntimeError):
    """Every directory this process may use is held by another process."""


@dataclass
class ClaimedDirectory:
    """A directory this process alone uses for its replica, until `release`."""

    path: Path
    requested: Path
    _fd: int

    def release(self) -> None:
        """Let another process use the directory."""
        if self._fd >= 0:
            with contextlib.suppress(OSError):
                fcntl.flock(self._fd, fcntl.LOCK_UN)
            os.close(self._fd)
            self._fd = -1


def _candidates(requested: Path) -> list[Path]:
    return [requested, *(requested.with_name(f"{requested.name}-{n}") for n in range(2, MAX_SLOTS + 1))]


def claim_directory(requested: Path) -> ClaimedDirectory:
    """Lock `requested` (or its first free sibling) for this process; raises when none is free."""
    for path in _candidates(Path(requested)):
        path.mkdir(parents=True, exist_ok=True)
        fd = os.open(path / LOCK_FILE, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            continue
        os.ftruncate(fd, 0)
        os.write(fd, f"{os.getpid()}\n".encode())
        return ClaimedDirectory(path, Path(requested), fd)
    raise NoFreeReplicaDirectory(f"all {MAX_SLOTS} replica directories beside {requested} are in use")
