"""`/metrics`: the API's requests by route template and status and its index lag; the worker's outbox, webhook
outcomes and index lag; each family from one kind of process, the gauges of shared state from one worker."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Awaitable, Callable
from typing import Any

import httpx
import pytest
from prometheus_client import REGISTRY
from prometheus_client.parser import text_string_to_metric_families

from groundwork.platform.observability import gauges as operational_metrics
from groundwork.platform.observability import metrics
from groundwork.platform.observability.gauges import SharedGaugeReporter
from groundwork.platform.outbox.relay import OutboxRelay
from groundwork.platform.search_replica.corpus_projection import catch_up_index
from groundwork.search.corpus_index import corpus_index
from groundwork.services.evidence_search.sources import SourceUpload, ingest_without_index, receive_source
from tests.conftest import Workspace
from tests.integration.platform.observability.helpers import outbox_drained, samples, scrape, value, worker_page
from tests.integration.webhooks.conftest import Receiver, create_endpoint, delivery_of, emit, wait_until

WORK_ITEM_ROUTE = "/api/v1/work-items/{work_item_id}"


@pytest.fixture
def fresh_gauges(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every scrape reads the database gauges anew (in production at most every few seconds)."""
    monkeypatch.setattr(operational_metrics, "REFRESH_SECONDS", 0.0)


async def test_requests_are_counted_and_timed_by_route_template_and_status(
    client: httpx.AsyncClient, workspace: Workspace
) -> None:
    key = await workspace.key(admin=True)
    before = await scrape(client)
    missing = [f"wi_{uuid.uuid4().hex}" for _ in range(3)]
    for work_item_id in missing:
        response = await client.get(f"/api/v1/work-items/{work_item_id}", headers=workspace.headers(key))
        assert response.status_code == 404
    assert (await client.get(f"/api/v1/work-items/{missing[0]}")).status_code == 401
    after = await scrape(client)

    labels = {"method": "GET", "route": WORK_ITEM_ROUTE}
    counted = value(after, "groundwork_http_requests_total", status="404", **labels) - value(
        before, "groundwork_http_requests_total", status="404", **labels
    )
    assert counted == 3
    timed = value(after, "groundwork_http_request_duration_seconds_count", status="404", **labels) - value(
        before, "groundwork_http_request_duration_seconds_count", status="404", **labels
    )
    assert timed == 3
    unauthenticated = value(after, "groundwork_http_requests_total", status="401", **labels) - value(
        before, "groundwork_http_requests_total", status="401", **labels
    )
    assert unauthenticated == 1
    assert value(after, "groundwork_http_request_duration_seconds_sum", status="404", **labels) > 0
    # The raw path (with its id) never becomes a label value.
    routes = {labels["route"] for labels, _ in samples(after, "groundwork_http_requests_total")}
    assert not any(work_item_id in route for route in routes for work_item_id in missing)


async def test_unmatched_paths_share_one_route_label(client: httpx.AsyncClient) -> None:
    before = await scrape(client)
    for n in range(4):
        assert (await client.get(f"/no/such/path/{uuid.uuid4().hex}/{n}")).status_code == 404
    after = await scrape(client)
    labels = {"method": "GET", "route": "unmatched", "status": "404"}
    assert (
        value(after, "groundwork_http_requests_total", **labels)
        - value(before, "groundwork_http_requests_total", **labels)
        == 4
    )
    assert not any("/no/such/path" in labels["route"] for labels, _ in samples(after, "groundwork_http_requests_total"))


async def test_outbox_backlog_and_its_oldest_age_follow_the_database(
    client: httpx.AsyncClient, workspace: Workspace, fresh_gauges: None
) -> None:
    before = value(await worker_page(), "groundwork_outbox_backlog_events")
    await emit(workspace, "notification.created")
    await emit(workspace, "notification.created")
    await asyncio.sleep(1.1)
    after = await worker_page()
    # No relay runs here: both events wait undispatched.
    assert value(after, "groundwork_outbox_backlog_events") == before + 2
    assert value(after, "groundwork_outbox_oldest_age_seconds") >= 1.0


async def test_webhook_delivery_outcomes_are_counted_and_failed_deliveries_gauged(
    client: httpx.AsyncClient,
    workspace: Workspace,
    relay: OutboxRelay,
    receivers: Callable[[], Awaitable[Receiver]],
    fresh_gauges: None,
) -> None:
    await outbox_drained()  # what earlier tests left is not delivered alongside

    def counted(name: str, outcome: str) -> float:
        return REGISTRY.get_sample_value(name, {"outcome": outcome}) or 0.0

    attempts_ok = counted("groundwork_webhook_delivery_attempts_total", "succeeded")
    attempts_failed = counted("groundwork_webhook_delivery_attempts_total", "failed")
    delivered = counted("groundwork_webhook_deliveries_total", "succeeded")
    failed = counted("groundwork_webhook_deliveries_total", "failed")
    failed_gauge = value(await worker_page(), "groundwork_webhook_deliveries_failed")

    key = await workspace.key(admin=True)
    good, gone = await receivers(), await receivers()
    gone.default_status = 410  # the receiver says the endpoint is gone: the delivery fails for good
    # Not `notification.created`: the gone endpoint being disabled notifies its owner, and that event
    # would reach the good endpoint too (a third delivery, a second success).
    event_type = "work_item_enhancement.applied"
    good_endpoint = await create_endpoint(client, workspace, key, good.url, [event_type])
    gone_endpoint = await create_endpoint(client, workspace, key, gone.url, [event_type])
    await emit(workspace, event_type)

    async def settled() -> bool:
        deliveries = [
            *await delivery_of(client, workspace, key, good_endpoint["id"]),
            *await delivery_of(client, workspace, key, gone_endpoint["id"]),
        ]
        return len(deliveries) == 2 and all(d["status"] != "pending" for d in deliveries)

    try:
        await wait_until(settled, timeout=120, what="both deliveries to settle")
    except AssertionError:
        from groundwork.persistence import db

        states = await db.fetch("SELECT status, count(*) AS n FROM webhook_deliveries GROUP BY status")
        ours = [
            *await delivery_of(client, workspace, key, good_endpoint["id"]),
            *await delivery_of(client, workspace, key, gone_endpoint["id"]),
        ]
        raise AssertionError(f"deliveries not settled: ours {ours}; all {[dict(r) for r in states]}") from None
    assert counted("groundwork_webhook_delivery_attempts_total", "succeeded") == attempts_ok + 1
    assert counted("groundwork_webhook_delivery_attempts_total", "failed") == attempts_failed + 1
    assert counted("groundwork_webhook_deliveries_total", "succeeded") == delivered + 1
    assert counted("groundwork_webhook_deliveries_total", "failed") == failed + 1
    assert value(await worker_page(), "groundwork_webhook_deliveries_failed") == failed_gauge + 1


async def test_search_index_lag_counts_change_sets_the_replica_has_not_applied(
    client: httpx.AsyncClient, workspace: Workspace, worker: Any, fresh_gauges: None
) -> None:
    index = corpus_index()
    await catch_up_index(index)
    assert value(await scrape(client), "groundwork_search_index_lag_changes", index="corpus") == 0
    for n in range(2):
        received = await receive_source(
            SourceUpload(workspace.projects["ALPHA"], f"notes/lag-{n}.txt", "text", f"Lagging note {n}.".encode()),
            workspace_id=workspace.id,
            received_by="test",
        )
        await ingest_without_index(received.version_id)  # stored and logged, not indexed
    await asyncio.sleep(1.1)
    behind = await scrape(client)
    assert value(behind, "groundwork_search_index_lag_changes", index="corpus") >= 2
    assert value(behind, "groundwork_search_index_lag_seconds", index="corpus") >= 1.0
    lag = await operational_metrics.corpus_index_lag(index)
    assert lag.change_sets_behind >= 2

    await catch_up_index(index)
    caught_up = await scrape(client)
    assert value(caught_up, "groundwork_search_index_lag_changes", index="corpus") == 0
    assert value(caught_up, "groundwork_search_index_lag_seconds", index="corpus") == 0


async def test_a_replica_reports_its_own_position_through_the_same_metric(workspace: Workspace) -> None:
    # A per-process replica that tracks its applied position feeds the gauge without a searcher.
    lag = await operational_metrics.corpus_index_lag(None, applied_seq=0)
    operational_metrics.record_index_lag(lag)
    assert REGISTRY.get_sample_value("groundwork_search_index_lag_changes", {"index": "corpus"}) == (
        lag.change_sets_behind
    )
    assert lag.applied_seq == 0 and lag.change_sets_behind >= 0


async def test_the_api_exposes_only_its_own_families_with_one_charset(
    client: httpx.AsyncClient, workspace: Workspace
) -> None:
    await emit(workspace, "notification.created")
    page = await scrape(client)  # checks the one Content-Type, exactly as prometheus-client writes it
    families = {family.name for family in text_string_to_metric_families(page)}
    assert "groundwork_http_requests" in families and "groundwork_search_index_lag_changes" in families
    # The worker's outcomes and the gauges of shared state are not the API's: summed over targets, each counts once.
    assert not {name for name in families if name.startswith(("groundwork_outbox_", "groundwork_webhook_"))}


async def test_one_worker_at_a_time_reports_the_gauges_of_shared_state(settings: Any) -> None:
    first, second = SharedGaugeReporter(settings.database_url), SharedGaugeReporter(settings.database_url)
    try:
        assert await first.holds()
        assert not await second.holds()
        shared = {
            f.name for f in text_string_to_metric_families(metrics.exposition(metrics.WORKER_FAMILIES)[0].decode())
        }
        assert "groundwork_outbox_backlog_events" not in shared  # the second, last asked, does not report them
        await first.close()  # the reporting worker stops: the next one to ask takes over
        assert await second.holds()
        assert not await first.holds()
    finally:
        await first.close()
        await second.close()
