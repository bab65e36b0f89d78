"""Enhancement runs on the embedded stack, against floors measured on the same machine in the same run.

Starts what `groundwork up --demo` starts — the embedded PostgreSQL, the Temporal dev server (SQLite,
WAL), the worker process and the API process (`groundwork serve`) — seeds the demo data, and starts
two peers next to them: a bare Temporal worker process (on its own task queue of the same dev server)
and a bare Litestar app under the same uvicorn settings. Then it measures, in one run:

1. **Floors**: a bare workflow with N no-op activities run concurrently (N = 1 and 8), start to
   result, unloaded (one at a time) and at 20 and 50 concurrent clients (workflows/s); a bare Update
   round trip (an Update whose handler runs one no-op activity, and an empty one) on a long-lived
   workflow; `GET` of a bare Litestar endpoint (requests/s at 16 keep-alive connections).
2. **Groundwork**: `POST /api/v1/work-item-enhancements?wait=30` until 201 (create -> ready for
   review) with 1 and with all 8 actions on the demo work items, unloaded and at 20 and 50
   concurrent clients (runs/s); `POST .../apply` of one draft (p50); `GET /api/v1/work-item-
   enhancements/{id}` of an eight-action run (requests/s at 16 keep-alive connections).

Throughput alternates Groundwork and its floor in three windows each (two with --quick), so a drift of
the machine's speed during the measurement (this VM's moves by a third between runs) weighs on both
alike; the rate is pooled over the windows and each round's ratio is printed too. Unloaded latencies
interleave their sizes the same way (a one-action run, then an eight-action one, and so on), and the
bench reads every measured workflow's history afterwards to print how long its first workflow task
waited in the dev server: that wait is about 3 ms or about 35 ms, run by run, whatever the worker does.

Every figure and every ratio against its floor is printed. Requests per second are driven by a
minimal keep-alive HTTP/1.1 client on raw asyncio streams (httpx would cost more CPU than the
servers it measures on two cores).

    .venv/bin/python bench/enhancement_bench.py           # ~4 min
    .venv/bin/python bench/enhancement_bench.py --quick   # fewer samples, shorter windows

Run by hand; results go to bench/README.md.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import platform
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import Any

import httpx
from cpu_meter import CpuMeter
from temporalio import activity, workflow

ACTIONS_ALL = [
    "requirements",
    "description",
    "design",
    "implementation_plan",
    "acceptance_criteria",
    "test_plan",
    "estimate",
    "risk_check",
]
BARE_QUEUE = "bench-bare"


def free_port() -> int:
    """A TCP port nobody listens on right now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def p50(samples: list[float]) -> float:
    """The median in milliseconds."""
    return statistics.median(samples) * 1000


def p99(samples: list[float]) -> float:
    """The 99th percentile in milliseconds."""
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, round(0.99 * (len(ordered) - 1)))] * 1000


# --- the bare peers (each runs as its own process: `--bare-worker`, `--bare-api`) ---------------


@activity.defn(name="bare_noop")
async def bare_noop(index: int) -> int:
    """The floor's activity: does nothing."""
    return index


@workflow.defn(name="BareActivitiesWorkflow", sandboxed=False)
class BareActivitiesWorkflow:
    """The floor of a run: N no-op activities, concurrently."""

    @workflow.run
    async def run(self, activities: int) -> int:
        results = await asyncio.gather(
            *(
                workflow.execute_activity("bare_noop", i, result_type=int, start_to_close_timeout=timedelta(seconds=30))
                for i in range(activities)
            )
        )
        return len(results)


@workflow.defn(name="BareUpdateWorkflow", sandboxed=False)
class BareUpdateWorkflow:
    """The floor of an apply: a long-lived workflow serving Updates."""

    def __init__(self) -> None:
        self.done = False

    @workflow.run
    async def run(self) -> None:
        await workflow.wait_condition(lambda: self.done)

    @workflow.update(name="with_activity")
    async def with_activity(self, value: int) -> int:
        result: int = await workflow.execute_activity(
            "bare_noop", value, result_type=int, start_to_close_timeout=timedelta(seconds=30)
        )
        return result

    @workflow.update(name="empty")
    async def empty(self, value: int) -> int:
        return value

    @workflow.signal(name="stop")
    def stop(self) -> None:
        self.done = True


async def run_bare_worker(address: str) -> None:
    """The floor's worker: default worker options, like Groundwork's."""
    from temporalio.client import Client
    from temporalio.worker import Worker

    from groundwork.platform.temporal.payloads import data_converter

    client = await Client.connect(address, data_converter=data_converter)
    async with Worker(
        client, task_queue=BARE_QUEUE, workflows=[BareActivitiesWorkflow, BareUpdateWorkflow], activities=[bare_noop]
    ):
        await asyncio.Event().wait()


def run_bare_api(port: int) -> None:
    """A bare Litestar endpoint under the uvicorn settings `groundwork serve` uses (no access log either: until
    2026-11-27 this floor wrote one log line per request, which `groundwork serve` does not)."""
    import uvicorn
    from litestar import Litestar, get

    from groundwork.api.app import SERVER_OPTIONS

    @get("/bare")
    async def bare() -> dict[str, Any]:
        return {"data": {"id": "bare", "state": "ready_for_review"}}

    uvicorn.run(
        Litestar([bare]),
        host="127.0.0.1",
        port=port,
        proxy_headers=True,
        log_level="info",
        access_log=False,
        **SERVER_OPTIONS,
    )


# --- CPU accounting ----------------------------------------------------------------------------


def cpu_line(before: dict[str, float], after: dict[str, float], runs: float, scale: float = 1000) -> str:
    """CPU milliseconds (`scale` 1e6: microseconds) per run of each component that used any (0 is left out)."""
    parts = [f"{name} {(after[name] - before[name]) * scale / runs:.0f}" for name in after]
    return ", ".join(p for p in parts if not p.endswith(" 0"))


# --- load generation -------------------------------------------------------------------------


async def _get_once(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, request: bytes) -> int:
    writer.write(request)
    head = await reader.readuntil(b"\r\n\r\n")
    status = int(head.split(b" ", 2)[1])
    length = 0
    for line in head.split(b"\r\n"):
        if line.lower().startswith(b"content-length:"):
            length = int(line.split(b":", 1)[1])
    await reader.readexactly(length)
    return status


@dataclass
class LoadWindow:
    """What one closed-loop window measured: calls completed, seconds, and the CPU meter before and after."""

    calls: int
    seconds: float
    before: dict[str, float]
    after: dict[str, float]


def pooled(windows: list[LoadWindow], scale: float = 1000) -> tuple[float, str]:
    """Calls per second over several windows, and CPU per call over all of them (ms; `scale` 1e6: µs)."""
    calls = sum(w.calls for w in windows)
    before = {name: sum(w.before[name] for w in windows) for name in windows[0].before}
    after = {name: sum(w.after[name] for w in windows) for name in windows[0].after}
    return calls / sum(w.seconds for w in windows), cpu_line(before, after, max(calls, 1), scale) if before else ""


async def get_window(
    port: int, path: str, key: str | None, connections: int, seconds: float, meter: CpuMeter
) -> LoadWindow:
    """Closed-loop GETs over `connections` keep-alive connections: one warm-up second, then `seconds` counted
    (and metered)."""
    auth = f"Authorization: Bearer {key}\r\n" if key else ""
    request = f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\n{auth}\r\n".encode()
    done = 0
    stop_at = 0.0

    async def client() -> None:
        nonlocal done
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        try:
            assert await _get_once(reader, writer, request) == 200  # warm the connection
            while time.perf_counter() < stop_at:
                status = await _get_once(reader, writer, request)
                assert status == 200, status
                done += 1
        finally:
            writer.close()

    stop_at = time.perf_counter() + 1.0
    await asyncio.gather(*(client() for _ in range(connections)))  # warm-up second
    done = 0
    before = meter.snapshot()
    started = time.perf_counter()
    stop_at = started + seconds
    await asyncio.gather(*(client() for _ in range(connections)))
    elapsed = time.perf_counter() - started
    return LoadWindow(done, elapsed, before, meter.snapshot())


async def interleaved(
    concurrency: int,
    rounds: int,
    seconds: float,
    ours: tuple[Any, CpuMeter],
    floor: tuple[Any, CpuMeter],
) -> tuple[tuple[float, str], tuple[float, str], list[float]]:
    """Groundwork and its floor in alternating windows (`rounds` each), so that the machine's drift during
    the measurement weighs on both alike; the pooled rate and CPU of each, and each round's ratio."""
    mine: list[LoadWindow] = []
    theirs: list[LoadWindow] = []
    for _ in range(rounds):
        mine.append(await load_window(concurrency, seconds, *ours))
        theirs.append(await load_window(concurrency, seconds, *floor))
    ratios = [(m.calls / m.seconds) / max(t.calls / t.seconds, 1e-9) for m, t in zip(mine, theirs, strict=True)]
    return pooled(mine), pooled(theirs), ratios


async def load_window(concurrency: int, seconds: float, one: Any, meter: CpuMeter | None = None) -> LoadWindow:
    """`concurrency` clients calling `one()` back to back for `seconds` after 2 s of warm-up."""
    counting = False
    done = 0
    stop_at = time.perf_counter() + 2.0 + seconds

    async def client() -> None:
        nonlocal done
        while time.perf_counter() < stop_at:
            await one()
            if counting:
                done += 1

    tasks = [asyncio.create_task(client()) for _ in range(concurrency)]
    await asyncio.sleep(2.0)
    counting = True
    before = meter.snapshot() if meter else {}
    started = time.perf_counter()
    await asyncio.sleep(seconds)
    counting = False
    elapsed = time.perf_counter() - started
    after = meter.snapshot() if meter else {}
    calls = done
    await asyncio.gather(*tasks)
    return LoadWindow(calls, elapsed, before, after)


# --- Groundwork ------------------------------------------------------------------------------


@dataclass
class Stack:
    api: str
    api_port: int
    key: str
    items: list[dict[str, Any]]


async def create_run(http: httpx.AsyncClient, stack: Stack, item_id: str, actions: list[str]) -> dict[str, Any]:
    """One create that waits for the finished run (201)."""
    response = await http.post(
        "/api/v1/work-item-enhancements?wait=30",
        json={"target": {"type": "work_item", "id": item_id}, "actions": actions, "confirm": True},
        headers={"Authorization": f"Bearer {stack.key}", "Idempotency-Key": uuid.uuid4().hex},
    )
    assert response.status_code == 201, response.text
    data: dict[str, Any] = response.json()["data"]
    return data


async def interleaved_latencies(
    run_once: Callable[[int, int], Awaitable[str]], sizes: tuple[int, ...], samples: int
) -> tuple[dict[int, list[float]], dict[int, list[str]]]:
    """Start → result of each size, one sample of every size per round (the first of each round alternating),
    so a drift of the server's speed during the measurement weighs on every size alike; five warm-up rounds.
    `run_once(size, round)` runs one and returns its workflow id; every size of a round gets the same round.

    Returns the timings and the workflow ids of the measured samples, per size."""
    timings: dict[int, list[float]] = {n: [] for n in sizes}
    ids: dict[int, list[str]] = {n: [] for n in sizes}
    for i in range(samples + 5):
        for n in sizes if i % 2 == 0 else tuple(reversed(sizes)):
            started = time.perf_counter()
            workflow_id = await run_once(n, i)
            if i >= 5:
                timings[n].append(time.perf_counter() - started)
                ids[n].append(workflow_id)
    return timings, ids


async def first_task_waits(client: Any, workflow_ids: list[str]) -> list[float]:
    """How long each workflow's first workflow task waited in the server between scheduled and started (ms):
    Temporal's dispatch, which no worker's code takes part in."""
    from temporalio.api.enums.v1 import EventType

    waits = []
    for workflow_id in workflow_ids:
        history = await client.get_workflow_handle(workflow_id).fetch_history()
        times: dict[int, float] = {}
        for event in history.events:
            if event.event_type in (
                EventType.EVENT_TYPE_WORKFLOW_TASK_SCHEDULED,
                EventType.EVENT_TYPE_WORKFLOW_TASK_STARTED,
            ):
                times.setdefault(event.event_type, event.event_time.ToDatetime().timestamp())
        if len(times) == 2:
            started = times[EventType.EVENT_TYPE_WORKFLOW_TASK_STARTED]
            waits.append((started - times[EventType.EVENT_TYPE_WORKFLOW_TASK_SCHEDULED]) * 1000)
    return waits


def waits_line(name: str, waits: list[float]) -> str:
    """p50 of the first workflow task's wait, and how many waited more than 20 ms."""
    slow = sum(1 for w in waits if w > 20)
    return f"{name}: p50 {statistics.median(waits):.0f} ms, {slow} of {len(waits)} over 20 ms"


async def apply_latencies(http: httpx.AsyncClient, stack: Stack, samples: int) -> list[float]:
    """Apply one estimate draft of a fresh run at a time, against the work item's current version."""
    headers = {"Authorization": f"Bearer {stack.key}"}
    item = stack.items[0]
    runs = [await create_run(http, stack, item["id"], ["estimate"]) for _ in range(samples + 5)]
    timings = []
    for i, run in enumerate(runs):
        current = (await http.get(f"/api/v1/work-items/{item['id']}", headers=headers)).json()["data"]["version"]
        started = time.perf_counter()
        response = await http.post(
            f"/api/v1/work-item-enhancements/{run['id']}/apply",
            json={"draft_ids": [run["drafts"][0]["id"]], "expected_target_version": current, "confirm": True},
            headers={**headers, "Idempotency-Key": uuid.uuid4().hex},
        )
        elapsed = time.perf_counter() - started
        assert response.status_code == 200, response.text
        if i >= 5:
            timings.append(elapsed)
    return timings


async def seed(dsn: str) -> tuple[str, list[dict[str, Any]]]:
    from groundwork.demo.seed import seed_demo
    from groundwork.persistence import db

    key = await seed_demo(dsn)
    async with db.connection(dsn):
        rows = await db.fetch(
            "SELECT w.id, w.key FROM work_items w JOIN workspaces s ON s.id = w.workspace_id"
            " WHERE s.slug = 'demo' AND w.fields ? 'description' AND length(w.fields->>'description') > 200"
            " ORDER BY w.key"
        )
    return key, [dict(r) for r in rows]


async def wait_http(url: str) -> None:
    async with httpx.AsyncClient(timeout=5) as http:
        for _ in range(600):
            try:
                if (await http.get(url)).status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            await asyncio.sleep(0.1)
    raise RuntimeError(f"{url} never answered")


async def bench(
    dsn: str,
    temporal_address: str,
    data_dir: Path,
    quick: bool,
    servers: dict[str, int],
    profile: Path | None,
    parts: set[str],
) -> None:
    from temporalio.client import Client

    from groundwork.persistence.migrate import apply_migrations
    from groundwork.platform.secrets.keyring import KeyRing
    from groundwork.platform.temporal.payloads import data_converter

    samples = 20 if quick else 50
    window = 8.0 if quick else 15.0
    # Throughput alternates Groundwork and its floor, `rounds` windows each of `window / rounds` seconds.
    rounds = 2 if quick else 3
    await apply_migrations(dsn)
    key, items = await seed(dsn)
    api_port, bare_port = free_port(), free_port()
    env = {
        **os.environ,
        "DATABASE_URL": dsn,
        "TEMPORAL_ADDRESS": temporal_address,
        "TEMPORAL_TASK_QUEUE": "groundwork",
        "GROUNDWORK_HOME": str(data_dir),
        "GROUNDWORK_SECRET_KEY": KeyRing.generate_text(),
        "GROUNDWORK_RATE_LIMIT_PER_MINUTE": "100000000",
    }
    logs = data_dir / "logs"
    logs.mkdir(exist_ok=True)
    spawned: list[subprocess.Popen[bytes]] = []

    def spawn(name: str, command: list[str]) -> None:
        log = (logs / f"{name}.log").open("wb")
        spawned.append(subprocess.Popen(command, env=env, stdout=log, stderr=subprocess.STDOUT))

    me = [sys.executable, str(Path(__file__).resolve())]
    spawn("worker", [sys.executable, "-m", "groundwork.cli", "worker"])
    spawn("api", [sys.executable, "-m", "groundwork.cli", "serve", "--port", str(api_port)])
    spawn("bare-worker", [*me, "--bare-worker", temporal_address])
    spawn("bare-api", [*me, "--bare-api", str(bare_port)])
    try:
        await wait_http(f"http://127.0.0.1:{api_port}/health/ready")
        await wait_http(f"http://127.0.0.1:{bare_port}/bare")
        await asyncio.sleep(3)  # the worker's index follower indexes the demo corpus
        stack = Stack(f"http://127.0.0.1:{api_port}", api_port, key, items)
        pids = {name: p.pid for name, p in zip(("worker", "api", "bare worker", "bare api"), spawned, strict=True)}
        # Each spawned command is a Python process (uvicorn serves in the same process with one worker).
        ours_meter = CpuMeter(
            {
                "api": [pids["api"]],
                "worker": [pids["worker"]],
                "temporal": [servers["temporal"]],
                "postgres": [servers["postgres"]],
                "bench client": [os.getpid()],
            },
            with_children={"postgres", "api"},
        )
        floor_meter = CpuMeter(
            {
                "bare worker": [pids["bare worker"]],
                "temporal": [servers["temporal"]],
                "bench client": [os.getpid()],
            },
            with_children=set(),
        )
        client = await Client.connect(temporal_address, data_converter=data_converter)
        print(
            f"## Enhancement runs ({platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}, "
            f"load average before: {os.getloadavg()[0]:.2f})\n"
        )

        async def bare_run(activities: int, _round: int = 0) -> str:
            workflow_id = f"bare-{uuid.uuid4().hex}"
            await asyncio.wait_for(
                client.execute_workflow("BareActivitiesWorkflow", activities, id=workflow_id, task_queue=BARE_QUEUE),
                60,
            )
            return workflow_id

        if "latency" in parts:
            floor: dict[str, float] = {}
            floor_timings, floor_ids = await interleaved_latencies(bare_run, (1, 8), samples)
            for n, timings in floor_timings.items():
                floor[f"latency {n}"] = p50(timings)
            handle = await client.start_workflow(
                "BareUpdateWorkflow", id=f"bare-upd-{uuid.uuid4().hex}", task_queue=BARE_QUEUE
            )
            for name in ("with_activity", "empty"):
                timings = []
                for i in range(samples + 5):
                    started = time.perf_counter()
                    await handle.execute_update(name, i, result_type=int)
                    if i >= 5:
                        timings.append(time.perf_counter() - started)
                floor[f"update {name}"] = p50(timings)
            await handle.signal("stop")

        async with httpx.AsyncClient(base_url=stack.api, timeout=120) as http:
            if "latency" in parts:
                gw: dict[str, float] = {}

                async def create_once(n: int, round_: int) -> str:
                    item = stack.items[round_ % len(stack.items)]  # both sizes of a round on the same work item
                    run = await create_run(http, stack, item["id"], ["requirements"] if n == 1 else ACTIONS_ALL)
                    assert run["state"] == "ready_for_review"
                    return str(run["id"])  # a run's workflow id is its id

                gw_timings, gw_ids = await interleaved_latencies(create_once, (1, 8), samples)
                for n, timings in gw_timings.items():
                    gw[f"latency {n}"] = p50(timings)
                    gw[f"latency {n} p99"] = p99(timings)
                apply = await apply_latencies(http, stack, samples)
                gw["apply"], gw["apply p99"] = p50(apply), p99(apply)

                print("| unloaded, p50 | Groundwork | floor | ratio | target |")
                print("|---|---:|---:|---:|---|")
                print(
                    f"| create → ready, 1 action | {gw['latency 1']:.0f} ms (p99 {gw['latency 1 p99']:.0f}) "
                    f"| {floor['latency 1']:.0f} ms (1 no-op activity) "
                    f"| {gw['latency 1'] / floor['latency 1']:.2f}x | |"
                )
                print(
                    f"| create → ready, 8 actions | {gw['latency 8']:.0f} ms (p99 {gw['latency 8 p99']:.0f}) "
                    f"| {floor['latency 8']:.0f} ms (8 parallel no-op activities) "
                    f"| {gw['latency 8'] / floor['latency 8']:.2f}x | ≤ 1.5x |"
                )
                print(f"| 8 actions ÷ 1 action | {gw['latency 8'] / gw['latency 1']:.2f}x | | | ≤ 1.3x |")
                print(
                    f"| apply one draft | {gw['apply']:.0f} ms (p99 {gw['apply p99']:.0f}) "
                    f"| {floor['update with_activity']:.0f} ms (Update running 1 no-op activity); "
                    f"{floor['update empty']:.0f} ms (empty Update) "
                    f"| {gw['apply'] / floor['update with_activity']:.2f}x "
                    f"/ {gw['apply'] / floor['update empty']:.2f}x "
                    f"| ≤ 2x |"
                )
                waits = [
                    waits_line(f"Groundwork, {n} action(s)", await first_task_waits(client, gw_ids[n])) for n in (1, 8)
                ]
                for n, ids in floor_ids.items():
                    no_ops = "1 no-op activity" if n == 1 else f"{n} no-op activities"
                    waits.append(waits_line(f"floor, {no_ops}", await first_task_waits(client, ids)))
                print("\n- First workflow task's wait in the dev server (scheduled → started): " + "; ".join(waits))
                print(flush=True)

            if "throughput" in parts:
                print("| throughput | Groundwork runs/s | floor workflows/s | ratio (each round) | target |")
                print("|---|---:|---:|---:|---|")
                cpu_notes = []
                for n, actions in ((1, ["requirements"]), (8, ACTIONS_ALL)):
                    for concurrency in (20, 50):
                        counter = iter(range(10**9))

                        async def one_run(actions: list[str] = actions, counter: Any = counter) -> None:
                            await create_run(http, stack, stack.items[next(counter) % len(stack.items)]["id"], actions)

                        spies = []
                        if profile is not None:  # py-spy (if installed) samples the worker and the API meanwhile
                            for name in ("worker", "api"):
                                out = profile / f"{name}-{n}-actions-{concurrency}.txt"
                                spies.append(
                                    subprocess.Popen(
                                        [
                                            *("py-spy", "record", "-p", str(pids[name])),
                                            *("-d", str(int(window) + 2 * rounds * 2)),
                                            *("-f", "raw", "-o", str(out), "-r", "200"),
                                        ],
                                        stdout=subprocess.DEVNULL,
                                        stderr=subprocess.DEVNULL,
                                    )
                                )
                        (ours, ours_cpu), (theirs, their_cpu), ratios = await interleaved(
                            concurrency,
                            rounds,
                            window / rounds,
                            (one_run, ours_meter),
                            (lambda n=n: bare_run(n), floor_meter),
                        )
                        for spy in spies:
                            spy.wait(60)
                        each = " / ".join(f"{r:.2f}" for r in ratios)
                        print(
                            f"| {n} action(s), {concurrency} clients | {ours:.1f} | {theirs:.1f} "
                            f"({n} no-op activit{'y' if n == 1 else 'ies'}) | {ours / theirs:.2f}x ({each}) | ≥ 0.6x |",
                            flush=True,
                        )
                        cpu_notes.append(
                            f"- {n} action(s), {concurrency} clients, CPU ms per run: Groundwork {ours_cpu}; "
                            f"floor {their_cpu}"
                        )
                print("\n" + "\n".join(cpu_notes) + "\n", flush=True)

            if "get" in parts:
                big = await create_run(http, stack, stack.items[1]["id"], ACTIONS_ALL)
                small = await create_run(http, stack, stack.items[2]["id"], ["requirements"])
                get_meter = CpuMeter(
                    {"bare api": [pids["bare api"]], "api": [pids["api"]], "postgres": [servers["postgres"]]},
                    with_children={"postgres", "api"},
                )
                targets = {
                    "bare": (bare_port, "/bare", None),
                    "big": (api_port, f"/api/v1/work-item-enhancements/{big['id']}", key),
                    "small": (api_port, f"/api/v1/work-item-enhancements/{small['id']}", key),
                }
                get_spy: subprocess.Popen[bytes] | None = None
                if profile is not None:  # the API over every round (the bare endpoint is another process)
                    get_spy = subprocess.Popen(
                        [
                            *(
                                "py-spy",
                                "record",
                                "-p",
                                str(pids["api"]),
                                "-d",
                                str(int((window / rounds + 1) * 3 * rounds)),
                            ),
                            *("-f", "raw", "-o", str(profile / "api-get.txt"), "-r", "200"),
                        ],
                        stdout=subprocess.DEVNULL,
                        stderr=subprocess.DEVNULL,
                    )
                # The floor and both runs in alternating windows, as for throughput: the machine's drift
                # weighs on all three alike.
                windows: dict[str, list[LoadWindow]] = {name: [] for name in targets}
                for _ in range(rounds):
                    for name, (port, path, auth) in targets.items():
                        windows[name].append(await get_window(port, path, auth, 16, window / rounds, get_meter))
                if get_spy is not None:
                    get_spy.wait(120)
                rates = {name: pooled(found, scale=1e6) for name, found in windows.items()}

                def round_ratios(name: str) -> str:
                    pairs = zip(windows[name], windows["bare"], strict=True)
                    return " / ".join(f"{(m.calls / m.seconds) / (b.calls / b.seconds):.2f}" for m, b in pairs)

                size_big = len(
                    (
                        await http.get(
                            f"/api/v1/work-item-enhancements/{big['id']}", headers={"Authorization": f"Bearer {key}"}
                        )
                    ).content
                )
                bare_rps = rates["bare"][0]
                print("| GET, 16 keep-alive connections | requests/s | ratio to bare (each round) | target |")
                print("|---|---:|---:|---|")
                print(f"| bare Litestar endpoint (floor) | {bare_rps:.0f} | 1.00x | |")
                print(
                    f"| GET a run, 8 actions ({len(big['drafts'])} drafts, {len(big['artifacts'])} artifacts, "
                    f"{size_big / 1024:.0f} KiB) | {rates['big'][0]:.0f} | {rates['big'][0] / bare_rps:.2f}x "
                    f"({round_ratios('big')}) | ≥ 0.5x |"
                )
                print(
                    f"| GET a run, 1 action | {rates['small'][0]:.0f} | {rates['small'][0] / bare_rps:.2f}x "
                    f"({round_ratios('small')}) | ≥ 0.5x |"
                )
                per_round = {n: " / ".join(f"{w.calls / w.seconds:.0f}" for w in found) for n, found in windows.items()}
                print(
                    f"\n- requests/s in each round: bare {per_round['bare']}; 8 actions {per_round['big']}; "
                    f"1 action {per_round['small']}"
                )
                print(
                    f"- CPU per request (µs): bare endpoint: {rates['bare'][1]}; GET a run, 8 actions: "
                    f"{rates['big'][1]}; GET a run, 1 action: {rates['small'][1]}"
                )
            print(f"\nload average after: {os.getloadavg()[0]:.2f}")
    finally:
        for process in spawned:
            process.terminate()
        for process in spawned:
            try:
                process.wait(30)
            except subprocess.TimeoutExpired:
                process.kill()


def main() -> None:
    """Start the embedded stack in a temporary directory, run the bench, stop everything."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer samples, shorter windows")
    parser.add_argument("--profile", type=Path, help="write py-spy profiles of worker and API to this directory")
    parser.add_argument("--only", choices=("latency", "throughput", "get"), help="run one part only")
    parser.add_argument("--bare-worker", metavar="ADDRESS", help=argparse.SUPPRESS)
    parser.add_argument("--bare-api", metavar="PORT", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.bare_worker:
        asyncio.run(run_bare_worker(args.bare_worker))
        return
    if args.bare_api:
        run_bare_api(args.bare_api)
        return
    from groundwork.stack.postgres import start_postgres
    from groundwork.stack.temporal_dev import TemporalDevServer

    with tempfile.TemporaryDirectory(prefix="gw-enhancement-bench-") as tmp:
        data_dir = Path(tmp)
        postgres = start_postgres(data_dir)
        temporal = TemporalDevServer(data_dir, port=free_port(), ui_port=free_port())
        temporal.start()
        try:
            temporal.wait_ready(60)
            assert temporal.process is not None and postgres.pid is not None
            servers = {"temporal": temporal.process.pid, "postgres": postgres.pid}
            parts = {args.only} if args.only else {"latency", "throughput", "get"}
            asyncio.run(bench(postgres.dsn, temporal.address, data_dir, args.quick, servers, args.profile, parts))
        finally:
            temporal.stop()
            postgres.stop()


if __name__ == "__main__":
    main()
