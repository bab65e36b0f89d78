"""Reading Prometheus text the way a scraper does."""

from __future__ import annotations

import asyncio
import time

import httpx
from prometheus_client.parser import text_string_to_metric_families

from groundwork.persistence.repositories.platform import backlogs as operations
from groundwork.platform.observability import gauges, metrics


def samples(text: str, name: str) -> list[tuple[dict[str, str], float]]:
    """Every sample called `name` in Prometheus text, with its labels."""
    found = []
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            if sample.name == name:
                found.append((dict(sample.labels), float(sample.value)))
    return found


def value(text: str, name: str, **labels: str) -> float:
    """The sample `name` whose labels include `labels` (0 when there is none)."""
    matching = [v for sample_labels, v in samples(text, name) if labels.items() <= sample_labels.items()]
    assert len(matching) <= 1, f"{name}{labels} is ambiguous: {matching}"
    return matching[0] if matching else 0.0


async def scrape(client: httpx.AsyncClient, url: str = "/metrics") -> str:
    """GET a /metrics page and check it is Prometheus text with one charset."""
    response = await client.get(url)
    assert response.status_code == 200, response.text
    assert response.headers.get_list("content-type") == [metrics.CONTENT_TYPE]
    return response.text


async def worker_page() -> str:
    """What the worker reporting the gauges of shared state serves at its /metrics (the session's worker runs in
    this process, without a metrics listener)."""
    await gauges.refresh_gauges()
    await gauges.refresh_shared_gauges()
    metrics.report_shared_state(True)
    try:
        return metrics.exposition(metrics.WORKER_FAMILIES)[0].decode()
    finally:
        metrics.report_shared_state(False)


async def outbox_drained(timeout: float = 180.0) -> None:
    """Wait until a running relay has dispatched every event (earlier tests leave undispatched ones)."""
    deadline = time.monotonic() + timeout
    while (await operations.outbox_backlog()).events:
        assert time.monotonic() < deadline, "the relay did not dispatch the outbox"
        await asyncio.sleep(0.2)
