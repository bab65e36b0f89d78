"""Schemathesis against the real API's `/schema/openapi.json`: coverage, fuzzing and stateful phases, zero failures.

The API runs for real (uvicorn on 127.0.0.1, PostgreSQL, Temporal and the worker of the session) and
the run uses a real admin key of a workspace with data: projects, work items, a finished enhancement
run with drafts, a webhook endpoint with a delivery, a thread with messages, notifications, a
connected app. Their ids are given to schemathesis as dictionaries, so most generated requests reach
the code behind the 404. Seeded and bounded (`--seed`, `--max-examples`, `--max-time`).
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.conftest import Workspace, idem
from tests.reliability import schemathesis_hooks

SCHEMATHESIS = Path(sys.executable).parent / "schemathesis"
REPO = Path(__file__).resolve().parents[2]
SEED = 20261123
MAX_EXAMPLES = 15
# The whole run's budget: fuzzing and stateful testing stop there (the coverage phase runs whole).
MAX_SECONDS = 50
CHECKS = "not_a_server_error,status_code_conformance,content_type_conformance,response_schema_conformance"


async def _ok(response: httpx.Response) -> dict[str, Any]:
    assert response.status_code < 300, response.text
    return dict(response.json())


async def _seed(client: httpx.AsyncClient, workspace: Workspace) -> tuple[str, dict[str, list[str]]]:
    """Fill the workspace through the API; the admin key and the ids each parameter name may take."""
    admin = await workspace.key("admin", admin=True)
    maya = await workspace.key("maya", memberships={"ALPHA": "contributor", "BETA": "contributor"})
    h = workspace.headers(admin)
    alpha, beta = workspace.projects["ALPHA"], workspace.projects["BETA"]
    items = []
    for n, (project, status) in enumerate([(alpha, "todo"), (alpha, "in_progress"), (beta, "done")]):
        body = {
            "project_id": project,
            "title": f"Rotate the PSP keys, step {n}",
            "status": status,
            "fields": {"description": "Keys must rotate every 90 days.", "estimate": 3},
        }
        items.append((await _ok(await client.post("/api/v1/work-items", json=body, headers={**h, **idem()})))["data"])
    run = (
        await _ok(
            await client.post(
                "/api/v1/work-item-enhancements?wait=30",
                json={
                    "target": {"type": "work_item", "id": items[0]["id"]},
                    "actions": ["requirements", "estimate"],
                    "confirm": True,
                },
                headers={**h, **idem()},
            )
        )
    )["data"]
    drafts = (await _ok(await client.get(f"/api/v1/work-item-enhancements/{run['id']}/drafts", headers=h)))["data"]
    endpoint = (
        await _ok(
            await client.post(
                "/api/v1/webhook-endpoints",
                json={
                    "url": schemathesis_hooks.CLOSED_LOOPBACK_URL,
                    "event_types": ["work_item_enhancement.*", "notification.*"],
                },
                headers={**h, **idem()},
            )
        )
    )["data"]
    await _ok(await client.post(f"/api/v1/webhook-endpoints/{endpoint['id']}/test", headers={**h, **idem()}))
    deliveries = (await _ok(await client.get(f"/api/v1/webhook-endpoints/{endpoint['id']}/deliveries", headers=h)))[
        "data"
    ]
    thread = (
        await _ok(
            await client.post(
                "/api/v1/messages",
                json={"title": "Key rotation", "participant_ids": [workspace.principals["admin"]], "body": "Ready?"},
                headers={**workspace.headers(maya), **idem()},
            )
        )
    )["data"]
    await _ok(
        await client.post(
            f"/api/v1/messages/{thread['id']}/messages",
            json={"body": "Friday works."},
            headers={**workspace.headers(maya), **idem()},
        )
    )
    notifications: list[dict[str, Any]] = []
    for _ in range(200):
        notifications = (await _ok(await client.get("/api/v1/notifications", headers=h)))["data"]
        if notifications:
            break
        await asyncio.sleep(0.05)
    app = (
        await _ok(
            await client.post(
                "/api/v1/connected-apps",
                json={
                    "name": "Assistant",
                    "kind": "assistant",
                    "direction": "read",
                    "provenance": "assistant",
                    "conflict": "reject",
                },
                headers={**h, **idem()},
            )
        )
    )["data"]
    cursors = []
    for listing in ("/api/v1/work-items", "/api/v1/notifications", "/api/v1/work-item-enhancements"):
        page = (await _ok(await client.get(listing, params={"limit": 1}, headers=h)))["page"]
        cursors += [page["nextCursor"]] if page.get("nextCursor") else []
    ids = {
        "cursor": cursors,
        "project_id": [alpha, beta],
        "work_item_id": [i["id"] for i in items],
        "run_id": [run["id"]],
        "draft_id": [d["id"] for d in drafts],
        "endpoint_id": [endpoint["id"]],
        "delivery_id": [d["id"] for d in deliveries],
        "thread_id": [thread["id"]],
        "notification_id": [n["id"] for n in notifications],
        "app_id": [app["id"]],
        "operation_id": [run["id"]],
        "target_id": [items[0]["id"]],
    }
    return admin, {name: values for name, values in ids.items() if values}


def _config(ids: dict[str, list[str]], hooks_module: str) -> str:
    """A schemathesis.toml: the hooks, and each id name bound to real ids for most draws."""
    lines = [f'hooks = "{hooks_module}"', ""]
    for name, values in ids.items():
        lines += [f"[dictionaries.{name}]", f"values = {json.dumps(values)}", ""]
    lines.append("[parameters]")
    for name in ids:
        for location in ("path", "query", "body"):
            lines.append(f'"{location}.{name}" = {{ dictionary = "{name}", probability = 0.8 }}')
    return "\n".join(lines) + "\n"


@pytest.mark.usefixtures("worker")
async def test_rest_api_conforms_to_its_openapi_document_under_fuzzing(
    client: httpx.AsyncClient, api_url: str, workspace: Workspace, tmp_path: Path
) -> None:
    admin, ids = await _seed(client, workspace)
    config = tmp_path / "schemathesis.toml"
    config.write_text(_config(ids, "tests.reliability.schemathesis_hooks"))
    report = tmp_path / "report.json"
    process = await asyncio.create_subprocess_exec(
        str(SCHEMATHESIS),
        "--config-file",
        str(config),
        "run",
        f"{api_url}/schema/openapi.json",
        "--header",
        f"Authorization: Bearer {admin}",
        "--phases",
        "coverage,fuzzing,stateful",
        "--checks",
        CHECKS,
        "--exclude-path-regex",
        "^/graphql",
        "--seed",
        str(SEED),
        "--max-examples",
        str(MAX_EXAMPLES),
        "--max-time",
        str(MAX_SECONDS),
        "--workers",
        "1",
        "--request-timeout",
        "60",
        "--report",
        "json",
        "--report-json-path",
        str(report),
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT,
        cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": str(REPO), "NO_COLOR": "1"},
    )
    output, _ = await asyncio.wait_for(process.communicate(), timeout=MAX_SECONDS * 3)
    text = output.decode(errors="replace")
    (tmp_path / "schemathesis.txt").write_text(text)
    assert process.returncode == 0, text[-20000:]
    # It really ran: every operation was tested, and a few thousand cases went through the checks.
    assert "Tested: 59" in text or "Tested:" in text, text[-5000:]
    generated = int(text.split(" generated, ")[0].rsplit(maxsplit=1)[-1])
    assert generated >= 1000, text[-5000:]
