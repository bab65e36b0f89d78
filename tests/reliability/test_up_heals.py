"""`groundwork up` heals: a worker killed with SIGKILL is restarted, and a run started before the crash completes."""

from __future__ import annotations

import re
import signal
import time
import uuid
from pathlib import Path

import httpx
import psutil
import pytest

from tests.e2e.test_up import START_TIMEOUT, UpProcess

RUN_TIMEOUT = 90.0


def _child(up: UpProcess, subcommand: str) -> psutil.Process:
    """The `groundwork.cli <subcommand>` child of `up` (the worker or the API)."""
    for proc in psutil.Process(up.process.pid).children():
        cmdline = proc.cmdline()
        if "groundwork.cli" in cmdline and subcommand in cmdline:
            return proc
    pytest.fail(f"no {subcommand} child of `groundwork up`; output:\n{up.output}")


def test_up_restarts_a_killed_worker_and_a_run_in_flight_completes(tmp_path: Path) -> None:
    up = UpProcess(tmp_path / "data")
    try:
        key = up.wait_for("Demo API key", START_TIMEOUT)
        up.wait_for("Press Ctrl-C to stop.", 10)
        headers = {"Authorization": f"Bearer {key}"}
        worker = _child(up, "worker")
        with httpx.Client(base_url=up.base_url, timeout=30, headers=headers) as client:
            [item] = client.get("/api/v1/work-items", params={"limit": 1}).json()["data"]
            # Frozen, the worker cannot take the run: it is certainly in flight when the worker dies.
            worker.send_signal(signal.SIGSTOP)
            created = client.post(
                "/api/v1/work-item-enhancements",
                params={"wait": 0},
                json={"target": {"type": "work_item", "id": item["id"]}, "actions": ["requirements"], "confirm": True},
                headers={"Idempotency-Key": uuid.uuid4().hex},
            )
            assert created.status_code == 202, created.text
            run_id = created.json()["data"]["id"]
            worker.kill()

            up.wait_for(f"{'Worker':<12} crashed; restarting", 30)
            restarted = up.wait_for(f"{'Worker':<12} restarted", 30)
            assert str(worker.pid) not in restarted
            assert _child(up, "worker").pid != worker.pid

            deadline = time.monotonic() + RUN_TIMEOUT
            state = ""
            while state != "ready_for_review":
                assert time.monotonic() < deadline, f"run stayed {state!r}; output:\n{up.output}"
                state = client.get(f"/api/v1/work-item-enhancements/{run_id}").json()["data"]["state"]
                assert state not in ("failed", "expired"), state
                time.sleep(0.3)
            assert client.get("/health/ready").status_code == 200
        assert up.process.poll() is None, up.output  # the stack kept running through the crash
        assert up.interrupt() == 0, up.output
        stopping = re.compile(r"^(API|Worker|Temporal|PostgreSQL)\s+(stopped|killed after)")
        stops = [m.group(1) for line in up.output.splitlines() if (m := stopping.match(line))]
        assert stops == ["API", "Worker", "Temporal", "PostgreSQL"], up.output
    finally:
        up.close()
