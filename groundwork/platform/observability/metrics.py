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


def exposition(extra: Iterable[Collector] = ()) -> tuple[bytes, str]:
    """The Prometheus text of every metric of this process (of every process of this server) and its type."""
    extra = list(extra)
    if prometheus_multiproc_dir() is None and not extra:
        return generate_latest(REGISTRY), CONTENT_TYPE_LATEST
    return generate_latest(combined_registry(extra)), CONTENT_TYPE_LATEST


def combined_registry(extra: Iterable[Collector] = ()) -> CollectorRegistry:
    """A registry of this process's metrics (every process's, when multi-process) and `extra` collectors."""
    directory = prometheus_multiproc_dir()
    registry = CollectorRegistry()
    if directory is not None:
        from prometheus_client import multiprocess

        multiprocess.MultiProcessCollector(registry, path=directory)
    else:
        registry.register(_Everything())
    for collector in extra:
        registry.register(collector)
    return registry


class _Everything(Collector):
    """The default registry as one collector, to combine it with others in a scrape."""

    def collect(self):  # type: ignore[no-untyped-def]
        yield from REGISTRY.collect()


class MetricsServer:
    """`/metrics` of a process without an HTTP server of its own (the worker), on a thread of its own."""

    def __init__(self, host: str, port: int, extra: Iterable[Collector] = ()) -> None:
        from prometheus_client import start_http_server

        self.server, self.thread = start_http_server(port, host, registry=combined_registry(extra))
        self.port = int(self.server.server_address[1])

    def close(self) -> None:
        """Stop serving and free the port."""
        self.server.shutdown()
        self.server.server_close()
        self.thread.join(5.0)
