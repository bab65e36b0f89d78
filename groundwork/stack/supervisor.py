"""`groundwork up`: PostgreSQL, the Temporal dev server, the worker and the API on one machine."""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import os
import signal
import socket
import subprocess
import sys
import time
import traceback
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from types import FrameType
from typing import IO

import httpx

from groundwork.config import secret_key_from_env
from groundwork.platform.secrets.keyring import ENV_VARIABLE as SECRET_KEY_VARIABLE
from groundwork.platform.secrets.keyring import ensure_key_file
from groundwork.stack.addresses import StackAddresses, forget_addresses, record_addresses
from groundwork.stack.first_run import FIRST_RUN_HINT, has_workspace
from groundwork.stack.postgres import EmbeddedPostgres, start_postgres
from groundwork.stack.temporal_dev import TemporalDevServer, TemporalStartError, die_with_parent

TASK_QUEUE = "groundwork"
NAMESPACE = "default"
READY_TIMEOUT = 60.0
STOP_TIMEOUT = 10.0
# A crashed worker or API is restarted after a backoff that doubles from RESTART_BACKOFF to
# RESTART_BACKOFF_MAX seconds; after RESTART_LIMIT crashes of one part within RESTART_WINDOW seconds
# `up` gives up and stops the stack in order. A part that stays up for RESTART_WINDOW starts afresh.
RESTART_BACKOFF = 1.0
RESTART_BACKOFF_MAX = 8.0
RESTART_LIMIT = 5
RESTART_WINDOW = 60.0
_STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


@dataclass(kw_only=True)
class UpOptions:
    """What `groundwork up` was asked to run."""

    host: str = "127.0.0.1"
    port: int = 8000
    # The internal API (/internal/v1) listens on the loopback only, whatever `host` is.
    internal_port: int = 8001
    data_dir: Path
    temporal_port: int = 7233
    ui_port: int = 8233
    demo: bool = False
    # A local SMTP server printing received mail, and the worker's GROUNDWORK_SMTP_URL pointed at it.
    smtp_sink: bool = False
    smtp_port: int = 2525
    # The worker's Prometheus metrics (Groundwork's and the Temporal SDK's), on the loopback.
    worker_metrics_port: int = 8002


class _StartupFailed(Exception):
    """A part did not come up; the message says which and why."""


class _Interrupted(Exception):
    """A stop signal arrived while the stack was starting."""


@dataclass
class _StopRequest:
    """Set by the signal handlers; the main loop polls it so the stop order stays in our hands."""

    signum: int | None = None

    def __call__(self, signum: int, frame: FrameType | None) -> None:
        if self.signum is None:
            self.signum = signum

    def check(self) -> None:
        if self.signum is not None:
            raise _Interrupted


@dataclass
class _Child:
    """A worker or API subprocess with its log file; restartable with the same command and environment."""

    name: str
    command: list[str]
    env: dict[str, str]
    process: subprocess.Popen[bytes]
    log_path: Path
    log_offset: int
    log: IO[bytes]
    crashes: list[float] = field(default_factory=list)

    def exited_report(self) -> str | None:
        return _exited_report(self.name, self.process.poll(), self.log_path, self.log_offset)

    def respawn(self) -> None:
        """Start the command again in place of the exited process, appending to the same log."""
        # The dead child led its own process group: nothing it left behind may hold its port or files.
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.process.pid, signal.SIGKILL)
        self.log.close()
        self.log = self.log_path.open("ab")
        self.log_offset = self.log.tell()
        self.process = _popen(self.command, self.env, self.log)

    def stop(self) -> str:
        killed = False
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(STOP_TIMEOUT)
            except subprocess.TimeoutExpired:
                self.process.kill()
                killed = True
        code = self.process.wait()
        # The child led its own process group: take down anything it left behind.
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.process.pid, signal.SIGKILL)
        self.log.close()
        return _stopped(code, killed)


@dataclass
class _Stack:
    """Started parts, stopped in reverse order of start."""

    parts: list[tuple[str, Callable[[], str]]] = field(default_factory=list)

    def started(self, label: str, stop: Callable[[], str]) -> None:
        self.parts.append((label, stop))

    def stop_all(self) -> None:
        while self.parts:
            label, stop = self.parts.pop()
            try:
                outcome = stop()
            except Exception as exc:
                outcome = f"failed to stop: {exc!r}"
            _say(label, outcome)


def run_up(options: UpOptions) -> int:
    """Run the embedded stack until SIGINT or SIGTERM, then stop it in reverse order; return the exit code."""
    data_dir = options.data_dir.expanduser().resolve()
    (data_dir / "logs").mkdir(parents=True, exist_ok=True)
    lock_fd = _lock_data_dir(data_dir)
    if lock_fd is None:
        holder = (data_dir / "up.lock").read_text().strip() or "?"
        _say(f"Another `groundwork up` (pid {holder}) is already running on {data_dir}; stop it first.")
        return 1
    stop_request = _StopRequest()
    previous = {sig: signal.signal(sig, stop_request) for sig in _STOP_SIGNALS}
    stack = _Stack()
    try:
        supervised = _start(options, data_dir, stack, stop_request)
        return _supervise(supervised, stop_request)
    except _Interrupted:
        return 0
    except _StartupFailed as exc:
        _say(f"groundwork up failed: {exc}")
        return 1
    except Exception:
        _say("groundwork up failed:\n" + traceback.format_exc().rstrip())
        return 1
    finally:
        if stack.parts:
            _say("Stopping...")
        stack.stop_all()
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        os.close(lock_fd)


# A watch returns None while its part is healthy, else a report of how it failed.
_Watch = Callable[[], "str | None"]


def _start(options: UpOptions, data_dir: Path, stack: _Stack, stop_request: _StopRequest) -> _Supervised:
    api_url = f"http://{_url_host(_client_host(options.host))}:{options.port}"
    _require_free_ports(
        [
            ("API", options.host, options.port),
            ("Internal API", "127.0.0.1", options.internal_port),
            ("Temporal", "127.0.0.1", options.temporal_port),
            ("Temporal UI", "127.0.0.1", options.ui_port),
            ("Worker metrics", "127.0.0.1", options.worker_metrics_port),
            *([("SMTP sink", "127.0.0.1", options.smtp_port)] if options.smtp_sink else []),
        ]
    )
    # The key ring that signs action links: the environment's, else one kept in (and generated into) the data dir.
    secret_key = secret_key_from_env() or ensure_key_file(data_dir)

    with _signals_deferred():
        postgres = start_postgres(data_dir)
    stack.started("PostgreSQL", lambda: _stop_postgres(postgres))
    _say("PostgreSQL", postgres.dsn)
    stop_request.check()
    demo_key = _migrate_and_seed(postgres.dsn, options.demo)
    stop_request.check()

    temporal = TemporalDevServer(data_dir, port=options.temporal_port, ui_port=options.ui_port, namespace=NAMESPACE)
    temporal.start()
    stack.started("Temporal", lambda: _stopped(temporal.stop(STOP_TIMEOUT)))
    try:
        temporal.wait_ready(READY_TIMEOUT)
    except TemporalStartError as exc:
        raise _StartupFailed(f"{exc}\n{_tail(temporal.log_path, temporal.log_offset)}") from exc
    _say("Temporal", temporal.address)
    stop_request.check()

    env = {
        # Defaults the operator's own environment overrides: the embedded stack is for local use, so webhook
        # receivers on this machine are allowed, and action links in e-mail and chat point at this API.
        "GROUNDWORK_WEBHOOK_ALLOW_PRIVATE": "1",
        "GROUNDWORK_PUBLIC_URL": api_url,
        **os.environ,
        "DATABASE_URL": postgres.dsn,
        "TEMPORAL_ADDRESS": temporal.address,
        "TEMPORAL_NAMESPACE": NAMESPACE,
        "TEMPORAL_TASK_QUEUE": TASK_QUEUE,
        # Worker and API find the search index and other local state under the same data dir.
        "GROUNDWORK_HOME": str(data_dir),
        # Unbuffered, so a crash leaves its last words in the log we show.
        "PYTHONUNBUFFERED": "1",
        SECRET_KEY_VARIABLE: secret_key,
    }
    if options.smtp_sink:
        from groundwork.stack.smtp_sink import SmtpSink

        sink = SmtpSink("127.0.0.1", options.smtp_port)
        sink.start()
        stack.started("SMTP sink", sink.stop)
        env["GROUNDWORK_SMTP_URL"] = sink.url
        _say("SMTP sink", f"{sink.url} (received mail is printed here)")
    cli = [sys.executable, "-m", "groundwork.cli"]
    # Each process keeps its own search replica: the worker in `index/` (where `groundwork ingest`,
    # `reindex` and `mcp` find it), the API in `index-api/`.
    worker_env = {**env, "GROUNDWORK_INDEX_DIR": str(data_dir / "index")}
    worker_command = [*cli, "worker", "--metrics-port", str(options.worker_metrics_port)]
    worker = _spawn("Worker", worker_command, worker_env, data_dir / "logs" / "worker.log")
    stack.started("Worker", worker.stop)
    api = _spawn(
        "API",
        [
            *cli,
            "serve",
            "--host",
            options.host,
            "--port",
            str(options.port),
            "--internal-host",
            "127.0.0.1",
            "--internal-port",
            str(options.internal_port),
        ],
        {**env, "GROUNDWORK_INDEX_DIR": str(data_dir / "index-api")},
        data_dir / "logs" / "api.log",
    )
    stack.started("API", api.stop)

    watches: list[_Watch] = [
        lambda: None if postgres.is_running() else f"PostgreSQL exited; see {postgres.log_path}",
        lambda: _exited_report("Temporal", temporal.poll(), temporal.log_path, temporal.log_offset),
        worker.exited_report,
        api.exited_report,
    ]
    _wait_ready(f"{api_url}/health/ready", watches, stop_request)
    supervised = _Supervised(watches[:2], [worker, api])

    record_addresses(
        data_dir,
        StackAddresses(
            api=api_url,
            internal_api=f"http://127.0.0.1:{options.internal_port}",
            temporal=temporal.address,
            temporal_namespace=NAMESPACE,
            temporal_task_queue=TASK_QUEUE,
            temporal_ui=temporal.ui_url,
            worker_metrics=f"http://127.0.0.1:{options.worker_metrics_port}",
            pid=os.getpid(),
        ),
    )
    stack.started("Addresses", lambda: forget_addresses(data_dir, os.getpid()))
    _say("API", api_url)
    _say("REST docs", f"{api_url}/schema")
    _say("GraphiQL", f"{api_url}/graphql")
    _say("MCP", f"{api_url}/mcp")
    _say("Metrics", f"{api_url}/metrics (API), http://127.0.0.1:{options.worker_metrics_port}/metrics (worker)")
    _say("Internal API", f"http://127.0.0.1:{options.internal_port}/internal/v1 (provider keys; docs at /schema)")
    _say("Temporal UI", temporal.ui_url)
    if demo_key is not None:
        _say("Demo API key", demo_key)
    elif not has_workspace(postgres.dsn):
        _say(FIRST_RUN_HINT)
    else:
        _say("API key", "create one with: groundwork keys create --workspace SLUG --principal NAME --all-scopes")
    _say("Press Ctrl-C to stop.")
    return supervised


@dataclass
class _Supervised:
    """What `up` watches once the stack runs: parts whose death ends it, and children it restarts."""

    fatal: list[_Watch]
    children: list[_Child]
    # When each crashed child is due to start again.
    due: dict[str, float] = field(default_factory=dict)


def _supervise(supervised: _Supervised, stop_request: _StopRequest) -> int:
    """Watch the stack until a stop signal: restart a crashed worker or API with backoff; give up (1)
    when PostgreSQL or Temporal dies or a child crashes RESTART_LIMIT times within RESTART_WINDOW."""
    while stop_request.signum is None:
        for watch in supervised.fatal:
            failure = watch()
            if failure is not None:
                _say(failure)
                return 1
        now = time.monotonic()
        for child in supervised.children:
            if child.name in supervised.due:
                if now >= supervised.due[child.name]:
                    del supervised.due[child.name]
                    child.respawn()
                    _say(child.name, f"restarted (pid {child.process.pid})")
                continue
            report = child.exited_report()
            if report is None:
                continue
            child.crashes = [at for at in child.crashes if now - at < RESTART_WINDOW] + [now]
            if len(child.crashes) >= RESTART_LIMIT:
                _say(report)
                _say(f"{child.name} crashed {len(child.crashes)} times within {RESTART_WINDOW:.0f} s; giving up.")
                return 1
            delay = min(RESTART_BACKOFF * 2 ** (len(child.crashes) - 1), RESTART_BACKOFF_MAX)
            _say(report)
            _say(
                child.name,
                f"crashed; restarting in {delay:.0f} s (crash {len(child.crashes)} of {RESTART_LIMIT} "
                f"allowed within {RESTART_WINDOW:.0f} s)",
            )
            supervised.due[child.name] = now + delay
        time.sleep(0.2)
    return 0


def _migrate_and_seed(dsn: str, demo: bool) -> str | None:
    from groundwork.persistence.migrate import apply_migrations

    applied = asyncio.run(apply_migrations(dsn))
    _say("Migrations", f"applied {', '.join(applied)}" if applied else "up to date")
    if not demo:
        return None
    from groundwork.demo.seed import seed_demo

    key = asyncio.run(seed_demo(dsn))
    _say("Demo data", "workspace demo, principal admin")
    return key


def _wait_ready(url: str, watches: list[_Watch], stop_request: _StopRequest) -> None:
    deadline = time.monotonic() + READY_TIMEOUT
    building = False
    with httpx.Client(timeout=2.0) as client:
        while True:
            stop_request.check()
            for watch in watches:
                failure = watch()
                if failure is not None:
                    raise _StartupFailed(failure)
            with contextlib.suppress(httpx.HTTPError, ValueError):
                response = client.get(url)
                if response.status_code == 200:
                    return
                checks = response.json().get("checks", {})
                if checks.get("search") == "catching_up" and set(checks.values()) == {"ok", "catching_up"}:
                    # Building the API's search replica from PostgreSQL takes as long as the corpus needs.
                    if not building:
                        _say("Search", "the API is building its search replica from PostgreSQL ...")
                        building = True
                    deadline = time.monotonic() + READY_TIMEOUT
            if time.monotonic() > deadline:
                raise _StartupFailed(f"{url} did not answer 200 within {READY_TIMEOUT:.0f} s")
            time.sleep(0.2)


def _spawn(name: str, command: list[str], env: dict[str, str], log_path: Path) -> _Child:
    log = log_path.open("ab")
    offset = log.tell()
    return _Child(name, command, env, _popen(command, env, log), log_path, offset, log)


def _popen(command: list[str], env: dict[str, str], log: IO[bytes]) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        command,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=log,
        stderr=subprocess.STDOUT,
        # Own session: a terminal's Ctrl-C reaches only us, and we stop the parts in order.
        start_new_session=True,
        preexec_fn=die_with_parent,
    )


def _stop_postgres(postgres: EmbeddedPostgres) -> str:
    others = postgres.other_holders()
    # pg_ctl shares our process group: a second Ctrl-C must not kill it halfway through the stop.
    with _signals_deferred():
        stopped = postgres.stop()
    if stopped:
        return "stopped"
    return f"left running for pids {others} (the last of them stops it)"


def _stopped(code: int | None, killed: bool = False) -> str:
    if killed:
        return f"killed after {STOP_TIMEOUT:.0f} s"
    if code is None or code == 0:
        return "stopped"
    # uvicorn, among others, re-raises the SIGTERM it handled once it has shut down gracefully.
    if code < 0:
        return f"stopped ({signal.Signals(-code).name})"
    return f"stopped (exit {code})"


def _exited_report(name: str, code: int | None, log_path: Path, offset: int) -> str | None:
    if code is None:
        return None
    return f"{name} exited unexpectedly (exit {code}); last lines of {log_path}:\n{_tail(log_path, offset)}"


def _tail(path: Path, offset: int = 0, lines: int = 40) -> str:
    try:
        with path.open("rb") as f:
            f.seek(offset)
            data = f.read()
    except OSError:
        return ""
    return "\n".join("    " + line for line in data.decode("utf-8", "replace").splitlines()[-lines:])


@contextlib.contextmanager
def _signals_deferred() -> Iterator[None]:
    # Blocked signals stay pending and reach our handler afterwards; children started meanwhile
    # (pg_ctl) inherit the mask, so the terminal's Ctrl-C cannot kill them mid-way.
    previous = signal.pthread_sigmask(signal.SIG_BLOCK, _STOP_SIGNALS)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, previous)


def _lock_data_dir(data_dir: Path) -> int | None:
    fd = os.open(data_dir / "up.lock", os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        return None
    os.ftruncate(fd, 0)
    os.write(fd, f"{os.getpid()}\n".encode())
    return fd


def _require_free_ports(wanted: list[tuple[str, str, int]]) -> None:
    for name, host, port in wanted:
        family = socket.AF_INET6 if ":" in host else socket.AF_INET
        with socket.socket(family, socket.SOCK_STREAM) as probe:
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            try:
                probe.bind((host, port))
            except OSError as exc:
                raise _StartupFailed(f"{name} port {host}:{port} is not available ({exc.strerror})") from exc


def _client_host(host: str) -> str:
    """Where to reach a server bound to `host`: the loopback for wildcard binds."""
    return {"0.0.0.0": "127.0.0.1", "": "127.0.0.1", "::": "::1"}.get(host, host)


def _url_host(host: str) -> str:
    return f"[{host}]" if ":" in host else host


def _say(label: str, value: str | None = None) -> None:
    print(label if value is None else f"{label:<12} {value}", flush=True)
