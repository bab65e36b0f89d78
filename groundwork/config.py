"""Process settings read from the environment; one frozen object shared by API, worker and CLI.

This module is the only reader of the environment: `Settings` for what a process needs to reach its
PostgreSQL and Temporal and to serve, and a function for each setting read outside of it. The Temporal
connection's variables are read by the Temporal SDK's own environment configuration (`temporalio.envconfig`),
after the checks that make a mistake fail at start-up.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

from groundwork.platform.secrets.keyring import ENV_VARIABLE as SECRET_KEY_VARIABLE
from groundwork.platform.secrets.keyring import KeyRing, KeyRingError, read_key_file

if TYPE_CHECKING:  # the SDK's envconfig loads the Temporal bridge: imported when a connection is configured
    from temporalio.envconfig import ClientConfigProfile

DEFAULT_PUBLIC_URL = "http://127.0.0.1:8000"
DEFAULT_TEMPORAL_ADDRESS = "127.0.0.1:7233"
# Any of these makes a process export its traces over OTLP/HTTP (the OpenTelemetry exporter reads the rest).
OTLP_ENDPOINT_VARIABLES = ("OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")


def default_data_dir() -> Path:
    """The data dir of the embedded stack: `$GROUNDWORK_HOME`, else `.groundwork/` in the current directory."""
    home = os.environ.get("GROUNDWORK_HOME")
    return Path(home) if home else Path.cwd() / ".groundwork"


def index_dir(data_dir: Path | None = None) -> Path:
    """Where this data dir's search replica lives: `$GROUNDWORK_INDEX_DIR`, else `<data dir>/index`."""
    env = os.environ.get("GROUNDWORK_INDEX_DIR")
    return Path(env) if env else (data_dir or default_data_dir()).resolve() / "index"


def database_url_from_env() -> str | None:
    """`DATABASE_URL`: a production PostgreSQL; None means the embedded one of the data dir."""
    return os.environ.get("DATABASE_URL") or None


def public_url() -> str:
    """`GROUNDWORK_PUBLIC_URL`: where the API is reached (action links, `status`), else the local default."""
    return os.environ.get("GROUNDWORK_PUBLIC_URL") or DEFAULT_PUBLIC_URL


def public_url_from_env() -> str | None:
    """`GROUNDWORK_PUBLIC_URL` when set (it wins over the addresses a running `up` recorded)."""
    return os.environ.get("GROUNDWORK_PUBLIC_URL") or None


def temporal_address_from_env() -> str | None:
    """`TEMPORAL_ADDRESS` when set (it wins over the addresses a running `up` recorded)."""
    return os.environ.get("TEMPORAL_ADDRESS") or None


def secret_key_from_env() -> str | None:
    """The key ring text of `GROUNDWORK_SECRET_KEY`, or None when it is unset or blank."""
    return os.environ.get(SECRET_KEY_VARIABLE, "").strip() or None


def secret_key(data_dir: Path | None = None) -> str | None:
    """The key ring text of `GROUNDWORK_SECRET_KEY`, else of `<data_dir>/secret_key` if that file exists."""
    return secret_key_from_env() or (read_key_file(data_dir) if data_dir is not None else None)


def mcp_api_key() -> str | None:
    """`GROUNDWORK_API_KEY`: the API key `groundwork mcp` (stdio) acts with."""
    return os.environ.get("GROUNDWORK_API_KEY") or None


def worker_metrics_port() -> str | None:
    """`GROUNDWORK_WORKER_METRICS_PORT` as written (the `worker` command's option parses it), or None."""
    return os.environ.get("GROUNDWORK_WORKER_METRICS_PORT") or None


def worker_metrics_host() -> str | None:
    """`GROUNDWORK_WORKER_METRICS_HOST` as written (the `worker` command's option defaults it), or None."""
    return os.environ.get("GROUNDWORK_WORKER_METRICS_HOST") or None


def log_level() -> str:
    """The level of `GROUNDWORK_LOG_LEVEL` (default INFO)."""
    return os.environ.get("GROUNDWORK_LOG_LEVEL", "INFO").upper()


def prometheus_multiproc_dir() -> str | None:
    """`PROMETHEUS_MULTIPROC_DIR`: the directory the processes of one server share their metrics in."""
    return os.environ.get("PROMETHEUS_MULTIPROC_DIR") or None


def otlp_export_configured() -> bool:
    """Whether the environment names an OTLP endpoint to export traces to."""
    return any(os.environ.get(name) for name in OTLP_ENDPOINT_VARIABLES)


def otel_service_name() -> str | None:
    """`OTEL_SERVICE_NAME`, the service name traces carry instead of the process's own."""
    return os.environ.get("OTEL_SERVICE_NAME") or None


@dataclass(frozen=True)
class Settings:
    """Everything a Groundwork process needs to reach its PostgreSQL and Temporal."""

    database_url: str
    temporal_address: str = DEFAULT_TEMPORAL_ADDRESS
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
    secret_key: str | None = field(default_factory=lambda: secret_key(default_data_dir()))
    public_url: str = field(default_factory=public_url)
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
    # The live notification feed (`GET /api/v1/notifications/stream`): a heartbeat comment this often while
    # idle, each stream ended after this long (clients reconnect with `Last-Event-ID`), and at most this many
    # open streams per API key across every API process.
    notification_stream_heartbeat_seconds: float = field(
        default_factory=lambda: _seconds_from_env("GROUNDWORK_NOTIFICATION_STREAM_HEARTBEAT_SECONDS", 15.0)
    )
    notification_stream_seconds: float = field(
        default_factory=lambda: _seconds_from_env("GROUNDWORK_NOTIFICATION_STREAM_SECONDS", 1800.0)
    )
    notification_streams_per_key: int = 5

    @cached_property
    def keyring(self) -> KeyRing | None:
        """The parsed `GROUNDWORK_SECRET_KEY` ring, or None when none is configured."""
        if not self.secret_key:
            return None
        try:
            return KeyRing.parse(self.secret_key)
        except KeyRingError as exc:
            raise RuntimeError(str(exc)) from None

    def temporal_profile(self) -> ClientConfigProfile:
        """The Temporal connection as the SDK's envconfig profile (`to_client_connect_config()` connects with it)."""
        from temporalio.envconfig import ClientConfigProfile, ClientConfigTLS

        tls = None
        files = (
            self.temporal_tls_client_cert_path,
            self.temporal_tls_client_key_path,
            self.temporal_tls_server_ca_cert_path,
        )
        if self.temporal_tls is not None or any(files) or self.temporal_tls_server_name:
            tls = ClientConfigTLS(
                disabled=None if self.temporal_tls is None else not self.temporal_tls,
                server_name=self.temporal_tls_server_name,
                server_root_ca_cert=self.temporal_tls_server_ca_cert_path,
                client_cert=self.temporal_tls_client_cert_path,
                client_private_key=self.temporal_tls_client_key_path,
            )
        return ClientConfigProfile(
            address=self.temporal_address, namespace=self.temporal_namespace, api_key=self.temporal_api_key, tls=tls
        )

    @classmethod
    def from_env(cls, database_url: str | None = None) -> Settings:
        """Build settings from `DATABASE_URL`, `TEMPORAL_*` and `GROUNDWORK_*` variables."""
        url = database_url or database_url_from_env()
        if not url:
            raise RuntimeError("DATABASE_URL is not set (or use `groundwork up` for the embedded stack)")
        return cls(
            database_url=url,
            temporal_task_queue=os.environ.get("TEMPORAL_TASK_QUEUE", "groundwork"),
            **_temporal_from_env(),
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


def _temporal_from_env() -> dict[str, Any]:
    """The Temporal connection's settings: checked, then read by the SDK's envconfig from the checked variables."""
    from temporalio.envconfig import ClientConfigProfile

    # No configuration file: a profile in the operator's home (the `temporal` CLI's) must not redirect a server.
    profile = ClientConfigProfile.load(disable_file=True, override_env_vars=_checked_temporal_variables())
    tls = profile.tls
    return {
        "temporal_address": profile.address or DEFAULT_TEMPORAL_ADDRESS,
        "temporal_namespace": "default" if profile.namespace is None else profile.namespace,
        "temporal_tls": None if tls is None or tls.disabled is None else not tls.disabled,
        "temporal_tls_client_cert_path": _path_of(tls.client_cert if tls else None),
        "temporal_tls_client_key_path": _path_of(tls.client_private_key if tls else None),
        "temporal_tls_server_ca_cert_path": _path_of(tls.server_root_ca_cert if tls else None),
        "temporal_tls_server_name": tls.server_name if tls else None,
        "temporal_api_key": profile.api_key,
    }


def _path_of(source: object) -> Path | None:
    assert source is None or isinstance(source, Path), "only the *_PATH variables are read"
    return source


def _checked_temporal_variables() -> dict[str, str]:
    """The set `TEMPORAL_*` connection variables, checked so a mistake fails at start-up, as the SDK reads them."""

    def path(name: str) -> str | None:
        raw = os.environ.get(name, "").strip()
        if not raw:
            return None
        if not Path(raw).is_file():
            raise RuntimeError(f"{name}: no such file: {raw}")
        return raw

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
    variables = {
        "TEMPORAL_ADDRESS": os.environ.get("TEMPORAL_ADDRESS"),
        "TEMPORAL_NAMESPACE": os.environ.get("TEMPORAL_NAMESPACE"),
        # The SDK knows only true and false (`off` would turn TLS on): the accepted spellings become those.
        "TEMPORAL_TLS": None if tls is None else ("true" if tls else "false"),
        "TEMPORAL_TLS_CLIENT_CERT_PATH": cert,
        "TEMPORAL_TLS_CLIENT_KEY_PATH": key,
        "TEMPORAL_TLS_SERVER_CA_CERT_PATH": ca,
        "TEMPORAL_TLS_SERVER_NAME": server_name,
        "TEMPORAL_API_KEY": os.environ.get("TEMPORAL_API_KEY", "").strip() or None,
    }
    return {name: value for name, value in variables.items() if value is not None}


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
