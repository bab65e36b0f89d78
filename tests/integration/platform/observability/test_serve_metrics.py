"""`groundwork serve --workers 2`: `/metrics` of either process counts the requests both answered, the server
logs JSON lines with the request id when `--access-log` is on, and exports its spans over OTLP/HTTP when
`OTEL_EXPORTER_OTLP_ENDPOINT` is set."""

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
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import httpx
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

from groundwork.config import Settings
from tests.conftest import free_port
from tests.integration.platform.observability.helpers import value
from tests.integration.webhooks.conftest import Receiver


def _request_id(span: Any) -> str:
    return next((a.value.string_value for a in span.attributes if a.key == "groundwork.request_id"), "")


async def _wait_for_spans(collector: Receiver, marker: str, count: int) -> list[Any]:
    """The exported spans of the requests whose id starts with `marker`, once all `count` arrived."""
    deadline = time.monotonic() + 30
    while True:
        spans = [
            span
            for span in _exported_spans(collector)
            if any(
                a.key == "groundwork.request_id" and a.value.string_value.startswith(marker) for a in span.attributes
            )
        ]
        if len(spans) >= count or time.monotonic() > deadline:
            assert len(spans) == count, f"{len(spans)} of {count} spans exported"
            return spans
        await asyncio.sleep(0.2)


def _access_pids(log_path: Path, marker: str) -> set[int]:
    """The processes whose access lines show a request id starting with `marker`."""
    pids = set()
    for line in log_path.read_text().splitlines():
        if line.startswith("{") and f'"request_id": "{marker}' in line:
            pids.add(int(json.loads(line)["pid"]))
    return pids


def _exported_spans(collector: Receiver) -> list[Any]:
    """Every span the OTLP/HTTP exporters posted to the collector."""
    spans: list[Any] = []
    for request in collector.requests:
        assert request.path == "/v1/traces" and request.headers["content-type"] == "application/x-protobuf"
        export = ExportTraceServiceRequest.FromString(request.body)
        for resource in export.resource_spans:
            for scope in resource.scope_spans:
                spans.extend(scope.spans)
    return spans


async def test_metrics_of_a_multi_process_server_add_up_every_process(
    settings: Settings, tmp_path: Path, receivers: Callable[[], Awaitable[Receiver]]
) -> None:
    port, internal_port = free_port(), free_port()
    collector = await receivers()  # an OTLP/HTTP collector: records what the exporters post
    env = {
        **os.environ,
        "DATABASE_URL": settings.database_url,
        "TEMPORAL_ADDRESS": settings.temporal_address,
        "GROUNDWORK_INDEX_DIR": str(tmp_path / "index"),
        "OTEL_EXPORTER_OTLP_ENDPOINT": f"http://127.0.0.1:{collector.port}",
        "OTEL_BSP_SCHEDULE_DELAY": "200",
    }
    env.pop("PROMETHEUS_MULTIPROC_DIR", None)
    log_path = tmp_path / "serve.log"
    with log_path.open("wb") as log:
        process = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "groundwork.cli",
                "serve",
                "--workers",
                "2",
                "--port",
                str(port),
                "--internal-port",
                str(internal_port),
                "--access-log",
            ],
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    base = f"http://127.0.0.1:{port}"
    route = {"method": "GET", "route": "/health/live", "status": "200"}
    try:
        async with httpx.AsyncClient(base_url=base, timeout=10) as http:
            deadline = time.monotonic() + 60
            while True:
                assert process.poll() is None, log_path.read_text()
                with contextlib.suppress(httpx.HTTPError):
                    if (await http.get("/health/live", headers={"X-Request-Id": "warm-up"})).status_code == 200:
                        break
                assert time.monotonic() < deadline, log_path.read_text()
                await asyncio.sleep(0.2)
            before = value((await http.get("/metrics")).text, "groundwork_http_requests_total", **route)
            marker = f"req-{uuid.uuid4().hex[:8]}"
            sent = 0

            async def one(n: int) -> None:
                async with httpx.AsyncClient(base_url=base, timeout=10) as once:  # a fresh connection each
                    answer = await once.get("/health/live", headers={"X-Request-Id": f"{marker}-{n}"})
                    assert answer.headers["x-request-id"] == f"{marker}-{n}"

            # Until both processes have answered some (the kernel hands connections to either).
            while len(_access_pids(log_path, marker)) < 2:
                assert time.monotonic() < deadline + 60, "one process answered everything"
                await asyncio.gather(*(one(sent + n) for n in range(20)))
                sent += 20
                await asyncio.sleep(0.2)
            for _ in range(6):  # whichever process answers the scrape counts every request
                async with httpx.AsyncClient(base_url=base, timeout=10) as once:
                    page = (await once.get("/metrics")).text
                assert value(page, "groundwork_http_requests_total", **route) == before + sent
    finally:
        os.killpg(process.pid, signal.SIGTERM)
        process.wait(30)
    entries = [json.loads(line) for line in log_path.read_text().splitlines() if line.startswith("{")]
    access = [e for e in entries if e["logger"] == "groundwork.access" and e["request_id"].startswith(marker)]
    assert len(access) == sent and all(e["route"] == "/health/live" and e["status"] == 200 for e in access)
    exported = await _wait_for_spans(collector, marker, sent)
    assert {span.name for span in exported} == {"GET /health/live"}
    # Every line the server wrote is JSON, uvicorn's own included.
    lines = [line for line in log_path.read_text().splitlines() if line.strip()]
    assert all(line.startswith("{") for line in lines if not line.startswith("internal API on")), lines[:20]
