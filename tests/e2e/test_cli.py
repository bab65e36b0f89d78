"""The `groundwork` command against a real database: keys and import."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import httpx

from tests.conftest import Workspace


def groundwork(dsn: str, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "DATABASE_URL": dsn}
    return subprocess.run(
        [sys.executable, "-m", "groundwork.cli", *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        stdin=subprocess.DEVNULL,
    )


async def test_keys_create_prints_only_the_key_and_it_works(
    database: str, client: httpx.AsyncClient, workspace: Workspace
) -> None:
    done = groundwork(
        database, "keys", "create", "--workspace", workspace.slug, "--principal", "robot", "--scope", "work-items:read"
    )
    assert done.returncode == 0, done.stderr
    key = done.stdout.strip()
    assert done.stdout == key + "\n" and key.startswith("gw_")
    assert "created principal 'robot'" in done.stderr
    projects = await client.get("/api/v1/projects", headers=workspace.headers(key))
    assert projects.status_code == 200 and projects.json()["data"] == []  # new principal: no memberships
    write = await client.post("/api/v1/work-items", json={}, headers=workspace.headers(key, **{"Idempotency-Key": "x"}))
    assert write.status_code == 403

    admin = groundwork(
        database, "keys", "create", "--workspace", workspace.slug, "--principal", "boss", "--all-scopes", "--admin"
    )
    seen = await client.get("/api/v1/projects", headers=workspace.headers(admin.stdout.strip()))
    assert [p["key"] for p in seen.json()["data"]] == ["ALPHA", "BETA"]

    listing = groundwork(database, "keys", "list", "--workspace", workspace.slug)
    assert listing.returncode == 0 and "robot" in listing.stdout and key not in listing.stdout
    key_id = next(line.split()[0] for line in listing.stdout.splitlines() if "/robot" in line)
    revoked = groundwork(database, "keys", "revoke", key_id)
    assert revoked.returncode == 0, revoked.stderr
    assert (await client.get("/api/v1/projects", headers=workspace.headers(key))).status_code == 401
    assert groundwork(database, "keys", "revoke", key_id).returncode == 1


def test_keys_create_refuses_bad_input(database: str) -> None:
    neither = groundwork(database, "keys", "create", "--workspace", "demo", "--principal", "x")
    assert neither.returncode == 2 and neither.stdout == ""
    unknown_ws = groundwork(database, "keys", "create", "--workspace", "no-such-ws", "--principal", "x", "--all-scopes")
    assert unknown_ws.returncode == 2 and "no-such-ws" in unknown_ws.stderr and unknown_ws.stdout == ""
    bad_scope = groundwork(database, "keys", "create", "--workspace", "demo", "--principal", "x", "--scope", "root")
    assert bad_scope.returncode == 2 and bad_scope.stdout == ""


async def test_import_reports_bad_lines_by_number_and_keeps_the_good_ones(
    database: str, client: httpx.AsyncClient, workspace: Workspace, tmp_path: Path
) -> None:
    key = await workspace.key("admin", admin=True)
    lines = [
        json.dumps(
            {
                "project": "ALPHA",
                "title": "Good one",
                "status": "todo",
                "watchers": ["admin"],
                "fields": {"description": "Imported.", "estimate": 2},
            }
        ),
        "{not json",
        json.dumps({"project": "NOPE", "title": "Unknown project"}),
        "",
        json.dumps({"project": "BETA", "title": "Bad estimate", "fields": {"estimate": "lots"}}),
        json.dumps({"project": "BETA", "title": "Good two"}),
        json.dumps(["not", "an", "object"]),
    ]
    source = tmp_path / "items.jsonl"
    source.write_text("\n".join(lines) + "\n", encoding="utf-8")
    done = groundwork(database, "import", str(source), "--workspace", workspace.slug)
    assert done.returncode == 1
    for number in (2, 3, 5, 7):
        assert f"line {number}: skipped" in done.stderr
    assert "fields.estimate" in done.stderr
    assert "imported 2 work item(s), skipped 4 line(s)" in done.stderr
    items = (await client.get("/api/v1/work-items", headers=workspace.headers(key))).json()["data"]
    assert sorted(i["title"] for i in items) == ["Good one", "Good two"]
    good = next(i for i in items if i["title"] == "Good one")
    assert good["watchers"] == [workspace.principals["admin"]] and good["fields"]["estimate"] == 2
    history = (await client.get(f"/api/v1/work-items/{good['id']}/history", headers=workspace.headers(key))).json()
    assert history["data"][0]["source"] == "import"


async def test_apps_register_activate_list_and_a_key_bound_to_an_app(
    database: str, client: httpx.AsyncClient, workspace: Workspace
) -> None:
    registered = groundwork(
        database,
        *("apps", "register", "--workspace", workspace.slug, "--name", "Desktop assistant", "--kind", "assistant"),
        *("--direction", "read", "--provenance", "claude-desktop"),
    )
    assert registered.returncode == 0, registered.stderr
    app_id = registered.stdout.strip()
    assert app_id.startswith("app_")
    bound = groundwork(
        database,
        "keys",
        "create",
        "--workspace",
        workspace.slug,
        "--principal",
        "helper",
        "--all-scopes",
        "--app",
        app_id,
    )
    assert bound.returncode == 0, bound.stderr
    key = bound.stdout.strip()
    refused = await client.get("/api/v1/projects", headers=workspace.headers(key))
    assert refused.status_code == 403 and refused.json()["code"] == "app_not_active"
    assert groundwork(database, "apps", "activate", app_id).returncode == 0
    assert (await client.get("/api/v1/projects", headers=workspace.headers(key))).status_code == 200
    listing = groundwork(database, "apps", "list", "--workspace", workspace.slug)
    assert app_id in listing.stdout and "direction read" in listing.stdout and "active" in listing.stdout
    assert "1 key(s)" in listing.stdout
    wrong = groundwork(
        database,
        *("apps", "register", "--workspace", workspace.slug, "--name", "Chat", "--kind", "chat"),
        *("--direction", "read", "--provenance", "x"),
    )
    assert wrong.returncode == 2 and "direction" in wrong.stderr
    assert groundwork(database, "apps", "deactivate", app_id).returncode == 0
    assert (await client.get("/api/v1/projects", headers=workspace.headers(key))).status_code == 403


async def test_keys_create_gives_a_provider_the_roles_it_needs_to_contribute(
    database: str, workspace: Workspace, worker: object
) -> None:
    refused = groundwork(
        database,
        "keys",
        "create",
        "--workspace",
        workspace.slug,
        "--principal",
        "feed",
        "--kind",
        "provider",
        "--scope",
        "context-engine:contribute",
        "--member",
        "ALPHA=owner",
    )
    assert refused.returncode == 2 and "PROJECT=ROLE" in refused.stderr and refused.stdout == ""
    done = groundwork(
        database,
        "keys",
        "create",
        "--workspace",
        workspace.slug,
        "--principal",
        "feed",
        "--kind",
        "provider",
        "--scope",
        "context-engine:contribute",
        "--member",
        "ALPHA=contributor",
        "--member",
        "BETA=viewer",
    )
    assert done.returncode == 0, done.stderr
    assert "feed is contributor on ALPHA" in done.stderr and "feed is viewer on BETA" in done.stderr
    key = done.stdout.strip()
    source = {"uri": "notes.md", "kind": "markdown", "content": "# Notes"}
    for project, status in (("ALPHA", 201), ("BETA", 403)):
        response = await workspace.internal.post(
            "/internal/v1/corpus/sources",
            params={"wait": 30},
            json={**source, "project_id": workspace.projects[project]},
            headers=workspace.headers(key, **{"Idempotency-Key": f"feed-{project}"}),
        )
        assert response.status_code == status, response.text
