"""Production mode end to end: PostgreSQL and the Temporal dev server as their own processes, then
`groundwork migrate`, two `groundwork serve` and two `groundwork worker` processes configured through the
production environment variables only, each process with its own search replica directory."""

from __future__ import annotations

import asyncio
import functools
import json
import os
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import asyncpg
import httpx
import pytest
from standardwebhooks import Webhook
from temporalio.testing import WorkflowEnvironment

from tests.conftest import free_port
from tests.integration.webhooks.conftest import Receiver

# Generous: the machine running the suite may be busy; every wait below ends as soon as its check holds.
DEADLINE = 60.0
# What an operator sets; nothing else of the test's environment reaches the processes.
_INHERITED = ("PATH", "LANG", "LC_ALL", "TMPDIR", "TZ")


@dataclass
class Process:
    """One `groundwork` subprocess with its output in a log file."""

    name: str
    popen: subprocess.Popen[bytes]
    log: Path

    def output(self) -> str:
        return self.log.read_text(errors="replace")[-4000:]


@dataclass
class Deployment:
    """The processes of one production deployment on this machine."""

    root: Path
    env: dict[str, str]
    processes: list[Process] = field(default_factory=list)
    apis: list[tuple[str, str]] = field(default_factory=list)  # (public URL, internal URL)

    def start(self, name: str, *args: str, **extra_env: str) -> Process:
        log = self.root / f"{name}.log"
        popen = subprocess.Popen(
            [sys.executable, "-m", "groundwork.cli", *args],
            env={**self.env, **extra_env},
            cwd=self.root / "cwd",
            stdout=log.open("wb"),
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
        )
        process = Process(name, popen, log)
        self.processes.append(process)
        return process

    def run(self, *args: str) -> subprocess.CompletedProcess[str]:
        """Run a `groundwork` command to its end; it must succeed."""
        done = subprocess.run(
            [sys.executable, "-m", "groundwork.cli", *args],
            env=self.env,
            cwd=self.root / "cwd",
            capture_output=True,
            text=True,
            timeout=60,
            stdin=subprocess.DEVNULL,
        )
        assert done.returncode == 0, f"groundwork {' '.join(args)}: {done.stderr}"
        return done

    def logs(self) -> str:
        return "\n".join(f"--- {p.name} (exit {p.popen.poll()}) ---\n{p.output()}" for p in self.processes)

    def stop(self) -> None:
        for process in self.processes:
            if process.popen.poll() is None:
                process.popen.send_signal(signal.SIGTERM)
        for process in self.processes:
            try:
                process.popen.wait(20)
            except subprocess.TimeoutExpired:
                process.popen.kill()
                process.popen.wait()


@pytest.fixture
async def fresh_database(postgres_dsn: str) -> AsyncIterator[str]:
    """A database of its own in the session's PostgreSQL server (its own process), for `groundwork migrate`."""
    name = f"gw_production_{uuid.uuid4().hex[:8]}"
    admin = await asyncpg.connect(postgres_dsn)
    try:
        await admin.execute(f'CREATE DATABASE "{name}"')
    finally:
        await admin.close()
    parts = urlsplit(postgres_dsn)
    yield urlunsplit(parts._replace(path=f"/{name}"))
    admin = await asyncpg.connect(postgres_dsn)
    try:
        await admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
    finally:
        await admin.close()


@pytest.fixture
async def deployment(
    fresh_database: str, temporal_env: WorkflowEnvironment, tmp_path: Path
) -> AsyncIterator[Deployment]:
    (tmp_path / "cwd").mkdir()
    env = {name: os.environ[name] for name in _INHERITED if name in os.environ}
    env |= {
        "HOME": str(tmp_path / "cwd"),
        "PYTHONUNBUFFERED": "1",
        "DATABASE_URL": fresh_database,
        "TEMPORAL_ADDRESS": temporal_env.client.service_client.config.target_host,
        "TEMPORAL_NAMESPACE": "default",
        "TEMPORAL_TASK_QUEUE": f"groundwork-production-{uuid.uuid4().hex[:8]}",
        "GROUNDWORK_SECRET_KEY": os.environ["GROUNDWORK_SECRET_KEY"],
        # The webhook receiver of this test listens on 127.0.0.1.
        "GROUNDWORK_WEBHOOK_ALLOW_PRIVATE": "1",
        "GROUNDWORK_WEBHOOK_SWEEP_SECONDS": "0.5",
    }
    deployed = Deployment(tmp_path, env)
    try:
        yield deployed
    finally:
        deployed.stop()


async def _until(check: Callable[[], Awaitable[Any]], what: str, deployed: Deployment) -> Any:
    deadline = time.monotonic() + DEADLINE
    while True:
        value = await check()
        if value:
            return value
        for process in deployed.processes:
            assert process.popen.poll() is None, f"{process.name} exited while waiting for {what}\n{deployed.logs()}"
        assert time.monotonic() < deadline, f"{what} within {DEADLINE:.0f} s\n{deployed.logs()}"
        await asyncio.sleep(0.1)


async def test_two_apis_and_two_workers_run_apply_ingest_search_on_both_and_deliver_a_webhook(
    deployment: Deployment,
) -> None:
    started = time.monotonic()
    assert "applied:" in deployment.run("migrate").stderr
    demo_key = deployment.run("demo").stdout.strip().splitlines()[-1]
    provider_key = deployment.run(
        *("keys", "create", "--workspace", "demo", "--principal", "e2e-provider", "--kind", "provider"),
        *("--admin", "--scope", "context-engine:contribute"),
    ).stdout.strip()
    for n in (1, 2):
        deployment.start(f"worker-{n}", "worker", GROUNDWORK_INDEX_DIR=str(deployment.root / f"replica-worker-{n}"))
    for n in (1, 2):
        port, internal_port = free_port(), free_port()
        deployment.start(
            f"api-{n}",
            *("serve", "--host", "127.0.0.1", "--port", str(port)),
            GROUNDWORK_INDEX_DIR=str(deployment.root / f"replica-api-{n}"),
            GROUNDWORK_INTERNAL_PORT=str(internal_port),
        )
        deployment.apis.append((f"http://127.0.0.1:{port}", f"http://127.0.0.1:{internal_port}"))

    receiver = Receiver()
    await receiver.start()
    try:
        async with httpx.AsyncClient(timeout=30) as http:
            headers = {"Authorization": f"Bearer {demo_key}"}

            async def every_api_ready() -> bool:
                for public, _ in deployment.apis:
                    try:
                        if (await http.get(f"{public}/health/ready")).status_code != 200:
                            return False
                    except httpx.TransportError:
                        return False
                return True

            await _until(every_api_ready, "both API processes ready (each replica built)", deployment)
            (api_a, _), (api_b, internal_b) = deployment.apis
            for public, _ in deployment.apis:
                body = (await http.get(f"{public}/health/ready")).json()
                assert body["checks"] == {"postgres": "ok", "temporal": "ok", "search": "ok"}, body
                assert body["search"]["indexes"]["corpus"]["applied_seq"] > 0, body  # the demo corpus

            endpoint = await http.post(
                f"{api_a}/api/v1/webhook-endpoints",
                json={"url": receiver.url, "event_types": ["work_item_enhancement.*"]},
                headers={**headers, "Idempotency-Key": uuid.uuid4().hex},
            )
            assert endpoint.status_code == 201, endpoint.text
            secret = endpoint.json()["data"]["secret"]

            # A run on one API process, its apply on the other.
            items = (await http.get(f"{api_a}/api/v1/work-items?limit=1", headers=headers)).json()["data"]
            item = items[0]
            created = await http.post(
                f"{api_a}/api/v1/work-item-enhancements?wait=30",
                json={
                    "target": {"type": "work_item", "id": item["id"]},
                    "actions": ["description", "acceptance_criteria", "test_plan"],
                    "confirm": True,
                },
                headers={**headers, "Idempotency-Key": uuid.uuid4().hex},
            )
            assert created.status_code in (201, 202), created.text  # 202: still running after 30 s (a busy machine)
            run_id = created.json()["data"]["id"]

            async def reviewable() -> dict[str, Any] | None:
                answer = await http.get(f"{api_b}/api/v1/work-item-enhancements/{run_id}", headers=headers)
                run: dict[str, Any] = answer.json()["data"]
                assert run["state"] in ("queued", "running", "ready_for_review"), run
                return run if run["state"] == "ready_for_review" else None

            drafts = (await _until(reviewable, "the run ready for review", deployment))["drafts"]
            assert drafts
            applied = await http.post(
                f"{api_b}/api/v1/work-item-enhancements/{run_id}/apply",
                json={
                    "draft_ids": [drafts[0]["id"]],
                    "expected_target_version": item["version"],
                    "confirm": True,
                },
                headers={**headers, "Idempotency-Key": uuid.uuid4().hex},
            )
            assert applied.status_code == 200, applied.text
            after = (await http.get(f"{api_a}/api/v1/work-items/{item['id']}", headers=headers)).json()["data"]
            assert after["version"] != item["version"]
            assert after["fields"][drafts[0]["field"]] == drafts[0]["proposedValue"]

            # An ingest through one API process's internal listener, run by a worker.
            project = next(p for p in (await http.get(f"{api_a}/api/v1/projects", headers=headers)).json()["data"])
            ingested = await http.post(
                f"{internal_b}/internal/v1/corpus/sources?wait=30",
                json={
                    "project_id": project["id"],
                    "uri": "runbooks/narwhal.md",
                    "kind": "markdown",
                    "content": "# Narwhal failover\n\nThe narwhal failover drill runs every quarter.",
                },
                headers={"Authorization": f"Bearer {provider_key}", "Idempotency-Key": uuid.uuid4().hex},
            )
            # 201: it serves; 202: still ingesting after 30 s (a busy machine): the searches below wait for it.
            assert ingested.status_code in (201, 202), ingested.text
            assert ingested.json()["data"]["outcome"] == "added", ingested.text

            async def found_on(public: str) -> list[str]:
                answer = await http.post(
                    f"{public}/api/v1/context/search",
                    json={"subject_ref": {"type": "project", "id": project["id"]}, "query": "+narwhal drill"},
                    headers=headers,
                )
                assert answer.status_code == 200, answer.text
                return [p["source"]["uri"] for p in answer.json()["data"]]

            for public, _ in deployment.apis:
                uris = await _until(functools.partial(found_on, public), f"the new source on {public}", deployment)
                assert set(uris) == {"runbooks/narwhal.md"}

            # The webhook: the apply's event, signed, delivered to 127.0.0.1.
            async def applied_delivered() -> dict[str, Any] | None:
                for request in receiver.requests:
                    event = json.loads(request.body)
                    if event["type"] == "work_item_enhancement.applied":
                        return dict(Webhook(secret).verify(request.body, request.headers))
                return None

            event = await _until(applied_delivered, "the applied event delivered", deployment)
            assert event["payload"]["run_id"] == run_id
    finally:
        await receiver.stop()

    # Every process kept its own replica: four directories, each built, each locked by its own process.
    replicas = sorted(p.name for p in deployment.root.glob("replica-*") if (p / "corpus" / "CURRENT").exists())
    assert replicas == ["replica-api-1", "replica-api-2", "replica-worker-1", "replica-worker-2"]
    holders = {(deployment.root / r / ".replica.lock").read_text().strip() for r in replicas}
    assert holders == {str(p.popen.pid) for p in deployment.processes}
    # Production mode never falls back to a local data dir.
    assert not (deployment.root / "cwd" / ".groundwork").exists()
    print(f"production deployment driven end to end in {time.monotonic() - started:.1f} s")


async def test_serve_with_two_worker_processes_keeps_two_replicas_beside_each_other(deployment: Deployment) -> None:
    deployment.run("migrate")
    deployment.run("demo")
    requested = deployment.root / "replica"
    port = free_port()
    deployment.start(
        "api",
        *("serve", "--host", "127.0.0.1", "--port", str(port), "--workers", "2"),
        GROUNDWORK_INDEX_DIR=str(requested),
        GROUNDWORK_INTERNAL_PORT=str(free_port()),
    )

    async def both_built() -> list[str]:
        built = sorted(p.name for p in deployment.root.glob("replica*") if (p / "corpus" / "CURRENT").exists())
        return built if len(built) == 2 else []

    # The two processes of one `serve` never share a directory: the second takes the sibling `-2`.
    assert await _until(both_built, "two replicas built", deployment) == ["replica", "replica-2"]
    holders = {(deployment.root / name / ".replica.lock").read_text().strip() for name in ("replica", "replica-2")}
    assert len(holders) == 2 and str(deployment.processes[0].popen.pid) not in holders  # the two children
