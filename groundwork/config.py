"""Process settings read from the environment; one frozen object shared by API, worker and CLI."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

from groundwork.platform.secrets.keyring import KeyRing, KeyRingError, ring_text


def default_data_dir() -> Path:
    """The data dir of the embedded stack: `$GROUNDWORK_HOME`, else `.groundwork/` in the current directory."""
    home = os.environ.get("GROUNDWORK_HOME")
    return Path(home) if home else Path.cwd() / ".groundwork"


def index_dir(data_dir: Path | None = None) -> Path:
    """Where this data dir's search replica lives: `$GROUNDWORK_INDEX_DIR`, else `<data dir>/index`."""
    env = os.environ.get("GROUNDWORK_INDEX_DIR")
    return Path(env) if env else (data_dir or default_data_dir()).resolve() / "index"


@dataclass(frozen=True)
class Settings:
    """Everything a Groundwork process needs to reach its PostgreSQL and Temporal."""

    database_url: str
    temporal_address: str = "127.0.0.1:7233"
    temporal_namespace: str = "default"
    temporal_task_queue: str = "groundwork"
    # An existing Temporal cluster or Temporal Cloud (the Temporal SDKs' and CLI's own variable names):
    # TLS on or off (None: on when an API key or a client certificate is given), mTLS client certificate
    # and key files, a private CA for the server certificate, the server name to verify, an API key.
    temporal_tls: bool | None = None
    temporal_tls_client_cert_path: Path | None = None
    temporal_tls_client_key_path: Path | None = None
    temporal_tls_server_ca_cert_path: Path | None = None
    temporal_tls_server_name: str | None = None
    temporal_api_key: str | None = field(default=None, repr=False)
    # Requests per key per window; a token bucket refilled continuously.
    rate_limit_per_minute: int = 600
    # Requests without a valid key (none, unknown, revoked; keyless /graphql) per client address.
    anonymous_rate_limit_per_minute: int = 60
    # The internal API's listener (`/internal/v1`): never the public one; loopback unless told otherwise.
    internal_host: str = "127.0.0.1"
    internal_port: int = 8001
    max_body_bytes: int = 1_048_576
    db_pool_max_size: int = 10
    # This process's search replica (the corpus and package indexes), its own directory: no two processes
    # share one (a busy one makes the process use `<dir>-2`, ...). See `services.search_replica`.
    index_dir: Path = field(default_factory=index_dir)
    # Whether the API and the worker keep that replica following the change logs (tests drive it by hand).
    search_replica: bool = True
    # How long an enhancement run stays open for review (run_action, apply) after it completes.
    review_window_seconds: int = 7 * 24 * 3600
    # An OpenAI-compatible chat-completions endpoint for draft generation; unset = the extractive default.
    llm_base_url: str | None = None
    llm_model: str | None = None
    llm_api_key: str | None = None
    # Webhooks: seconds before each attempt (`GROUNDWORK_WEBHOOK_SCHEDULE`, comma-separated), whether
    # loopback and private targets are allowed (`GROUNDWORK_WEBHOOK_ALLOW_PRIVATE=1`, local use and tests),
    # how long an endpoint may fail every attempt before it is disabled, and the relay's sweep interval.
    webhook_schedule: tuple[float, ...] = field(default_factory=lambda: _webhook_schedule_from_env())
    webhook_allow_private: bool = field(
        default_factory=lambda: os.environ.get("GROUNDWORK_WEBHOOK_ALLOW_PRIVATE", "") in ("1", "true", "yes")
    )
    webhook_disable_after_seconds: float = field(
        default_factory=lambda: _seconds_from_env("GROUNDWORK_WEBHOOK_DISABLE_AFTER_SECONDS", 5 * 24 * 3600.0)
    )
    webhook_sweep_seconds: float = field(
        default_factory=lambda: _seconds_from_env("GROUNDWORK_WEBHOOK_SWEEP_SECONDS", 5.0)
    )
    # How often the worker starts the workflow of runs whose start failed (Temporal was out of reach).
    queued_run_sweep_seconds: float = field(
        default_factory=lambda: _seconds_from_env("GROUNDWORK_QUEUED_RUN_SWEEP_SECONDS", 30.0)
    )
    # Retention (the worker's purge schedule): dispatched outbox events, finished webhook deliveries,
    # and delivery attempts older than these are deleted; an event is kept while a delivery needs it.
    outbox_retention_days: float = field(default_factory=lambda: _days_from_env("GROUNDWORK_OUTBOX_RETENTION_DAYS", 30))
    delivery_retention_days: float = field(
        default_factory=lambda: _days_from_env("GROUNDWORK_WEBHOOK_DELIVERY_RETENTION_DAYS", 30)
    )
    attempt_retention_days: float = field(
        default_factory=lambda: _days_from_env("GROUNDWORK_WEBHOOK_ATTEMPT_RETENTION_DAYS", 30)
    )
    # Notifications: the key ring that signs action links and seals chat webhook URLs, the address
    # those links point at, the SMTP server for e-mail (unset: e-mail deliveries fail as unconfigured),
    # how sends are retried, and the digest windows (UTC-aligned) for `hourly` and `daily`.
    secret_key: str | None = field(default_factory=lambda: ring_text(default_data_dir()))
    public_url: str = field(default_factory=lambda: os.environ.get("GROUNDWORK_PUBLIC_URL", "http://127.0.0.1:8000"))
    smtp_url: str | None = field(default_factory=lambda: os.environ.get("GROUNDWORK_SMTP_URL") or None)
    smtp_from: str = field(
        default_factory=lambda: os.environ.get("GROUNDWORK_SMTP_FROM", "Groundwork <groundwork@localhost>")
    )
    notification_retry_seconds: float = field(
        default_factory=lambda: _seconds_from_env("GROUNDWORK_NOTIFICATION_RETRY_SECONDS", 5.0)
    )
    notification_max_attempts: int = 10
    notification_heartbeat_seconds: float = field(
        default_factory=lambda: _seconds_from_env("GROUNDWORK_NOTIFICATION_HEARTBEAT_SECONDS", 10.0)
    )
    digest_hourly_seconds: int = 3600
    digest_daily_seconds: int = 86400

    @cached_property
    def keyring(self) -> KeyRing | None:
        """The parsed `GROUNDWORK_SECRET_KEY` ring, or None when none is configured."""
        if not self.secret_key:
            return None
        try:
            return KeyRing.parse(self.secret_key)
        except KeyRingError as exc:
            raise RuntimeError(str(exc)) from None

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
            **_temporal_security_from_env(),
            rate_limit_per_minute=int(os.environ.get("GROUNDWORK_RATE_LIMIT_PER_MINUTE", "600")),
            anonymous_rate_limit_per_minute=int(os.environ.get("GROUNDWORK_ANONYMOUS_RATE_LIMIT_PER_MINUTE", "60")),
            internal_host=os.environ.get("GROUNDWORK_INTERNAL_HOST", "127.0.0.1"),
            internal_port=int(os.environ.get("GROUNDWORK_INTERNAL_PORT", "8001")),
            max_body_bytes=int(os.environ.get("GROUNDWORK_MAX_BODY_BYTES", "1048576")),
            db_pool_max_size=int(os.environ.get("GROUNDWORK_DB_POOL_MAX_SIZE", "10")),
            index_dir=index_dir(),
            review_window_seconds=int(os.environ.get("GROUNDWORK_REVIEW_WINDOW_SECONDS", str(7 * 24 * 3600))),
            llm_base_url=os.environ.get("GROUNDWORK_LLM_BASE_URL") or None,
            llm_model=os.environ.get("GROUNDWORK_LLM_MODEL") or None,
            llm_api_key=os.environ.get("GROUNDWORK_LLM_API_KEY") or None,
        )


_TRUE = ("1", "true", "yes", "on")
_FALSE = ("0", "false", "no", "off")


def _temporal_security_from_env() -> dict[str, Any]:
    """TLS and API key settings of the Temporal connection, checked so a mistake fails at start-up."""

    def path(name: str) -> Path | None:
        raw = os.environ.get(name, "").strip()
        if not raw:
            return None
        if not Path(raw).is_file():
            raise RuntimeError(f"{name}: no such file: {raw}")
        return Path(raw)

    raw_tls = os.environ.get("TEMPORAL_TLS", "").strip().lower()
    if raw_tls and raw_tls not in _TRUE + _FALSE:
        raise RuntimeError(f"TEMPORAL_TLS: expected true or false, got {raw_tls!r}")
    tls = None if not raw_tls else raw_tls in _TRUE
    cert = path("TEMPORAL_TLS_CLIENT_CERT_PATH")
    key = path("TEMPORAL_TLS_CLIENT_KEY_PATH")
    if (cert is None) != (key is None):
        raise RuntimeError("TEMPORAL_TLS_CLIENT_CERT_PATH and TEMPORAL_TLS_CLIENT_KEY_PATH must be set together")
    ca = path("TEMPORAL_TLS_SERVER_CA_CERT_PATH")
    server_name = os.environ.get("TEMPORAL_TLS_SERVER_NAME", "").strip() or None
    if tls is False and (cert or ca or server_name):
        raise RuntimeError("TEMPORAL_TLS is false, but a TEMPORAL_TLS_* certificate or server name is set")
    return {
        "temporal_tls": tls,
        "temporal_tls_client_cert_path": cert,
        "temporal_tls_client_key_path": key,
        "temporal_tls_server_ca_cert_path": ca,
        "temporal_tls_server_name": server_name,
        "temporal_api_key": os.environ.get("TEMPORAL_API_KEY", "").strip() or None,
    }


def _webhook_schedule_from_env() -> tuple[float, ...]:
    from groundwork.domain.webhooks import parse_schedule

    try:
        return parse_schedule(os.environ.get("GROUNDWORK_WEBHOOK_SCHEDULE"))
    except ValueError as exc:
        raise RuntimeError(f"GROUNDWORK_WEBHOOK_SCHEDULE: {exc}") from None


def _days_from_env(name: str, default: float) -> float:
    return _seconds_from_env(name, default)  # the same rule: a positive number


def _seconds_from_env(name: str, default: float) -> float:
    raw = os.environ.get(name)
    if not raw:
        return default
    try:
        value = float(raw)
    except ValueError:
        raise RuntimeError(f"{name}: not a number of seconds: {raw!r}") from None
    if not value > 0:
        raise RuntimeError(f"{name}: must be more than 0")
    return value
