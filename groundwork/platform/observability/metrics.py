"""Every Prometheus metric Groundwork exposes (docs/operations.md "Metrics" lists them), and their rendering.

Metrics live in prometheus-client's default registry. Under `groundwork serve --workers N` (N > 1)
each uvicorn process writes its values to `PROMETHEUS_MULTIPROC_DIR` and `/metrics` adds up every
process's files, so a scrape of any process sees the whole server.
"""

from __future__ import annotations

from collections.abc import Iterable

from prometheus_client import (
    CONTENT_TYPE_LATEST,
    REGISTRY,
    CollectorRegistry,
    Counter,
    Gauge,
    Histogram,
    generate_latest,
)
from prometheus_client.registry import Collector

from groundwork.config import prometheus_multiproc_dir

# Requests may wait up to 30 s for a run (`?wait=`): the top buckets keep those apart from timeouts.
LATENCY_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0)

HTTP_REQUESTS = Counter(
    "groundwork_http_requests_total",
    "HTTP requests answered, by method, route template (not the raw path) and status code.",
    ["method", "route", "status"],
)
HTTP_REQUEST_DURATION = Histogram(
    "groundwork_http_request_duration_seconds",
    "Time from a request's arrival to the end of its response, by method, route template and status code.",
    ["method", "route", "status"],
    buckets=LATENCY_BUCKETS,
)
OUTBOX_BACKLOG = Gauge(
    "groundwork_outbox_backlog_events",
    "Outbox events not yet dispatched by the relay.",
    multiprocess_mode="mostrecent",
)
OUTBOX_OLDEST_AGE = Gauge(
    "groundwork_outbox_oldest_age_seconds",
    "Age of the oldest undispatched outbox event (0 when none waits).",
    multiprocess_mode="mostrecent",
)
WEBHOOK_ATTEMPTS = Counter(
    "groundwork_webhook_delivery_attempts_total",
    "Webhook delivery attempts made by this worker, by outcome (succeeded, failed).",
    ["outcome"],
)
WEBHOOK_DELIVERIES = Counter(
    "groundwork_webhook_deliveries_total",
    "Webhook deliveries finished by this worker, by outcome (succeeded, or the failure reason).",
    ["outcome"],
)
WEBHOOK_DELIVERIES_FAILED = Gauge(
    "groundwork_webhook_deliveries_failed",
    "Webhook deliveries stored as failed (within the delivery retention window).",
    multiprocess_mode="mostrecent",
)
SEARCH_INDEX_LAG = Gauge(
    "groundwork_search_index_lag_changes",
    "Change sets of the index's change log this process's search replica has not applied yet, by index.",
    ["index"],
    multiprocess_mode="mostrecent",
)
SEARCH_INDEX_LAG_SECONDS = Gauge(
    "groundwork_search_index_lag_seconds",
    "Age of the oldest change set this process's search replica has not applied yet (0 when caught up).",
    ["index"],
    multiprocess_mode="mostrecent",
)
NOTIFICATION_SENDS = Counter(
    "groundwork_notification_sends_total",
    "Notification sends by channel (email, chat) and outcome (sent, failed, skipped).",
    ["channel", "outcome"],
)
NOTIFICATION_SNOOZES_ENDED = Counter(
    "groundwork_notification_snoozes_ended_total",
    "Snooze timers that fired, by outcome (woken: the notification came back; ended: it was back already).",
    ["outcome"],
)
NOTIFICATION_STREAMS = Gauge(
    "groundwork_notification_streams_open",
    "Live notification feeds (Server-Sent Events) this process is serving now.",
    multiprocess_mode="livesum",
)

ENHANCEMENT_DRAFT_REJECTIONS = Counter(
    "groundwork_enhancement_draft_rejections_total",
    "Drafts reviewers rejected, by the action that proposed them and the field they were for.",
    ["action", "field"],
)


# Which process exposes which Groundwork families: the API its requests, its own search replica's lag and the
# notification streams it serves, the worker everything it does (webhook and notification outcomes, snooze timers,
# its replica's lag) and the gauges of shared state (the outbox, failed deliveries), which one worker at a time
# reports (`gauges.SharedGauges`). A family no process of a kind ever sets is not exposed by it, so sums over a
# scrape's targets count each thing once.
API_FAMILIES = (
    "groundwork_http_",
    "groundwork_search_index_lag_",
    "groundwork_notification_streams_",
    "groundwork_enhancement_draft_rejections_",
)
WORKER_FAMILIES = (
    "groundwork_outbox_",
    "groundwork_webhook_",
    "groundwork_notification_sends_",
    "groundwork_notification_snoozes_",
    "groundwork_search_index_lag_",
)
# Gauges of shared state, read from PostgreSQL: only the one worker that reports them exposes them.
SHARED_FAMILIES = ("groundwork_outbox_", "groundwork_webhook_deliveries_failed")
_reporting_shared_state = False


def report_shared_state(reporting: bool) -> None:
    """Whether this process is the one exposing the gauges of shared state (`gauges.SharedGaugeReporter`)."""
    global _reporting_shared_state
    _reporting_shared_state = reporting


# Prometheus text, with one charset (the client library's constant already carries it: a web framework must not
# add a second one).
CONTENT_TYPE = CONTENT_TYPE_LATEST


def exposition(families: tuple[str, ...], extra: Iterable[Collector] = ()) -> tuple[bytes, str]:
    """The Prometheus text of this process's metrics (every process's of this server) and its content type:
    the Groundwork families named by the prefixes in `families`, the process and runtime ones, and `extra`."""
    return generate_latest(combined_registry(families, extra)), CONTENT_TYPE


def combined_registry(families: tuple[str, ...], extra: Iterable[Collector] = ()) -> CollectorRegistry:
    """A registry of this process's metrics (every process's, when multi-process) of `families`, and `extra`."""
    directory = prometheus_multiproc_dir()
    registry = CollectorRegistry()
    if directory is not None:
        from prometheus_client import multiprocess

        source = CollectorRegistry()
        multiprocess.MultiProcessCollector(source, path=directory)
        registry.register(_Families(source, families))
    else:
        registry.register(_Families(REGISTRY, families))
    for collector in extra:
        registry.register(collector)
    return registry


class _Families(Collector):
    """A registry's metrics, without the Groundwork families another kind of process owns."""

    def __init__(self, source: CollectorRegistry, families: tuple[str, ...]) -> None:
        self.source = source
        self.families = families

    def collect(self):  # type: ignore[no-untyped-def]
        for family in self.source.collect():
            name = family.name
            ours = name.startswith(self.families) and (_reporting_shared_state or not name.startswith(SHARED_FAMILIES))
            if ours or not name.startswith("groundwork_"):
                yield family


class MetricsServer:
    """`/metrics` of a process without an HTTP server of its own (the worker), on a thread of its own."""

    def __init__(self, host: str, port: int, extra: Iterable[Collector] = ()) -> None:
        from prometheus_client import start_http_server

        registry = combined_registry(WORKER_FAMILIES, extra)
        self.server, self.thread = start_http_server(port, host, registry=registry)
        self.port = int(self.server.server_address[1])

    def close(self) -> None:
        """Stop serving and free the port."""
        self.server.shutdown()
        self.server.server_close()
        self.thread.join(5.0)
