"""The internal API lives on its own listener with its own OpenAPI document, never on the public one."""

from __future__ import annotations

import asyncio
import dataclasses
import socket

import httpx
import uvicorn

from groundwork.api.app import create_listeners
from groundwork.config import Settings
from tests.conftest import Workspace


async def test_the_public_document_has_no_internal_path_and_the_internal_one_has_its_own(
    client: httpx.AsyncClient, internal_client: httpx.AsyncClient
) -> None:
    public = (await client.get("/schema/openapi.json")).json()
    assert public["paths"] and not [p for p in public["paths"] if p.startswith("/internal")]
    internal = (await internal_client.get("/schema/openapi.json")).json()
    paths = set(internal["paths"])
    assert {
        "/internal/v1/context-engine/providers",
        "/internal/v1/context-engine/contributions",
        "/internal/v1/corpus/sources",
    } <= paths
    assert not [p for p in paths if p.startswith(("/api/", "/graphql", "/mcp"))]
    assert internal["info"]["title"] == "Groundwork internal API"


def _listening(port: int = 0) -> socket.socket:
    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", port))
    return sock


async def test_one_process_serves_each_app_only_on_its_own_listener(settings: Settings, workspace: Workspace) -> None:
    public_socket, internal_socket = _listening(), _listening()
    public_port, internal_port = public_socket.getsockname()[1], internal_socket.getsockname()[1]
    app = create_listeners(dataclasses.replace(settings, internal_port=internal_port))
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="on"))
    task = asyncio.create_task(server.serve(sockets=[public_socket, internal_socket]))
    while not server.started:
        assert not task.done(), task.exception()
        await asyncio.sleep(0.02)
    provider = workspace.headers(await workspace.provider_key())
    admin = workspace.headers(await workspace.key(admin=True))
    try:
        async with httpx.AsyncClient(timeout=10) as http:
            public = f"http://127.0.0.1:{public_port}"
            internal = f"http://127.0.0.1:{internal_port}"
            assert (await http.get(f"{public}/api/v1/projects", headers=admin)).status_code == 200
            on_public = await http.get(f"{public}/internal/v1/context-engine/providers", headers=provider)
            assert on_public.status_code == 404 and on_public.json()["code"] == "not_found"
            on_internal = await http.get(f"{internal}/internal/v1/context-engine/providers", headers=provider)
            assert on_internal.status_code == 200, on_internal.text
            assert (await http.get(f"{internal}/api/v1/projects", headers=admin)).status_code == 404
            # A customer key on the internal listener finds nothing there either.
            refused = await http.get(f"{internal}/internal/v1/context-engine/providers", headers=admin)
            assert refused.status_code == 404
            assert (await http.get(f"{internal}/health/live")).status_code == 200
    finally:
        server.should_exit = True
        await task
