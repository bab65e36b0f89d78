"""Webhook latency and throughput on the embedded stack: commit of a domain change → receiver's 2xx.

Starts what `groundwork up` starts — the embedded PostgreSQL, the Temporal dev server (SQLite, WAL)
and the worker process (Temporal worker + outbox relay) — plus a receiver on 127.0.0.1 in this
process. Events are committed to the outbox the way domain services commit them, at a fixed rate
(open loop); each latency is the time from the commit returning to the receiver answering 2xx to the
first delivery of that event (same process, same monotonic clock).

    .venv/bin/python bench/webhooks_bench.py            # 1, 10, 100 events/s, then a ramp for the maximum
    .venv/bin/python bench/webhooks_bench.py --quick    # shorter windows

Run by hand; results go to bench/README.md.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import platform
import socket
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import uvicorn

from groundwork.domain.ids import new_id
from groundwork.domain.webhooks import new_secret
from groundwork.persistence import db
from groundwork.persistence.migrate import apply_migrations
from groundwork.persistence.repositories.platform import outbox
from groundwork.persistence.repositories.tenancy import workspaces as tenancy
from groundwork.persistence.repositories.webhooks import endpoints as webhook_endpoints
from groundwork.platform.secrets.keyring import KeyRing
from groundwork.services.webhooks.secrets import seal_webhook_secret
from groundwork.stack.postgres import start_postgres
from groundwork.stack.temporal_dev import TemporalDevServer


def free_port() -> int:
    """A TCP port nobody listens on right now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class Receiver:
    """Answers 204 to every POST and notes when each webhook-id was first answered."""

    def __init__(self) -> None:
        self.port = free_port()
        self.answered: dict[str, float] = {}
        self.requests = 0
        self._server: uvicorn.Server | None = None
        self._task: asyncio.Task[None] | None = None

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        while (await receive()).get("more_body"):
            pass
        webhook_id = next((v.decode() for k, v in scope["headers"] if k == b"webhook-id"), "")
        await send({"type": "http.response.start", "status": 204, "headers": []})
        await send({"type": "http.response.body", "body": b""})
        self.requests += 1
        self.answered.setdefault(webhook_id, time.perf_counter())

    async def start(self) -> None:
        config = uvicorn.Config(self, host="127.0.0.1", port=self.port, log_level="error", lifespan="off")
        self._server = uvicorn.Server(config)
        self._task = asyncio.create_task(self._server.serve())
        while not self._server.started:
            await asyncio.sleep(0.01)

    async def stop(self) -> None:
        if self._server and self._task:
            self._server.should_exit = True
            await self._task


@dataclass
class Step:
    """One load window and what it measured."""

    rate: float
    seconds: float
    committed: dict[str, float] = field(default_factory=dict)
    load_seconds: float = 0.0
    backlog_at_end: int = 0
    drain_seconds: float | None = None
    latencies: list[float] = field(default_factory=list)
    delivered_per_second: float = 0.0
    # (seconds into the load, events committed but not yet answered) every `sample_every` seconds.
    backlog: list[tuple[float, int]] = field(default_factory=list)

    def percentile(self, p: float) -> float:
        ordered = sorted(self.latencies)
        return ordered[min(len(ordered) - 1, round(p / 100 * (len(ordered) - 1)))]

    @property
    def sustained(self) -> bool:
        """No backlog growth: at most a second's worth of events outstanding when the load stops."""
        return (
            len(self.latencies) == len(self.committed)
            and self.backlog_at_end <= max(5, self.rate)
            and self.percentile(99) < 2.0
        )


@dataclass
class Target:
    """Where events are committed: a workspace and the project they are about."""

    workspace_id: str
    project_id: str


async def emit(target: Target, n: int) -> tuple[str, float]:
    now = datetime.now(UTC)
    async with db.transaction():
        event_id = await outbox.append_event(
            type="work_item_enhancement.queued",
            workspace_id=target.workspace_id,
            resource_type="work_item_enhancement_run",
            resource_id=f"wie_bench_{n}",
            actor_id=None,
            payload={
                "run_id": f"wie_bench_{n}",
                "target_type": "work_item",
                "target_id": f"wi_bench_{n}",
                "requested_actions": ["requirements"],
                "queued_at": now.isoformat(),
            },
            occurred_at=now,
            project_id=target.project_id,
        )
    return event_id, time.perf_counter()


async def run_step(
    target: Target,
    receiver: Receiver,
    rate: float,
    seconds: float,
    drain: float,
    *,
    sample_every: float | None = None,
) -> Step:
    step = Step(rate, seconds)
    count = max(1, int(rate * seconds))
    start = time.perf_counter()
    next_sample = sample_every
    for i in range(count):
        delay = start + i / rate - time.perf_counter()
        if delay > 0:
            await asyncio.sleep(delay)
        event_id, at = await emit(target, i)
        step.committed[event_id] = at
        if next_sample is not None and sample_every is not None and at - start >= next_sample:
            outstanding = sum(1 for e in step.committed if e not in receiver.answered)
            step.backlog.append((round(at - start), outstanding))
            next_sample += sample_every
    end = time.perf_counter()
    step.load_seconds = end - start
    step.backlog_at_end = sum(1 for e in step.committed if e not in receiver.answered)
    while any(e not in receiver.answered for e in step.committed) and time.perf_counter() - end < drain:
        await asyncio.sleep(0.02)
    if all(e in receiver.answered for e in step.committed):
        step.drain_seconds = max(receiver.answered[e] for e in step.committed) - end
    step.latencies = [receiver.answered[e] - at for e, at in step.committed.items() if e in receiver.answered]
    answered = [receiver.answered[e] for e in step.committed if e in receiver.answered]
    if len(answered) > 1:
        step.delivered_per_second = len(answered) / (max(answered) - start)
    return step


def line(step: Step) -> str:
    if not step.latencies:
        return f"| {step.rate:g} | {len(step.committed)} | 0 | - | - | - | {step.backlog_at_end} | - | - |"
    drain = f"{step.drain_seconds:.2f}" if step.drain_seconds is not None else "not drained"
    return (
        f"| {step.rate:g} | {len(step.committed)} | {len(step.latencies)} | {step.percentile(50) * 1000:.0f}"
        f" | {step.percentile(99) * 1000:.0f} | {max(step.latencies) * 1000:.0f} | {step.backlog_at_end}"
        f" | {drain} | {step.delivered_per_second:.1f} |"
    )


HEADER = (
    "| events/s | committed | delivered | p50 ms | p99 ms | max ms | backlog at end of load | drain s"
    " | delivered/s |\n|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
)


async def bench(dsn: str, temporal_address: str, data_dir: Path, quick: bool) -> None:
    await apply_migrations(dsn)
    await db.connect(dsn, max_size=4)
    receiver = Receiver()
    await receiver.start()
    workspace = await tenancy.create_workspace(f"bench-{os.getpid()}", "Bench")
    portfolio = await tenancy.create_portfolio(workspace.id, "Bench")
    engagement = await tenancy.create_engagement(workspace.id, portfolio.id, "Bench")
    project = await tenancy.create_project(workspace.id, engagement.id, "BEN", "Bench")
    # The endpoint's owner is a project lead (not an admin): every dispatch checks its membership.
    owner = await tenancy.create_principal(workspace.id, "bench-owner")
    await tenancy.add_membership(owner.id, project.id, "lead")
    secret_key = KeyRing.generate_text()
    endpoint_id = new_id("whe")
    await webhook_endpoints.insert_endpoint(
        endpoint_id=endpoint_id,
        workspace_id=workspace.id,
        url=f"http://127.0.0.1:{receiver.port}/hook",
        description="bench",
        event_types=["work_item_enhancement.*"],
        sealed_secret=seal_webhook_secret(KeyRing.parse(secret_key), endpoint_id, new_secret()),
        created_by=owner.id,
    )
    target = Target(workspace.id, project.id)
    env = {
        **os.environ,
        "GROUNDWORK_SECRET_KEY": secret_key,
        "DATABASE_URL": dsn,
        "TEMPORAL_ADDRESS": temporal_address,
        "TEMPORAL_TASK_QUEUE": "groundwork",
        "GROUNDWORK_HOME": str(data_dir),
        "GROUNDWORK_WEBHOOK_ALLOW_PRIVATE": "1",
    }
    log = (data_dir / "worker.log").open("wb")
    worker = subprocess.Popen(
        [sys.executable, "-m", "groundwork.worker"], env=env, stdout=log, stderr=subprocess.STDOUT
    )
    try:
        warm = await run_step(target, receiver, 10, 2, drain=60)
        assert warm.latencies, "the warm-up delivered nothing; see worker.log"
        window = 8.0 if quick else 20.0
        print(f"## Webhooks: commit → receiver 2xx ({platform.machine()}, {os.cpu_count()} cores)\n")
        print(HEADER)
        for rate, seconds in ((1, window), (10, window), (100, window / 2)):
            step = await run_step(target, receiver, rate, seconds, drain=180)
            print(line(step), flush=True)
            await asyncio.sleep(3)
        print("\nRamp (the highest rate still sustained is the maximum):\n")
        print(HEADER)
        best = 0.0
        for rate in (15, 20, 25, 30, 35, 40, 50, 60, 70, 80, 90, 100):
            step = await run_step(target, receiver, rate, 10.0 if quick else 15.0, drain=180)
            print(line(step) + (" sustained" if step.sustained else " backlog grows"), flush=True)
            await asyncio.sleep(3)
            if not step.sustained:
                break
            best = rate
        print(f"\nMaximum sustained: {best:g} events/s.")
        await asyncio.sleep(5)
        soak = await run_step(target, receiver, 30, 30.0 if quick else 60.0, drain=180, sample_every=10.0)
        print("\nSoak at 30 events/s (backlog sampled every 10 s of load):\n")
        print(HEADER)
        print(line(soak) + (" sustained" if soak.sustained else " backlog grows"))
        print("backlog:", ", ".join(f"{t} s: {n}" for t, n in soak.backlog))
        print(f"\n{receiver.requests} requests in all.")
    finally:
        worker.terminate()
        worker.wait(30)
        log.close()
        await receiver.stop()
        await db.disconnect()


def main() -> None:
    """Start the embedded stack in a temporary directory, run the bench, stop everything."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="shorter load windows")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="gw-webhooks-bench-") as tmp:
        data_dir = Path(tmp)
        postgres = start_postgres(data_dir)
        temporal = TemporalDevServer(data_dir, port=free_port(), ui_port=free_port())
        temporal.start()
        try:
            temporal.wait_ready(60)
            asyncio.run(bench(postgres.dsn, temporal.address, data_dir, args.quick))
        finally:
            temporal.stop()
            postgres.stop()


if __name__ == "__main__":
    main()
