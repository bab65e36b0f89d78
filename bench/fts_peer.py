"""The peer of bench/search_bench.py: PostgreSQL full-text search behind the same HTTP server as Groundwork.

What a user would build instead of Groundwork's evidence search: a minimal Litestar endpoint that answers a
search of an engagement's passages from PostgreSQL full-text search, served by uvicorn with the options and the
worker count of `groundwork serve` (uvloop, httptools, `groundwork serve`'s HTTP protocol, proxy headers, a
listening socket per worker process, no access log). It reads the passages Groundwork stores
(`corpus_passages`, with the generated `tsv` column and its GIN index that search_bench.py adds), with the same
semantics as Groundwork's plain words: an OR of the query's lexemes (`english` configuration, its stopwords
dropped), ranked by `ts_rank_cd`, the engagement's projects as the filter, one page. No authentication, no
visibility, no highlights: the least a user would write.

    POST /search {"subject_ref": {"type": "engagement", "id": ...}, "query": "...", "limit": 20}
    -> {"data": [{"id", "source_id", "text", "score"}, ...]}

search_bench.py starts it as `python bench/fts_peer.py --port P --workers N` with FTS_PEER_DSN in the environment.
"""

from __future__ import annotations

import argparse
import os
import socket
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any, cast

import asyncpg
import msgspec
import uvicorn
from litestar import Litestar, get, post
from litestar.datastructures import State
from uvicorn.supervisors import Multiprocess

from groundwork.api.app import SERVER_OPTIONS
from groundwork.api.serving import OwnListener, checked_port

DSN_ENV = "FTS_PEER_DSN"
# The query's lexemes (english stems, english stopwords dropped) joined by OR instead of AND; the lexemes are
# already normalised, so the `simple` configuration reads them back unchanged (`english` would stem them again).
SEARCH = """
SELECT p.id, p.source_id, p.text, ts_rank_cd(p.tsv, q) AS score
FROM corpus_passages p, to_tsquery('simple', replace(plainto_tsquery('english', $1)::text, '&', '|')) q
WHERE p.tsv @@ q AND p.project_id = ANY($2::text[])
ORDER BY score DESC LIMIT $3
"""
PROJECTS = "SELECT id FROM projects WHERE engagement_id = $1"


class Subject(msgspec.Struct):
    """The engagement searched."""

    type: str
    id: str


class SearchRequest(msgspec.Struct):
    """A search as Groundwork's REST endpoint takes it (the fields the bench sends)."""

    subject_ref: Subject
    query: str
    limit: int = 20


@post("/search", status_code=200)
async def search(data: SearchRequest, state: State) -> dict[str, Any]:
    """One page of the engagement's passages matching any of the query's lexemes, best `ts_rank_cd` first."""
    projects: dict[str, list[str]] = state.projects
    pool: asyncpg.Pool = state.pool
    ids = projects.get(data.subject_ref.id)
    if ids is None:  # an engagement's projects, read once per process (Groundwork caches visibility too)
        ids = projects[data.subject_ref.id] = [r["id"] for r in await pool.fetch(PROJECTS, data.subject_ref.id)]
    rows = await pool.fetch(SEARCH, data.query, ids, min(max(data.limit, 1), 100))
    return {"data": [dict(row) for row in rows]}


@get("/health")
async def health() -> dict[str, str]:
    """The process serves."""
    return {"status": "ok"}


def create_app() -> Litestar:
    """Factory for uvicorn: the endpoint, with a connection pool opened by its lifespan."""
    dsn = os.environ[DSN_ENV]

    @asynccontextmanager
    async def pool(app: Litestar) -> AsyncIterator[None]:
        app.state.pool = await asyncpg.create_pool(dsn, min_size=1, max_size=16)
        app.state.projects = {}
        try:
            yield
        finally:
            await app.state.pool.close()

    return Litestar([search, health], lifespan=[pool])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--workers", type=int, default=1)
    args = parser.parse_args()
    # The options `groundwork serve` passes to uvicorn (groundwork/api/serving.py), the app aside.
    config = uvicorn.Config(
        "fts_peer:create_app",
        factory=True,
        host=args.host,
        port=args.port,
        workers=args.workers,
        proxy_headers=True,
        log_level="warning",
        access_log=False,
        **SERVER_OPTIONS,
    )
    if config.workers > 1:  # a listener per worker process, as `groundwork serve` has
        listener = OwnListener(args.host, checked_port(args.host, args.port, "the peer"), "the peer")
        Multiprocess(config, sockets=cast(list[socket.socket], [listener])).run()
    else:
        uvicorn.Server(config).run()


if __name__ == "__main__":
    main()
