"""A team's own stack (issue 33): `up` without the demo says how to start, records where it listens, and every
CLI command given its data dir reaches that stack whatever ports `up` chose."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import httpx

from tests.e2e.test_up import START_TIMEOUT, UpProcess


def _cli(data_dir: Path, *args: str) -> subprocess.CompletedProcess[str]:
    # No DATABASE_URL, TEMPORAL_ADDRESS or GROUNDWORK_PUBLIC_URL: only the data dir says where the stack is.
    env = {
        k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "TEMPORAL_ADDRESS", "GROUNDWORK_PUBLIC_URL")
    }
    return subprocess.run(
        [sys.executable, "-m", "groundwork.cli", *args, "--data-dir", str(data_dir)],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
    )


def test_up_without_a_workspace_says_how_and_the_cli_finds_its_api_and_temporal_on_other_ports(
    tmp_path: Path,
) -> None:
    data_dir = tmp_path / "team"
    up = UpProcess(data_dir, demo=False)
    try:
        hint = up.wait_for("No workspace yet", START_TIMEOUT)
        assert "groundwork workspaces create SLUG --name NAME --admin PRINCIPAL" in hint
        up.wait_for("Press Ctrl-C to stop.", 10)
        assert up.port != 8000 and up.temporal_port != 7233
        recorded = json.loads((data_dir / "stack.json").read_text())
        assert recorded["api"] == up.base_url and recorded["temporal"].endswith(f":{up.temporal_port}")

        status = _cli(data_dir, "status", "--json")
        assert status.returncode == 0, status.stdout + status.stderr
        assert json.loads(status.stdout)["healthy"] is True

        made = _cli(data_dir, "workspaces", "create", "acme", "--name", "Acme", "--admin", "ana")
        assert made.returncode == 0, made.stderr
        key = made.stdout.strip()
        with httpx.Client(base_url=up.base_url, timeout=10) as client:
            headers = {"Authorization": f"Bearer {key}", "Idempotency-Key": "adopt-1"}
            portfolio = client.post("/api/v1/portfolios", json={"name": "Payments"}, headers=headers).json()["data"]
            headers["Idempotency-Key"] = "adopt-2"
            engagement = client.post(
                "/api/v1/engagements", json={"name": "Cards", "portfolio_id": portfolio["id"]}, headers=headers
            ).json()["data"]
            headers["Idempotency-Key"] = "adopt-3"
            created = client.post(
                "/api/v1/projects",
                json={"key": "CARDS", "name": "Cards", "engagement_id": engagement["id"]},
                headers=headers,
            )
            assert created.status_code == 201, created.text

        note = tmp_path / "vault.md"
        note.write_text("# Card vault\n\nThe legacy card vault export runs nightly at two.\n")
        ingest = _cli(data_dir, "ingest", str(note), "--project", "CARDS", "--workspace", "acme")
        assert ingest.returncode == 0, ingest.stderr
        assert "through the worker (Temporal)" in ingest.stderr  # not "in this process"
        with httpx.Client(base_url=up.base_url, timeout=10) as client:
            deadline = time.monotonic() + 30
            while True:
                found = client.post(
                    "/api/v1/context/search",
                    json={
                        "subject_ref": {"type": "project", "id": created.json()["data"]["id"]},
                        "query": "vault export",
                    },
                    headers={"Authorization": f"Bearer {key}"},
                )
                if found.status_code == 200 and found.json()["data"]:
                    break
                assert time.monotonic() < deadline, found.text
                time.sleep(0.3)
        assert up.interrupt() == 0
        assert not (data_dir / "stack.json").exists()  # a stopped stack leaves no addresses to follow
    finally:
        up.close()
