"""`groundwork serve --workers 2` spreads a client's connections over its processes."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import subprocess
import sys
import time
import uuid
from collections import defaultdict
from pathlib import Path

import httpx

from groundwork.config import Settings
from tests.conftest import free_port


def _pids_by_request(log_path: Path, marker: str) -> dict[str, int]:
    """The process that answered each request whose id starts with `marker` (from the access log)."""
    answered = {}
    for line in log_path.read_text().splitlines():
        if line.startswith("{") and f'"request_id": "{marker}' in line:
            entry = json.loads(line)
            answered[entry["request_id"]] = int(entry["pid"])
    return answered


async def _one_request_per_connection(port: int, request_ids: list[str]) -> None:
    """Open every connection first, as a client's pool does, then send one request on each."""
    connections = await asyncio.gather(*(asyncio.open_connection("127.0.0.1", port) for _ in request_ids))
    for (_, writer), request_id in zip(connections, request_ids, strict=True):
        writer.write(f"GET /health/live HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Request-Id: {request_id}\r\n\r\n".encode())
    for reader, writer in connections:
        assert (await reader.readuntil(b"\r\n\r\n")).startswith(b"HTTP/1.1 200")
        writer.close()


async def test_every_burst_of_sixteen_connections_reaches_both_processes(settings: Settings, tmp_path: Path) -> None:
    port, internal_port = free_port(), free_port()
    env = {
        **os.environ,
        "DATABASE_URL": settings.database_url,
        "TEMPORAL_ADDRESS": settings.temporal_address,
        "GROUNDWORK_INDEX_DIR": str(tmp_path / "index"),
    }
    env.pop("PROMETHEUS_MULTIPROC_DIR", None)
    serve = ["serve", "--workers", "2", "--port", str(port), "--internal-port", str(internal_port), "--access-log"]
    log_path = tmp_path / "serve.log"
    with log_path.open("wb") as log:
        process = subprocess.Popen(
            [sys.executable, "-m", "groundwork.cli", *serve],
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    marker = f"burst-{uuid.uuid4().hex[:8]}"
    try:
        deadline = time.monotonic() + 90
        warm = 0
        while len(set(_pids_by_request(log_path, f"{marker}-warm").values())) < 2:  # both processes serving
            assert process.poll() is None and time.monotonic() < deadline, log_path.read_text()[-2000:]
            with contextlib.suppress(httpx.HTTPError):
                async with httpx.AsyncClient(timeout=5) as fresh:
                    await fresh.get(
                        f"http://127.0.0.1:{port}/health/live", headers={"X-Request-Id": f"{marker}-warm-{warm}"}
                    )
            warm += 1
            await asyncio.sleep(0.05)
        for burst in range(8):
            await _one_request_per_connection(port, [f"{marker}-b{burst}-{n}" for n in range(16)])
            await asyncio.sleep(0.2)
        await asyncio.sleep(0.5)  # the access lines of the last burst
    finally:
        os.killpg(process.pid, signal.SIGTERM)
        process.wait(30)
    per_burst: dict[str, defaultdict[int, int]] = defaultdict(lambda: defaultdict(int))
    for request_id, pid in _pids_by_request(log_path, f"{marker}-b").items():
        per_burst[request_id.rsplit("-", 1)[0]][pid] += 1
    assert len(per_burst) == 8 and all(sum(split.values()) == 16 for split in per_burst.values())
    # With one socket shared by both processes, about two bursts in five went wholly to one of them.
    assert all(len(split) == 2 for split in per_burst.values()), [dict(split) for split in per_burst.values()]
