"""`groundwork up` end to end: the embedded stack starts, serves, stops cleanly and keeps its data."""

from __future__ import annotations

import contextlib
import json
import os
import queue
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import psutil
import pytest

from tests.conftest import free_port

START_TIMEOUT = 120.0
STOP_TIMEOUT = 60.0


def _alive(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


def _processes_using(data_dir: Path) -> list[str]:
    """Live processes whose command line names the data dir (PostgreSQL and Temporal do)."""
    found = []
    for proc in psutil.process_iter(["cmdline"]):
        cmdline: list[str] = proc.info["cmdline"] or []
        if any(str(data_dir) in part for part in cmdline):
            found.append(f"{proc.pid}: {' '.join(cmdline)}")
    return found


class UpProcess:
    """One `groundwork up --demo` subprocess on free ports, its stdout read line by line."""

    def __init__(self, data_dir: Path, extra_args: tuple[str, ...] = ()) -> None:
        self.data_dir = data_dir
        self.port = free_port()
        self.internal_port = free_port()
        self.temporal_port = free_port()
        self.worker_metrics_port = free_port()
        command = [
            sys.executable,
            "-m",
            "groundwork.cli",
            "up",
            "--demo",
            "--data-dir",
            str(data_dir),
            "--port",
            str(self.port),
            "--internal-port",
            str(self.internal_port),
            "--temporal-port",
            str(self.temporal_port),
            "--worker-metrics-port",
            str(self.worker_metrics_port),
            "--ui-port",
            str(free_port()),
            *extra_args,
        ]
        self.process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        self.lines: list[str] = []
        self._queue: queue.Queue[str | None] = queue.Queue()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def output(self) -> str:
        return "\n".join(self.lines)

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self._queue.put(line.rstrip("\n"))
        self._queue.put(None)

    def wait_for(self, prefix: str, timeout: float) -> str:
        """The rest of the first output line starting with `prefix`."""
        deadline = time.monotonic() + timeout
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                pytest.fail(f"no {prefix!r} line within {timeout:.0f} s; output:\n{self.output}")
            try:
                line = self._queue.get(timeout=remaining)
            except queue.Empty:
                continue
            if line is None:
                code = self.process.wait()
                pytest.fail(f"`groundwork up` exited ({code}) before {prefix!r}; output:\n{self.output}")
            self.lines.append(line)
            if line.startswith(prefix):
                return line.removeprefix(prefix).strip()

    def interrupt(self) -> int:
        """Ctrl-C, as a terminal would send it; returns the exit code."""
        self.process.send_signal(signal.SIGINT)
        code = self.process.wait(STOP_TIMEOUT)
        self._drain()
        return code

    def _drain(self) -> None:
        self._reader.join(5)
        while True:
            try:
                line = self._queue.get_nowait()
            except queue.Empty:
                return
            if line is not None:
                self.lines.append(line)

    def close(self) -> None:
        """Leave nothing running, whatever state the test stopped in."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGINT)
            try:
                self.process.wait(30)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        for proc in psutil.process_iter(["cmdline"]):
            if any(str(self.data_dir) in part for part in proc.info["cmdline"] or []):
                with contextlib.suppress(psutil.Error):
                    proc.kill()
        if self.process.stdout is not None:
            self.process.stdout.close()


@dataclass
class UpRun:
    """What one `groundwork up` run showed, from start to Ctrl-C."""

    data_dir: Path
    key: str
    projects_status: int
    project_ids: list[str]
    running_before_stop: list[str]
    child_pids: list[int]
    exit_code: int
    output: str
    left_running: list[str] = field(default_factory=list)
    children_alive: list[int] = field(default_factory=list)
    context: dict[str, int] = field(default_factory=dict)
    internal: dict[str, object] = field(default_factory=dict)
    observability: dict[str, Any] = field(default_factory=dict)


def _run_once(data_dir: Path) -> UpRun:
    up = UpProcess(data_dir)
    try:
        key = up.wait_for("Demo API key", START_TIMEOUT)
        up.wait_for("Press Ctrl-C to stop.", 10)
        with httpx.Client(base_url=up.base_url, timeout=10) as client:
            deadline = time.monotonic() + 30
            while client.get("/health/ready").status_code != 200:
                assert time.monotonic() < deadline, "/health/ready never answered 200"
                time.sleep(0.2)
            response = client.get("/api/v1/projects", headers={"Authorization": f"Bearer {key}"})
            context = _context_engine(client, up, key)
            internal = _internal_api(client, up)
            observability = _observability(client, up)
        child_pids = [child.pid for child in psutil.Process(up.process.pid).children(recursive=True)]
        running = _processes_using(data_dir)
        exit_code = up.interrupt()
        return UpRun(
            data_dir=data_dir,
            key=key,
            projects_status=response.status_code,
            project_ids=[p["id"] for p in response.json()["data"]] if response.status_code == 200 else [],
            running_before_stop=running,
            child_pids=child_pids,
            exit_code=exit_code,
            output=up.output,
            left_running=_processes_using(data_dir),
            children_alive=[pid for pid in child_pids if _alive(pid)],
            context=context,
            internal=internal,
            observability=observability,
        )
    finally:
        up.close()


def _internal_api(client: httpx.Client, up: UpProcess) -> dict[str, object]:
    """What the internal listener and the public one answer about the internal API."""
    provider = subprocess.run(
        [
            sys.executable,
            "-m",
            "groundwork.cli",
            "keys",
            "create",
            "--data-dir",
            str(up.data_dir),
            "--workspace",
            "demo",
            "--principal",
            "risk-radar",
            "--kind",
            "provider",
            "--admin",
            "--scope",
            "context-engine:contribute",
        ],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    headers = {"Authorization": f"Bearer {provider}", "Idempotency-Key": "e2e-register"}
    body = {"name": "risk-radar", "classification": "delivery", "capabilities": ["risks"]}
    internal = f"http://127.0.0.1:{up.internal_port}"
    with httpx.Client(timeout=10) as http:
        registered = http.post(f"{internal}/internal/v1/context-engine/providers", json=body, headers=headers)
        internal_paths = list(http.get(f"{internal}/schema/openapi.json").json()["paths"])
    on_public = client.post("/internal/v1/context-engine/providers", json=body, headers=headers)
    public_paths = list(client.get("/schema/openapi.json").json()["paths"])
    return {
        "registered": registered.status_code,
        "on_public": on_public.status_code,
        "internal_paths": internal_paths,
        "public_paths": public_paths,
    }


def _observability(client: httpx.Client, up: UpProcess) -> dict[str, Any]:
    """The API's and the worker's /metrics, and what `groundwork status` says about the stack."""
    worker_metrics = ""
    deadline = time.monotonic() + 30
    while "temporal_num_pollers" not in worker_metrics and time.monotonic() < deadline:
        # The SDK reports its pollers once the worker has started polling.
        worker_metrics = httpx.get(f"http://127.0.0.1:{up.worker_metrics_port}/metrics", timeout=10).text
        time.sleep(0.5)
    status = subprocess.run(
        [sys.executable, "-m", "groundwork.cli", "status", "--json", "--data-dir", str(up.data_dir)],
        capture_output=True,
        text=True,
        env={**os.environ, "GROUNDWORK_PUBLIC_URL": up.base_url, "TEMPORAL_ADDRESS": f"127.0.0.1:{up.temporal_port}"},
    )
    return {
        "api_metrics": client.get("/metrics").text,
        "worker_metrics": worker_metrics,
        "status_code": status.returncode,
        "status": status.stdout + status.stderr,
    }


def _packages(client: httpx.Client, key: str) -> int:
    overview = client.get("/api/v1/context-engine", headers={"Authorization": f"Bearer {key}"}).json()["data"]
    return sum(overview["counts"]["byStatus"][s] for s in ("ready", "stale"))


def _context_engine(client: httpx.Client, up: UpProcess, key: str) -> dict[str, int]:
    """What a new user's first overview and briefing show, with every scope and without the financial one."""
    headers = {"Authorization": f"Bearer {key}"}
    projects = client.get("/api/v1/projects", headers=headers).json()["data"]
    pay = next(p["id"] for p in projects if p["key"] == "PAY")
    claims = 0
    deadline = time.monotonic() + 30
    while claims == 0 and time.monotonic() < deadline:  # the worker indexes the seeded packages as it starts
        answer = client.post(
            "/api/v1/context/query",
            json={"question": "What are the risks and decisions?", "project_id": pay},
            headers=headers,
        ).json()["data"]
        claims = len(answer["risks"]) + len(answer["findings"]) + len(answer["blockers"])
        time.sleep(0.2)
    plain = subprocess.run(
        [
            sys.executable,
            "-m",
            "groundwork.cli",
            "keys",
            "create",
            "--data-dir",
            str(up.data_dir),
            "--workspace",
            "demo",
            "--principal",
            "analyst",
            "--admin",
            "--scope",
            "context-engine:read",
        ],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    return {"claims": claims, "all": _packages(client, key), "plain": _packages(client, plain)}


@pytest.fixture(scope="module")
def first_run(tmp_path_factory: pytest.TempPathFactory) -> UpRun:
    return _run_once(tmp_path_factory.mktemp("up") / "data")


def test_up_serves_the_demo_and_stops_cleanly(first_run: UpRun) -> None:
    run = first_run
    assert run.key, run.output
    assert run.projects_status == 200, run.output
    assert len(run.project_ids) == 4, run.project_ids
    # The scan must see PostgreSQL and Temporal while they run, or "nothing left" would prove nothing.
    assert any("postgres" in p for p in run.running_before_stop), run.running_before_stop
    assert any("temporal" in p for p in run.running_before_stop), run.running_before_stop
    assert len(run.child_pids) >= 3, run.child_pids  # Temporal, worker, API
    assert run.exit_code == 0, run.output
    assert run.left_running == [], run.left_running
    assert run.children_alive == [], run.children_alive
    stops = [line.split()[0] for line in run.output.splitlines() if "stopped" in line]
    assert stops == ["API", "Worker", "Temporal", "PostgreSQL"], run.output


def test_up_demo_shows_packages_in_the_first_overview_and_briefing(first_run: UpRun) -> None:
    context = first_run.context
    assert context["claims"] > 0, first_run.output
    assert context["all"] > context["plain"] > 0, context  # the demo financial provider's packages need the scope


def test_up_serves_the_internal_api_on_its_own_loopback_listener_only(first_run: UpRun) -> None:
    internal = first_run.internal
    assert internal["registered"] == 201, first_run.output
    assert internal["on_public"] == 404
    assert "/internal/v1/context-engine/providers" in internal["internal_paths"]  # type: ignore[operator]
    assert not [p for p in internal["public_paths"] if p.startswith("/internal")]  # type: ignore[attr-defined]
    assert "Internal API" in first_run.output


def test_up_prints_each_address_once(first_run: UpRun) -> None:
    shown = first_run.output.split("Press Ctrl-C to stop.")[0].splitlines()
    labels = [line[:12].strip() for line in shown if line[12:13] == " "]
    for label in ("PostgreSQL", "Temporal", "Temporal UI", "API", "REST docs", "GraphiQL", "MCP", "Internal API"):
        assert labels.count(label) == 1, (label, first_run.output)
    addresses = [word for line in shown for word in line.split() if "://" in word]
    assert len(addresses) == len(set(addresses)) >= 7, addresses


def test_second_up_reuses_the_data(first_run: UpRun) -> None:
    second = _run_once(first_run.data_dir)
    assert second.projects_status == 200, second.output
    assert sorted(second.project_ids) == sorted(first_run.project_ids), second.project_ids
    assert second.key != first_run.key
    assert second.exit_code == 0, second.output
    assert second.left_running == [], second.left_running
    assert second.children_alive == [], second.children_alive


def test_up_gives_the_worker_and_the_api_a_search_replica_each(first_run: UpRun) -> None:
    built = {name: first_run.data_dir / name / "corpus" / "CURRENT" for name in ("index", "index-api")}
    assert all(path.exists() for path in built.values()), first_run.output
    holders = {(first_run.data_dir / name / ".replica.lock").read_text().strip() for name in built}
    assert len(holders) == 2  # two processes, one directory each


def test_up_serves_metrics_of_the_api_and_the_worker_and_status_finds_it_healthy(first_run: UpRun) -> None:
    seen = first_run.observability
    metrics_line = [line for line in first_run.output.splitlines() if line.startswith("Metrics")]
    assert len(metrics_line) == 1 and "/metrics (API)" in metrics_line[0], first_run.output
    assert 'groundwork_http_requests_total{method="GET",route="/api/v1/projects",status="200"}' in seen["api_metrics"]
    # Shared-state gauges come from one worker (advisory lock), never from the API, so no scrape double-counts them.
    assert "groundwork_outbox_backlog_events" not in seen["api_metrics"]
    assert "groundwork_outbox_backlog_events" in seen["worker_metrics"], seen["worker_metrics"][-2000:]
    assert 'temporal_num_pollers{namespace="default",poller_type="workflow_task"' in seen["worker_metrics"], seen[
        "worker_metrics"
    ][-2000:]
    assert "groundwork_search_index_lag_changes" in seen["worker_metrics"]
    assert seen["status_code"] == 0, seen["status"]
    assert json.loads(seen["status"])["healthy"] is True
