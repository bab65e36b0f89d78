"""`groundwork contribute FILE.jsonl` and `groundwork providers ...`, as an operator runs them."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx

from groundwork.persistence import db
from tests.conftest import Workspace
from tests.integration.context_engine.helpers import body, context_events, get, register
from tests.integration.evidence_search.test_cli import _groundwork


def _env(settings: Any, *, worker: bool) -> dict[str, str]:
    return {
        "DATABASE_URL": settings.database_url,
        "GROUNDWORK_INDEX_DIR": str(settings.index_dir),
        "TEMPORAL_TASK_QUEUE": settings.temporal_task_queue,
        "TEMPORAL_ADDRESS": settings.temporal_address if worker else "127.0.0.1:9",
    }


async def test_contribute_reports_bad_lines_by_number_and_writes_only_whole_good_ones(
    client: httpx.AsyncClient, workspace: Workspace, worker: Any, settings: Any, tmp_path: Path
) -> None:
    provider = await register(workspace, "risk-radar")
    alpha = workspace.projects["ALPHA"]
    good = body(provider, alpha, "Okapi migration", "The okapi migration overruns.")
    lines = [
        json.dumps(good),
        "",
        "{not json",
        json.dumps({**good, "term": "Other", "evidence": []}),
        json.dumps(
            body(
                provider,
                alpha,
                "Okapi migration",
                "Second view.",
                items=[{**good["evidence"][0], "reference": {"kind": "external", "id": "r2", "class": "general"}}],
            )
        ),
        json.dumps({**good, "provider_id": "prov_nope"}),
    ]
    path = tmp_path / "contributions.jsonl"
    path.write_text("\n".join(lines) + "\n")
    code, out, err = await _groundwork(
        "contribute", str(path), "--workspace", workspace.slug, env=_env(settings, worker=True)
    )
    assert code == 1, err
    assert "through the worker (Temporal)" in err and "Contributing" in err
    assert "line 3: not valid JSON" in err
    assert "line 4: evidence: must hold 1 to 50 references" in err
    assert "line 6: provider_id: no such provider in this workspace" in err
    assert "contributed 2 line(s): 1 created, 1 merged, 0 superseded, 0 kept separate; unchanged 0; failed 3" in out
    rows = await db.fetch(
        "SELECT body->>'term' AS term FROM context_contributions WHERE workspace_id = $1", workspace.id
    )
    assert sorted(r["term"] for r in rows) == ["Okapi migration", "Okapi migration"]
    events = await context_events(workspace)
    assert len(events) == 4

    # Again, in-process (no worker reachable): every good line is already known, nothing changes.
    code, out, err = await _groundwork(
        "contribute", str(path), "--workspace", workspace.slug, env=_env(settings, worker=False)
    )
    assert code == 1 and "in this process" in err
    assert "contributed 0 line(s)" in out and "unchanged 2" in out
    assert len(await context_events(workspace)) == 4

    fixed = tmp_path / "fixed.jsonl"
    fixed.write_text(json.dumps({**good, "term": "Okapi budget", "summary": "New."}) + "\n")
    code, out, err = await _groundwork(
        "contribute", str(fixed), "--workspace", workspace.slug, env=_env(settings, worker=False)
    )
    assert code == 0, err
    assert "1 created" in out
    key = await workspace.key(admin=True)
    found = await get(client, workspace, key, "/api/v1/context-engine/search", query="okapi budget")
    assert found["data"]["totalCount"] >= 1


async def test_providers_commands_register_list_and_run(
    client: httpx.AsyncClient, workspace: Workspace, worker: Any, settings: Any
) -> None:
    env = _env(settings, worker=True)
    code, out, err = await _groundwork(
        "providers",
        "register",
        "--workspace",
        workspace.slug,
        "--name",
        "ledger",
        "--classification",
        "financial",
        "--capability",
        "risks",
        env=env,
    )
    assert code == 0, err
    provider_id = out.strip()
    assert provider_id.startswith("prov_") and "registered provider ledger" in err
    code, out, err = await _groundwork(
        "providers",
        "register",
        "--workspace",
        workspace.slug,
        "--name",
        "ledger",
        "--classification",
        "staffing",
        "--capability",
        "risks",
        env=env,
    )
    assert code == 2 and "classification" in err
    await db.execute(
        "INSERT INTO work_items (id, workspace_id, project_id, key, title, status, fields, version)"
        " VALUES ('wi_cli_' || $1, $1, $2, 'ALPHA-99', 'Risky thing', 'todo', $3::jsonb, now())",
        workspace.id,
        workspace.projects["ALPHA"],
        json.dumps({"risks": "The okapi vendor may go bust."}),
    )
    code, out, err = await _groundwork("providers", "run", "--workspace", workspace.slug, env=env)
    assert code == 0 and "through the worker" in err, err
    assert out.strip() == "contributed 1, unchanged 0"
    code, out, err = await _groundwork("providers", "run", "--workspace", workspace.slug, env=env)
    assert out.strip() == "contributed 0, unchanged 1", err
    code, out, err = await _groundwork("providers", "list", "--workspace", workspace.slug, env=env)
    assert code == 0
    names = [line.split()[1] for line in out.splitlines()]
    assert names == ["corpus", "ledger", "work-items"]
    code, out, err = await _groundwork("providers", "run", "--workspace", "no-such-space", env=env)
    assert code == 2 and "no-such-space" in err
