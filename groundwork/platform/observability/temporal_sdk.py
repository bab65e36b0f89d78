"""The Temporal SDK's own metrics (workflow and activity outcomes, latencies, pollers) in the worker's `/metrics`.

The SDK's Prometheus runtime option serves its metrics on a loopback port of its own; the worker's
`/metrics` reads that text on every scrape and re-exposes it next to Groundwork's, so an operator
scrapes one address per worker. Counters end in `_total` and durations are in seconds
(`temporal_workflow_completed_total`, `temporal_activity_execution_latency_seconds`, ...).
"""

from __future__ import annotations

import logging
import socket
import urllib.request
from collections.abc import Iterator

from prometheus_client.metrics_core import Metric
from prometheus_client.parser import text_string_to_metric_families
from prometheus_client.registry import Collector
from temporalio.runtime import PrometheusConfig, Runtime, TelemetryConfig

log = logging.getLogger(__name__)


def _free_loopback_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class TemporalSdkMetrics(Collector):
    """Collects the metrics a Temporal runtime serves on its loopback Prometheus endpoint."""

    def __init__(self, url: str, timeout: float = 2.0) -> None:
        self.url = url
        self.timeout = timeout

    def collect(self) -> Iterator[Metric]:
        try:
            with urllib.request.urlopen(self.url, timeout=self.timeout) as answer:
                text = answer.read().decode("utf-8")
        except OSError:
            log.warning("the Temporal SDK's metrics endpoint %s did not answer", self.url)
            return
        yield from text_string_to_metric_families(text)


def sdk_metrics_runtime() -> tuple[Runtime, TemporalSdkMetrics]:
    """A Temporal runtime exporting the SDK's metrics on a free loopback port, and the collector reading them."""
    address = f"127.0.0.1:{_free_loopback_port()}"
    runtime = Runtime(
        telemetry=TelemetryConfig(
            metrics=PrometheusConfig(
                bind_address=address, counters_total_suffix=True, unit_suffix=True, durations_as_seconds=True
            )
        )
    )
    return runtime, TemporalSdkMetrics(f"http://{address}/metrics")
