"""MCP over stdio: one principal for the whole session, resolved from its API key at start."""

from __future__ import annotations

from pathlib import Path

import anyio

from groundwork.api.mcp.server import build_mcp_server, current_principal
from groundwork.config import Settings
from groundwork.domain.errors import GroundworkError
from groundwork.persistence import db
from groundwork.platform.caches.serving import serving_caches
from groundwork.platform.search_replica import replica as search_replica
from groundwork.platform.temporal.client import TemporalConnection, use_connection
from groundwork.search import corpus_index
from groundwork.services.enhancement import run_waits
from groundwork.services.tenancy.api_keys import resolve_key


def run_stdio(dsn: str, api_key: str, index_dir: Path) -> None:
    """Serve the MCP tools on stdin/stdout, acting as the principal behind `api_key`.

    Like every process that serves search, it keeps its own search replica (in `index_dir`, or the first
    free sibling when the worker of the data dir holds it), fed from PostgreSQL's change logs: search
    answers 503 `service_unavailable` until the replica has caught up, the other tools at once. Like the
    API, it listens to the change feeds, which keep its caches current, wake waits for runs and send
    resource subscriptions their updates.
    """
    settings = Settings.from_env(database_url=dsn)
    corpus_index.configure(index_dir)

    async def main() -> None:
        use_connection(TemporalConnection(settings))
        async with (
            db.connection(dsn),
            run_waits.listening(dsn),
            serving_caches(dsn),
            search_replica.running(index_dir),
        ):
            try:
                principal = await resolve_key(api_key)
            except GroundworkError as error:  # e.g. the key's connected app is not active
                raise SystemExit(f"GROUNDWORK_API_KEY: {error.detail}") from None
            if principal is None:
                raise SystemExit("GROUNDWORK_API_KEY is unknown or revoked")
            current_principal.set(principal)
            await build_mcp_server().run_stdio_async()

    anyio.run(main)
