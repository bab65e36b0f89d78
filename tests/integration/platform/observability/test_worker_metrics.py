"""`groundwork worker --metrics-port`: Groundwork's gauges and the Temporal SDK's workflow and activity metrics on one
page, and the worker's log as JSON lines."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import subprocess
import sys
import time
import uuid
from pathlib import Path
from typing import Any

import httpx

from groundwork.config import Settings
from groundwork.workflows.context_engine import PROVIDERS_SCHEDULE_ID
from groundwork.workflows.maintenance import (
    PURGE_SCHEDULE_ID,
    WEBHOOK_HISTORY_SCHEDULE_ID,
    PurgeIdempotencyKeysWorkflow,
)
from tests.conftest import free_port
from tests.integration.platform.observability.helpers import samples, value


async def _page(
    url: str, process: subprocess.Popen[bytes], log: Path, timeout: float = 60.0, showing: str | None = None
) -> str:
    """The metrics page once it answers (the worker connects to PostgreSQL and Temporal first), and once it shows
    the family `showing` (the gauges of shared state appear once the worker knows it is the one reporting them)."""
    deadline = time.monotonic() + timeout
    async with httpx.AsyncClient(timeout=5) as http:
        while True:
            assert process.poll() is None, log.read_text()
            with contextlib.suppress(httpx.HTTPError):
                response = await http.get(url)
                if response.status_code == 200 and (showing is None or samples(response.text, showing)):
                    return response.text
            assert time.monotonic() < deadline, f"{url} did not answer; worker log:\n{log.read_text()}"
            await asyncio.sleep(0.2)


async def test_the_worker_serves_its_gauges_and_the_sdks_workflow_and_activity_outcomes(
    settings: Settings, temporal_client: Any, tmp_path: Path
) -> None:
    queue = f"metrics-{uuid.uuid4().hex[:8]}"
    port = free_port()
    env = {
        **os.environ,
        "DATABASE_URL": settings.database_url,
        "TEMPORAL_ADDRESS": settings.temporal_address,
        "TEMPORAL_TASK_QUEUE": queue,
        "GROUNDWORK_INDEX_DIR": str(tmp_path / "index"),
    }
    log_path = tmp_path / "worker.log"
    with log_path.open("wb") as log:
        process = subprocess.Popen(
            [sys.executable, "-m", "groundwork.cli", "worker", "--metrics-port", str(port)],
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
        )
    url = f"http://127.0.0.1:{port}/metrics"
    try:
        first = await _page(url, process, log_path, showing="groundwork_outbox_backlog_events")
        assert samples(first, "groundwork_outbox_backlog_events"), "the database gauges are missing"
        removed = await temporal_client.execute_workflow(
            PurgeIdempotencyKeysWorkflow.run, id=f"purge-metrics-{uuid.uuid4().hex}", task_queue=queue
        )
        assert removed >= 0

        async def completed_page() -> str:
            deadline = time.monotonic() + 30
            while True:
                page = await _page(url, process, log_path)
                done = value(page, "temporal_workflow_completed_total", workflow_type="PurgeIdempotencyKeysWorkflow")
                if done >= 1:
                    return page
                assert time.monotonic() < deadline, page
                await asyncio.sleep(0.5)

        page = await completed_page()
        activity = {"activity_type": "purge_expired_idempotency_keys", "task_queue": queue}
        assert value(page, "temporal_activity_execution_latency_seconds_count", **activity) >= 1
        assert value(page, "temporal_activity_execution_failed_total", **activity) == 0
        assert samples(page, "groundwork_search_index_lag_changes")
        assert samples(page, "groundwork_webhook_deliveries_failed")
        # Only the worker's own families: the API's request metrics are not here, even empty.
        assert "groundwork_http_requests_total" not in page and "groundwork_http_request_duration" not in page
    finally:
        process.terminate()
        process.wait(30)
        for schedule in (PROVIDERS_SCHEDULE_ID, PURGE_SCHEDULE_ID, WEBHOOK_HISTORY_SCHEDULE_ID):
            with contextlib.suppress(Exception):
                await temporal_client.get_schedule_handle(schedule).delete()

    lines = log_path.read_text().splitlines()
    assert lines
    entries = [json.loads(line) for line in lines]  # every line is one JSON object
    assert any(entry["message"].startswith("worker polling task queue") for entry in entries)
    assert all({"time", "level", "logger", "message"} <= entry.keys() for entry in entries)
