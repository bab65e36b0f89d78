"""`groundwork status` against the session's real stack: healthy, and each kind of unhealthy, with its exit code."""

from __future__ import annotations

import asyncio
import json
import os
import sys
import uuid
from typing import Any

from groundwork.config import Settings
from groundwork.platform.outbox.relay import OutboxRelay
from groundwork.platform.search_replica.corpus_projection import catch_up_index
from groundwork.search.corpus_index import corpus_index
from tests.conftest import free_port
from tests.integration.platform.observability.helpers import outbox_drained


async def _status(settings: Settings, *args: str, **env: str) -> tuple[int, str]:
    """Run `groundwork status` as an operator would, while this process keeps serving the API and the worker."""
    environment = {
        **os.environ,
        "DATABASE_URL": settings.database_url,
        "TEMPORAL_ADDRESS": settings.temporal_address,
        "TEMPORAL_TASK_QUEUE": settings.temporal_task_queue,
        "GROUNDWORK_INDEX_DIR": str(settings.index_dir),
        **env,
    }
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "groundwork.cli",
        "status",
        *args,
        env=environment,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT,
    )
    output, _ = await asyncio.wait_for(process.communicate(), 120)
    assert process.returncode is not None
    return process.returncode, output.decode()


async def _drained() -> None:
    """What earlier tests left behind is dispatched and indexed, as a running worker would have done."""

    await outbox_drained()
    await catch_up_index(corpus_index())


async def test_status_of_a_healthy_stack_exits_0_and_shows_every_part(
    settings: Settings, api_url: str, worker: Any, relay: OutboxRelay
) -> None:
    await _drained()
    code, output = await _status(settings, "--api-url", api_url)
    assert code == 0, output
    for part in ("api", "postgres", "temporal", "workers", "outbox", "webhook deliveries", "search index"):
        assert any(line.startswith("ok") and f"  {part}  " in line for line in output.splitlines()), (part, output)
    assert f"task queue {settings.temporal_task_queue}: " in output
    assert output.rstrip().endswith("healthy") and "FAIL" not in output

    code, output = await _status(settings, "--api-url", api_url, "--json")
    assert code == 0, output
    status = json.loads(output)
    checks = {check["name"]: check for check in status["checks"]}
    assert status["healthy"] is True
    assert checks["workers"]["values"]["workflow"] >= 1 and checks["workers"]["values"]["activity"] >= 1
    assert checks["outbox"]["values"]["events"] == 0
    assert checks["search index"]["values"]["change_sets_behind"] == 0
    assert checks["webhook deliveries"]["values"]["failed"] >= 0
    assert checks["api"]["values"]["status"] == 200


async def test_status_exits_1_and_names_what_is_down(settings: Settings, api_url: str, worker: Any) -> None:
    nobody = f"nobody-polls-{uuid.uuid4().hex[:8]}"
    code, output = await _status(settings, "--api-url", api_url, "--json", TEMPORAL_TASK_QUEUE=nobody)
    assert code == 1, output
    checks = {check["name"]: check for check in json.loads(output)["checks"]}
    assert checks["workers"]["healthy"] is False and "no worker is polling" in checks["workers"]["detail"]
    assert checks["api"]["healthy"] and checks["postgres"]["healthy"] and checks["temporal"]["healthy"]

    closed = f"http://127.0.0.1:{free_port()}"
    code, output = await _status(
        settings,
        "--api-url",
        closed,
        DATABASE_URL=f"postgresql://nobody@127.0.0.1:{free_port()}/nothing",
        TEMPORAL_ADDRESS=f"127.0.0.1:{free_port()}",
    )
    assert code == 1, output
    lines = output.splitlines()
    for part in ("api", "postgres", "temporal", "workers", "outbox", "search index"):
        assert any(line.startswith("FAIL") and f"  {part}  " in line for line in lines), (part, output)
    assert lines[-1] == "UNHEALTHY"
