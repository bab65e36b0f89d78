"""`groundwork workspaces`: a team creates its own workspace and first admin from the command line."""

from __future__ import annotations

import uuid

import httpx

from tests.e2e.test_cli import groundwork


async def test_workspaces_create_prints_only_the_admins_key_and_it_administers_the_new_workspace(
    database: str, client: httpx.AsyncClient
) -> None:
    slug = f"acme-{uuid.uuid4().hex[:8]}"
    done = groundwork(database, "workspaces", "create", slug, "--name", "Acme Payments", "--admin", "ana")
    assert done.returncode == 0, done.stderr
    key = done.stdout.strip()
    assert done.stdout == key + "\n" and key.startswith("gw_")
    assert f"created workspace {slug!r}" in done.stderr and "'ana'" in done.stderr
    headers = {"Authorization": f"Bearer {key}"}
    projects = await client.get("/api/v1/projects", headers=headers)
    assert projects.status_code == 200 and projects.json()["data"] == []  # a new workspace is empty, not the demo

    listing = groundwork(database, "workspaces", "list")
    assert listing.returncode == 0 and f"  {slug}  Acme Payments" in listing.stdout
    assert key not in listing.stdout

    # A key for a colleague now works: the workspace exists (the first failure).
    colleague = groundwork(database, "keys", "create", "--workspace", slug, "--principal", "ben", "--all-scopes")
    assert colleague.returncode == 0, colleague.stderr


def test_workspaces_create_refuses_a_taken_slug_and_a_bad_one_and_prints_no_key(database: str) -> None:
    slug = f"taken-{uuid.uuid4().hex[:8]}"
    assert groundwork(database, "workspaces", "create", slug, "--name", "First", "--admin", "ana").returncode == 0
    again = groundwork(database, "workspaces", "create", slug, "--name", "Second", "--admin", "bob")
    assert again.returncode == 2 and "exists already" in again.stderr and again.stdout == ""
    bad = groundwork(database, "workspaces", "create", "Not A Slug", "--name", "X", "--admin", "ana")
    assert bad.returncode == 2 and "not a workspace slug" in bad.stderr and bad.stdout == ""
    listing = groundwork(database, "workspaces", "list").stdout
    assert "Second" not in listing and "Not A Slug" not in listing
