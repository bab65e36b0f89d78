"""Closed-loop latency for the benches: callers, sides taking turns, CPU per process tree, a lean HTTP/1.1 client."""

from __future__ import annotations

import asyncio
import os
import socket
import statistics
import subprocess
import time
from collections import defaultdict
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field

import httpx
from cpu_meter import children_of, cpu_of


def free_port() -> int:
    """A TCP port nobody listens on right now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def percentiles(samples: list[float]) -> tuple[float, float]:
    """p50 and p99 in milliseconds."""
    ordered = sorted(samples)
    return (
        statistics.median(ordered) * 1000,
        ordered[min(len(ordered) - 1, round(0.99 * (len(ordered) - 1)))] * 1000,
    )


# A side answers a query with the number of passages it found.
Runner = Callable[[str], Awaitable[int]]


async def timed(run: Runner, queries: list[str], concurrency: int) -> tuple[list[float], int]:
    """Latency of each query from `concurrency` closed-loop callers, and how many answers held passages: each
    caller sends its next query the moment its previous answer arrives, and that moment starts the next query's
    clock.

    So the time a query waits for the event loop counts, as it does for a request waiting in a server's queue.
    A search that never yields (a small one runs on the loop) would otherwise start its clock only once the
    searches ahead of it were done, and measure its own CPU at any concurrency."""
    pending = iter(queries)
    samples: list[float] = []
    answered = 0
    start = time.perf_counter()  # every caller sends its first query now

    async def caller() -> None:
        nonlocal answered
        sent = start
        for query in pending:
            found = await run(query)
            arrived = time.perf_counter()
            samples.append(arrived - sent)
            sent = arrived
            answered += found > 0
            if concurrency > 1:
                await asyncio.sleep(0)  # the next query goes behind what the other callers have in flight

    await asyncio.gather(*(caller() for _ in range(concurrency)))
    return samples, answered


class ProcessCpu:
    """CPU seconds used so far by this process and by each other process tree of the run (from /proc): a tree's
    root, its live children, and (where asked) the children it has already reaped, such as PostgreSQL's parallel
    workers."""

    def __init__(self, trees: dict[str, int], reaped: set[str]) -> None:
        self.trees = trees
        self.reaped = reaped

    def read(self, own_first: bool) -> dict[str, float]:
        """CPU seconds per tree and for "bench"; reading /proc costs this process CPU, so a reading that starts
        a measure takes this process's figure last, and one that ends it takes it first."""
        found = {"bench": cpu_of(os.getpid())} if own_first else {}
        for name, root in self.trees.items():
            found[name] = cpu_of(root, reaped=name in self.reaped) + sum(cpu_of(c) for c in children_of(root))
        if not own_first:
            found["bench"] = cpu_of(os.getpid())
        return found


@dataclass
class SideResult:
    """One side's latencies for one shape and concurrency, its answers holding passages, and the CPU seconds
    each process tree used while it ran."""

    samples: list[float] = field(default_factory=list)
    answered: int = 0
    cpu: dict[str, float] = field(default_factory=lambda: defaultdict(float))


def block_size(concurrency: int) -> int:
    """Queries a side runs in one turn: long enough to run warm, a closed loop's ramp-up and tail once a block."""
    return 20 if concurrency == 1 else 100


async def timed_in_turns(
    runners: Mapping[str, Runner],
    queries: list[str],
    concurrency: int,
    meter: ProcessCpu,
    before_turn: Mapping[str, Callable[[], Awaitable[None]]],
    first_turn: int = 0,
) -> dict[str, SideResult]:
    """Each side's latencies (`timed`), the sides taking turns over blocks of the queries.

    This machine's speed drifts by tens of percent over minutes; one side's 200 queries after another's
    would compare different machines. Every side runs each block of queries (the same queries) before the
    next block, in an order that rotates from block to block, so a drift weighs on every side alike. A block
    is long enough for a side to run warm: 20 queries at concurrency 1, 100 at 16 (a closed loop's ramp-up
    and tail come once per block). `before_turn` readies a side before its block, untimed (an HTTP side
    replaces the connections its server is about to close after a long wait). `first_turn` continues the
    rotation of an earlier pass over the same queries, so a side does not open every pass."""
    block = block_size(concurrency)
    names = list(runners)
    results = {name: SideResult() for name in names}
    for turn, first in enumerate(range(0, len(queries), block), start=first_turn):
        order = names[turn % len(names) :] + names[: turn % len(names)]
        for name in order:
            if name in before_turn:
                await before_turn[name]()
            before = meter.read(own_first=False)
            samples, answered = await timed(runners[name], queries[first : first + block], concurrency)
            after = meter.read(own_first=True)
            results[name].samples += samples
            results[name].answered += answered
            for group, seconds in after.items():
                results[name].cpu[group] += seconds - before[group]
    return results


def blocks_of(queries: list[str], concurrency: int) -> int:
    """How many blocks `timed_in_turns` splits the queries into (to continue its rotation in a next pass)."""
    return -(-len(queries) // block_size(concurrency))


def pooled(passes: list[dict[str, SideResult]]) -> dict[str, SideResult]:
    """The passes of `timed_in_turns` over the same queries, as one result per side."""
    results: dict[str, SideResult] = {}
    for row in passes:
        for name, result in row.items():
            into = results.setdefault(name, SideResult())
            into.samples += result.samples
            into.answered += result.answered
            for group, seconds in result.cpu.items():
                into.cpu[group] += seconds
    return results


async def every_process_ready(base: str, processes: int, seconds: float = 900.0) -> None:
    """Wait until new connections (each may reach any of the processes) find the search replica ready many times
    in a row: every process beyond the first builds its own from PostgreSQL first. (The bench runs no Temporal,
    so `/health/ready` answers 503 whatever the replica: its `checks.search` is what tells.)"""
    deadline = time.perf_counter() + seconds
    in_a_row = 0
    while in_a_row < 10 * processes:
        if time.perf_counter() > deadline:
            raise SystemExit(f"the API processes were not all ready within {seconds:.0f} s")
        async with httpx.AsyncClient(base_url=base, timeout=10) as fresh:  # a new connection each time
            ready = (await fresh.get("/health/ready")).json().get("checks", {}).get("search") == "ok"
        in_a_row = in_a_row + 1 if ready else 0
        if not ready:
            await asyncio.sleep(1.0)


async def wait_for_http(base: str, path: str, server: subprocess.Popen[bytes], seconds: float = 60.0) -> None:
    """Wait until `base + path` answers 200."""
    deadline = time.perf_counter() + seconds
    async with httpx.AsyncClient(base_url=base, timeout=10) as client:
        while time.perf_counter() < deadline:
            if server.poll() is not None:
                raise SystemExit(f"the server for {base} exited with {server.returncode}")
            try:
                if (await client.get(path)).status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            await asyncio.sleep(0.1)
    raise SystemExit(f"{base}{path} did not answer within {seconds:.0f} s")


class KeepAliveHTTP:
    """A pool of keep-alive HTTP/1.1 connections that write a request and read the answer by its Content-Length.

    The latency of an HTTP client library (httpx adds about half a millisecond per request in Python) is
    not the endpoint's; this client costs a few microseconds.
    """

    def __init__(self, host: str, port: int, size: int) -> None:
        self.host, self.port = host, port
        self.idle: asyncio.Queue[tuple[asyncio.StreamReader, asyncio.StreamWriter, float]] = asyncio.Queue()
        self.size = size
        self.opened = 0

    async def refresh(self, older_than: float = 2.0) -> None:
        """Replace the connections left idle longer than `older_than` seconds (uvicorn closes them after 5 s), so
        that no timed request pays for a new connection."""
        kept = []
        while not self.idle.empty():
            reader, writer, used = self.idle.get_nowait()
            if time.monotonic() - used > older_than:
                writer.close()
                reader, writer = await asyncio.open_connection(self.host, self.port)
            kept.append((reader, writer, time.monotonic()))
        for connection in kept:
            self.idle.put_nowait(connection)

    async def post_json(self, path: str, body: bytes, headers: dict[str, str]) -> tuple[int, bytes]:
        """POST a JSON body; the status and the response body."""
        if self.idle.empty() and self.opened < self.size:
            self.opened += 1
            self.idle.put_nowait((*await asyncio.open_connection(self.host, self.port), time.monotonic()))
        reader, writer, _ = await self.idle.get()
        head = [f"POST {path} HTTP/1.1", f"Host: {self.host}", "Content-Type: application/json"]
        head += [f"Content-Length: {len(body)}", *(f"{k}: {v}" for k, v in headers.items())]
        request = ("\r\n".join(head) + "\r\n\r\n").encode() + body
        try:
            for attempt in range(2):
                try:
                    writer.write(request)
                    status_line = await reader.readline()
                    if not status_line:
                        raise ConnectionError("closed")
                    break
                except (ConnectionError, OSError):
                    # The server closes a keep-alive connection left idle (uvicorn: after 5 s): open another.
                    if attempt:
                        raise
                    writer.close()
                    reader, writer = await asyncio.open_connection(self.host, self.port)
            status = int(status_line.split()[1])
            length = 0
            while (line := await reader.readline()) != b"\r\n":
                if line.lower().startswith(b"content-length:"):
                    length = int(line.split(b":")[1])
            return status, await reader.readexactly(length)
        finally:
            self.idle.put_nowait((reader, writer, time.monotonic()))


def passages_in(body: bytes) -> int:
    """1 if a JSON answer `{"data": [...], ...}` lists something, else 0 (read from its first bytes: parsing
    the page would cost the client more than some searches)."""
    if not body.startswith(b'{"data":['):
        raise AssertionError(f"unexpected answer: {body[:120]!r}")
    return 0 if body.startswith(b'{"data":[]') else 1


async def settle(max_load: float, minutes: float) -> float:
    """Wait until the 1-minute load average is under `max_load`, for at most `minutes`; the load then."""
    deadline = time.monotonic() + minutes * 60
    if os.getloadavg()[0] >= max_load:
        print(f"  load {os.getloadavg()[0]:.2f}: waiting up to {minutes:.0f} min for it to fall under {max_load}")
    while os.getloadavg()[0] >= max_load and time.monotonic() < deadline:
        await asyncio.sleep(5)
    return os.getloadavg()[0]
