"""Process settings read from the environment; one frozen object shared by API, worker and CLI."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path


def default_data_dir() -> Path:
    """The data dir of the embedded stack: `$GROUNDWORK_HOME`, else `.groundwork/` in the current directory."""
    home = os.environ.get("GROUNDWORK_HOME")
    return Path(home) if home else Path.cwd() / ".groundwork"


@dataclass(frozen=True)
class Settings:
    """Everything a Groundwork process needs to reach its PostgreSQL and Temporal."""

    database_url: str
    temporal_address: str = "127.0.0.1:7233"
    temporal_namespace: str = "default"
    temporal_task_queue: str = "groundwork"
    # Requests per key per window; a token bucket refilled continuously.
    rate_limit_per_minute: int = 600
    max_body_bytes: int = 1_048_576
    db_pool_max_size: int = 10
    # The Tantivy index: written by the worker, read by the API processes on the same machine.
    index_dir: Path = field(default_factory=lambda: default_data_dir() / "index")

    @classmethod
    def from_env(cls, database_url: str | None = None) -> Settings:
        """Build settings from `DATABASE_URL`, `TEMPORAL_*` and `GROUNDWORK_*` variables."""
        url = database_url or os.environ.get("DATABASE_URL")
        if not url:
            raise RuntimeError("DATABASE_URL is not set (or use `groundwork up` for the embedded stack)")
        return cls(
            database_url=url,
            temporal_address=os.environ.get("TEMPORAL_ADDRESS", "127.0.0.1:7233"),
            temporal_namespace=os.environ.get("TEMPORAL_NAMESPACE", "default"),
            temporal_task_queue=os.environ.get("TEMPORAL_TASK_QUEUE", "groundwork"),
            rate_limit_per_minute=int(os.environ.get("GROUNDWORK_RATE_LIMIT_PER_MINUTE", "600")),
            max_body_bytes=int(os.environ.get("GROUNDWORK_MAX_BODY_BYTES", "1048576")),
            db_pool_max_size=int(os.environ.get("GROUNDWORK_DB_POOL_MAX_SIZE", "10")),
            index_dir=Path(os.environ.get("GROUNDWORK_INDEX_DIR") or default_data_dir() / "index"),
        )
