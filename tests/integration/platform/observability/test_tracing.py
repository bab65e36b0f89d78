"""OpenTelemetry: one trace from the HTTP request through the workflow it starts and that workflow's activities."""

from __future__ import annotations

import dataclasses
import uuid
from collections.abc import Iterator

import httpx
import pytest
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind

from groundwork.config import Settings
from groundwork.platform.observability import tracing
from groundwork.platform.temporal.client import connect_client
from groundwork.worker import build_worker
from tests.conftest import Workspace, idem, serving

DESCRIPTION = (
    "Customers must be able to save a card at checkout and reuse it later. Card numbers must never be stored; "
    "only the PSP token is kept. Saving a card must complete within 2 seconds at p99. If the PSP is unavailable, "
    "checkout continues without saving the card. Existing saved cards need a migration to PSP tokens."
)


@pytest.fixture
def spans() -> Iterator[InMemorySpanExporter]:
    """Tracing on for one test, into memory; off again afterwards."""
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    tracing.use_provider(provider)
    try:
        yield exporter
    finally:
        tracing.use_provider(None)
        provider.shutdown()


async def test_one_trace_spans_the_api_request_the_workflow_and_its_activities(
    client: httpx.AsyncClient, workspace: Workspace, settings: Settings, spans: InMemorySpanExporter
) -> None:
    key = await workspace.key("owner", admin=True)
    created = await client.post(
        "/api/v1/work-items",
        json={
            "project_id": workspace.projects["ALPHA"],
            "title": "Save cards with PSP tokens",
            "status": "todo",
            "fields": {"description": DESCRIPTION},
        },
        headers=workspace.headers(key, **idem()),
    )
    assert created.status_code == 201, created.text
    # An API and a worker of their own, built after tracing was turned on (their clients carry the interceptor).
    traced = dataclasses.replace(settings, temporal_task_queue=f"trace-{uuid.uuid4().hex[:8]}")
    temporal = await connect_client(traced)
    async with (
        serving(traced) as url,
        build_worker(temporal, traced.temporal_task_queue),
        httpx.AsyncClient(base_url=url, timeout=60) as http,
    ):
        response = await http.post(
            "/api/v1/work-item-enhancements?wait=30",
            json={
                "target": {"type": "work_item", "id": created.json()["data"]["id"]},
                "actions": ["design"],
                "confirm": True,
            },
            headers=workspace.headers(key, **idem(), traceparent=f"00-{'ab' * 16}-{'cd' * 8}-01"),
        )
    assert response.status_code in (200, 201), response.text
    assert response.json()["data"]["state"] == "ready_for_review", response.json()["data"]

    finished = spans.get_finished_spans()
    [request] = [s for s in finished if s.kind == SpanKind.SERVER and s.name == "POST /api/v1/work-item-enhancements"]
    assert request.attributes is not None
    assert request.attributes["http.route"] == "/api/v1/work-item-enhancements"
    assert request.attributes["http.response.status_code"] == response.status_code
    # The caller's W3C traceparent is continued: the request span is a child of the caller's span.
    assert request.context is not None and request.context.trace_id == int("ab" * 16, 16)
    assert request.parent is not None and request.parent.span_id == int("cd" * 8, 16)
    in_trace = {s.name for s in finished if s.context is not None and s.context.trace_id == request.context.trace_id}
    assert "StartWorkflow:EnhancementRunWorkflow" in in_trace
    assert "RunWorkflow:EnhancementRunWorkflow" in in_trace
    assert "RunActivity:enhancement_prepare_run" in in_trace, sorted(in_trace)
