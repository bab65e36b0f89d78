"""Fixtures for enhancement runs: a work item with material to enhance."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import replace
from typing import Any

import httpx
import pytest

from groundwork.config import Settings
from groundwork.persistence.repositories.platform import outbox
from groundwork.worker import build_worker
from tests.conftest import Workspace, idem, serving
from tests.integration.evidence_search.helpers import contribute

DESCRIPTION = (
    "Customers must be able to save a card at checkout and reuse it later. Card numbers must never be stored "
    "or logged by our services; only the PSP token is kept. Saving a card must complete within 2 seconds at "
    "p99. If the PSP is unavailable, checkout continues without saving the card. Existing saved cards in the "
    "legacy vault need a migration to PSP tokens. The export of the old card store has not been measured, so the "
    "migration may miss the cut-over date. Card numbers already leaked into application logs once, in March. "
    "The PSP sandbox slows down under load, which hides how saving behaves at peak."
)
# The project's runbook about the item: drafts add only what the item lacks, so every action needs evidence the
# description does not already state (a decision, an option, a step with its setting, a risk, a failure case).
SAVED_CARDS = """# Saved cards runbook

## Decision

We decided to keep the PSP token and the card's expiry month and year, and nothing else, in the wallet table.

## Options

Tokenising in the browser is simpler, whereas tokenising on the server costs more PCI scope.

## Steps

Set `wallet.token_ttl_days = 30` in /etc/checkout/wallet.conf before enabling saved cards.
The wallet service must refuse a token older than 30 days.

## Risks

The PSP contract renewal in September may change the token format.
If the PSP rejects a token, the wallet service must ask the customer to enter the card again.
"""


@pytest.fixture
async def work_item(client: httpx.AsyncClient, workspace: Workspace) -> dict[str, Any]:
    key = await workspace.key("owner", admin=True)
    await contribute(workspace, "ALPHA", "runbooks/saved-cards.md", SAVED_CARDS)
    response = await client.post(
        "/api/v1/work-items",
        json={
            "project_id": workspace.projects["ALPHA"],
            "title": "Save cards with PSP tokens",
            "status": "todo",
            "fields": {"description": DESCRIPTION},
        },
        headers=workspace.headers(key, **idem()),
    )
    assert response.status_code == 201, response.text
    return response.json()["data"]


async def create_run(
    client: httpx.AsyncClient, workspace: Workspace, key: str, work_item_id: str, actions: list[str], **extra: Any
) -> httpx.Response:
    """POST a run and return the raw response."""
    wait = extra.pop("wait", 20)
    body = {"target": {"type": "work_item", "id": work_item_id}, "actions": actions, "confirm": True, **extra}
    return await client.post(
        f"/api/v1/work-item-enhancements?wait={wait}", json=body, headers=workspace.headers(key, **idem())
    )


async def run_action(
    client: httpx.AsyncClient, workspace: Workspace, key: str, run_id: str, action: str, **extra: Any
) -> httpx.Response:
    """POST one review-time action and return the raw response."""
    wait = extra.pop("wait", 20)
    headers = workspace.headers(key, **(extra.pop("headers", None) or idem()))
    body = {"action": action, "confirm": True, **extra}
    return await client.post(f"/api/v1/work-item-enhancements/{run_id}/actions?wait={wait}", json=body, headers=headers)


@asynccontextmanager
async def own_queue(
    settings: Settings, temporal_client: Any, enhancer: Any = None, start_worker: bool = True, evidence: Any = None
) -> AsyncIterator[tuple[str, Settings]]:
    """An API (and optionally an in-process worker) on a task queue of its own."""
    queue = f"gen-{uuid.uuid4().hex[:8]}"
    local = replace(settings, temporal_task_queue=queue)
    async with serving(local) as url:
        if not start_worker:
            yield url, local
            return
        worker = build_worker(temporal_client, queue, enhancer=enhancer, evidence=evidence)
        async with worker:
            yield url, local


def activity_tasks(history: Any) -> tuple[list[str], list[int]]:
    """The activity types a workflow history scheduled, and the attempt each started activity ran, in order."""
    scheduled = [
        e.activity_task_scheduled_event_attributes.activity_type.name
        for e in history.events
        if e.HasField("activity_task_scheduled_event_attributes")
    ]
    attempts = [
        e.activity_task_started_event_attributes.attempt
        for e in history.events
        if e.HasField("activity_task_started_event_attributes")
    ]
    return scheduled, attempts


async def run_events(workspace: Workspace, run_id: str) -> list[tuple[str, dict[str, Any]]]:
    """The outbox events of one run, in order, as (type, payload)."""
    return [(e.type, e.payload) for e in await outbox.events_for_workspace(workspace.id) if e.resource_id == run_id]


async def apply(
    client: httpx.AsyncClient, workspace: Workspace, key: str, run_id: str, draft_ids: list[str], version: str
) -> httpx.Response:
    """POST a confirmed apply and return the raw response."""
    return await client.post(
        f"/api/v1/work-item-enhancements/{run_id}/apply",
        json={"draft_ids": draft_ids, "expected_target_version": version, "confirm": True},
        headers=workspace.headers(key, **idem()),
    )


async def reject(
    client: httpx.AsyncClient, workspace: Workspace, key: str, run_id: str, draft_id: str, **body: Any
) -> httpx.Response:
    """POST a confirmed rejection of a draft (reason "It repeats the description." unless given)."""
    return await client.post(
        f"/api/v1/work-item-enhancements/{run_id}/drafts/{draft_id}/reject",
        json={"reason": "It repeats the description.", "confirm": True, **body},
        headers=workspace.headers(key, **idem()),
    )
