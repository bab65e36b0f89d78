"""Administration (issue 33): every route that administers a workspace or manages keys refuses a viewer, a
contributor and a key bound to a connected app, shows them nothing of the victim, and changes nothing."""

from __future__ import annotations

import json
import uuid

import httpx

from groundwork.persistence import change_feed
from groundwork.persistence.repositories.tenancy import workspaces as tenancy
from groundwork.services.tenancy import api_keys
from tests.reliability import authorization_matrix as matrix
from tests.reliability.test_authorization_matrix import Findings, Victim, _nothing_changed, _problem, _request, _send

# The matrix's victim workspace, as a fixture of this module too (pytest registers it by its own name).
from tests.reliability.test_authorization_matrix import victim as victim_fixture  # noqa: F401


async def _role_key(victim: Victim, name: str, role: str) -> str:
    issued = await api_keys.issue_key(victim.slug, f"{name}-{uuid.uuid4().hex[:6]}", None)
    await tenancy.add_membership(issued.principal_id, victim.ids["project"], role)
    return issued.key


async def _app_key(victim: Victim) -> str:
    """A key of the victim's admin bound to an active connected app (of the widest direction)."""
    from groundwork.services.tenancy import connected_apps

    app = await connected_apps.register_app_in(
        victim.slug,
        {
            "name": f"assistant-{uuid.uuid4().hex[:6]}",
            "kind": "assistant",
            "direction": "propose",
            "provenance": "assistant",
            "conflict": "reject",
        },
    )
    await connected_apps.set_app_status_by_id(app.id, "active")
    return (await api_keys.issue_key(victim.slug, "owner", None, admin=True, app_id=app.id)).key


async def test_every_administration_route_refuses_a_viewer_a_contributor_and_a_connected_apps_key(
    api_url: str,
    victim_fixture: Victim,  # noqa: F811 (the imported fixture, requested by its name)
) -> None:
    victim = victim_fixture
    findings = Findings()
    callers = {
        "viewer": await _role_key(victim, "viewer", "viewer"),
        "contributor": await _role_key(victim, "contributor", "contributor"),
        "connected app's key": await _app_key(victim),
    }
    await change_feed.caught_up()
    async with httpx.AsyncClient(base_url=api_url, timeout=60) as http:
        for route in matrix.ADMINISTRATION:
            row = matrix.REST[route]
            method, path, query, body = _request(route, row, victim.ids)
            for caller, key in callers.items():
                where = f"{route} [{caller}]"
                response = await _send(http, key, method, path, query, body)
                status, code, _ = _problem(response)
                if caller == "connected app's key":
                    refused = (status, code) in {(403, "app_direction_forbidden"), (403, "permission_denied")}
                elif row.scope == matrix.ADMIN:
                    refused = (status, code) == (403, "insufficient_scope")
                elif method == "GET":  # their own keys only
                    refused = status == 200 and victim.ids["api_key"] not in response.text
                else:  # a key for someone else, or someone else's key
                    refused = (status, code) in {(422, "validation_failed"), (404, "not_found")}
                findings.expect(refused, where, f"answered {status} {code}")
                findings.leaks(where, response.text, victim.secret_from_invisible, path + json.dumps(body))
        await _nothing_changed(http, victim)
    findings.assert_clean()
