"""The authorization matrix of MCP resources: every resource template is declared (tests/reliability/
authorization_matrix.py MCP_RESOURCES), and reading the victim's resource refuses every caller who may not see it,
showing nothing of it, while the resource's owner reads it."""

from __future__ import annotations

import json
from typing import Any

import httpx
from mcp.shared.exceptions import MCPError

from groundwork.api.mcp.server import build_mcp_server
from tests.conftest import mcp_session
from tests.reliability import authorization_matrix as matrix
from tests.reliability.test_authorization_matrix import (  # the victim workspace and the checks on it
    Findings,
    Victim,
    _secret_for,
    victim,
)

__all__ = ["victim"]
RESOURCE_NOT_FOUND = -32002


async def test_every_mcp_resource_template_is_declared_in_the_matrix() -> None:
    templates = {t.uri_template for t in await build_mcp_server().list_resource_templates()}
    assert matrix.undeclared(templates, matrix.MCP_RESOURCES) == ([], []), "MCP resources (undeclared, stale)"


async def _read(api_url: str, key: str, uri: str) -> tuple[Any, MCPError | None]:
    async with mcp_session(api_url, key) as session:
        try:
            return (await session.read_resource(uri)).contents, None
        except MCPError as refused:
            return None, refused


async def test_every_mcp_resource_refuses_every_unauthorised_caller_and_shows_nothing(
    api_url: str, client: httpx.AsyncClient, victim: Victim
) -> None:
    findings = Findings()
    for template, row in matrix.MCP_RESOURCES.items():
        uri = row.args(victim.ids)["uri"]
        for caller in ("no key", "revoked key"):
            key = victim.keys[caller]
            headers = {"Accept": "application/json, text/event-stream"} | (
                {"Authorization": f"Bearer {key}"} if key else {}
            )
            call = {"jsonrpc": "2.0", "id": 1, "method": "resources/read", "params": {"uri": uri}}
            response = await client.post("/mcp/", json=call, headers=headers)
            findings.expect(response.status_code == 401, f"{template} [{caller}]", f"got {response.status_code}")
        callers = {"key without the scope": victim.without_scope(str(row.scope))}
        callers |= {c: str(victim.keys[c]) for c in ("key of another workspace", "principal without visibility")}
        for caller, key in callers.items():
            where = f"MCP {template} [{caller}]"
            contents, refused = await _read(api_url, key, uri)
            if refused is None:
                findings.expect(False, where, f"read {str(contents)[:200]}")
                continue
            text = json.dumps(refused.error.model_dump())
            findings.leaks(where, text, _secret_for(victim, caller), uri)
            expected = "insufficient_scope" if caller == "key without the scope" else "not_found"
            code = (refused.error.data or {}).get("code")
            findings.expect(code == expected, where, f"expected {expected}, got {code}: {text[:200]}")
            if expected == "not_found":
                findings.expect(refused.error.code == RESOURCE_NOT_FOUND, where, f"JSON-RPC {refused.error.code}")
        owner = victim.recipient if template.startswith("groundwork://notifications") else victim.owner
        contents, refused = await _read(api_url, owner, uri)
        findings.expect(refused is None and json.loads(contents[0].text)["id"] in uri, template, f"{refused}")
    findings.assert_clean()
