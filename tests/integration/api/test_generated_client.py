"""A Python client generated from the served `/schema/openapi.json` (openapi-python-client) works: it drives a
whole enhancement run and a notification acknowledge, and every answer it returns is one of its typed models."""

from __future__ import annotations

import importlib
import subprocess
import sys
import uuid
from collections.abc import Awaitable, Callable
from pathlib import Path
from types import ModuleType
from typing import Any

import httpx
import msgspec
import pytest

from groundwork.api.rest.documents.enhancement import RunDocument
from tests.conftest import Workspace
from tests.integration.notifications.conftest import People

GENERATOR = Path(sys.executable).parent / "openapi-python-client"


class GeneratedClient:
    """The generated package, imported: its operations by tag and name, and its models."""

    def __init__(self, package: str) -> None:
        self.package = package
        self.models = importlib.import_module(f"{package}.models")
        self.client = importlib.import_module(f"{package}.client")

    def operation(self, tag: str, name: str) -> ModuleType:
        return importlib.import_module(f"{self.package}.api.{tag}.{name}")

    def as_key(self, base_url: str, key: str) -> Any:
        return self.client.AuthenticatedClient(base_url=base_url, token=key, raise_on_unexpected_status=True)


@pytest.fixture(scope="module")
async def generated(api_url: str, tmp_path_factory: pytest.TempPathFactory) -> GeneratedClient:
    root = tmp_path_factory.mktemp("generated-client")
    async with httpx.AsyncClient(base_url=api_url) as http:
        (root / "openapi.json").write_bytes((await http.get("/schema/openapi.json")).content)
    (root / "config.yaml").write_text("post_hooks: []\n")
    package = f"groundwork_client_{uuid.uuid4().hex[:8]}"
    made = subprocess.run(
        [
            str(GENERATOR),
            "generate",
            "--path",
            str(root / "openapi.json"),
            "--meta",
            "none",
            "--output-path",
            str(root / package),
            "--config",
            str(root / "config.yaml"),
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert made.returncode == 0, made.stdout + made.stderr
    # Every schema and operation was generated: the generator warns about any it had to leave out.
    assert "Warning" not in made.stdout + made.stderr, made.stdout + made.stderr
    sys.path.insert(0, str(root))
    return GeneratedClient(package)


async def test_a_generated_client_runs_an_enhancement_from_create_to_apply_with_typed_models(
    generated: GeneratedClient, api_url: str, workspace: Workspace, work_item: dict[str, Any], worker: Any
) -> None:
    models = generated.models
    key = await workspace.key("owner", admin=True)
    async with generated.as_key(api_url, key) as client:
        create = generated.operation("work_item_enhancement", "api_v1_work_item_enhancements_create_run")
        body = models.CreateRunBody(
            target=models.Target(type_=models.TargetType.WORK_ITEM, id=work_item["id"]),
            actions=[models.CreateRunBodyActionsItem.DESCRIPTION],
            confirm=True,
        )
        created = await create.asyncio_detailed(client=client, body=body, wait=20, idempotency_key=uuid.uuid4().hex)
        assert created.status_code == 201 and isinstance(created.parsed, models.RunDocument)
        run = created.parsed.data
        assert isinstance(run, models.Run) and run.state == "ready_for_review"
        assert created.headers["location"] == f"/api/v1/work-item-enhancements/{run.id}"

        # `GET` of a run sends bytes encoded once per view: they decode as the declared Struct, nothing more.
        get_run = generated.operation("work_item_enhancement", "api_v1_work_item_enhancements_run_id_get_run")
        read = await get_run.asyncio_detailed(run.id, client=client)
        assert isinstance(read.parsed, models.RunDocument) and read.parsed.data.id == run.id
        assert msgspec.json.decode(read.content, type=RunDocument).data.id == run.id

        list_drafts = generated.operation(
            "work_item_enhancement", "api_v1_work_item_enhancements_run_id_drafts_list_drafts"
        )
        drafts = await list_drafts.asyncio(run.id, client=client, apply_eligible=True)
        assert isinstance(drafts, models.DraftList) and isinstance(drafts.page, models.Page)
        assert drafts.data and all(isinstance(d, models.Draft) and d.apply_eligible for d in drafts.data)
        assert drafts.page.hasMore is False and drafts.page.nextCursor is None

        # Preparing the apply: the drafts to apply and the work item's version they were made against.
        get_item = generated.operation("work_items", "api_v1_work_items_work_item_id_get_work_item")
        item = await get_item.asyncio(work_item["id"], client=client)
        assert isinstance(item, models.WorkItemDocument) and isinstance(item.data, models.WorkItem)
        apply = generated.operation("work_item_enhancement", "api_v1_work_item_enhancements_run_id_apply_apply")
        applied = await apply.asyncio(
            run.id,
            client=client,
            body=models.ApplyBody(
                draft_ids=[d.id for d in drafts.data], expected_target_version=item.data.version, confirm=True
            ),
            idempotency_key=uuid.uuid4().hex,
        )
        assert isinstance(applied, models.RunDocument) and applied.data.state == "applied"
        assert sorted(applied.data.applied_draft_ids) == sorted(d.id for d in drafts.data)

        after = await get_item.asyncio(work_item["id"], client=client)
        assert after.data.version > item.data.version
        assert (
            after.data.fields["description"] == next(d for d in drafts.data if d.field == "description").proposed_value
        )


async def test_a_generated_client_acknowledges_a_notification(
    generated: GeneratedClient, api_url: str, people: People, notify: Callable[..., Awaitable[dict[str, Any]]]
) -> None:
    models = generated.models
    made = await notify()
    async with generated.as_key(api_url, people.bob.key) as client:
        listing = generated.operation("notifications", "api_v1_notifications_list_notifications")
        inbox = await listing.asyncio(client=client, limit=1)
        assert isinstance(inbox, models.NotificationList) and isinstance(inbox.data[0], models.Notification)
        notification = inbox.data[0]
        assert notification.id == made["id"] and notification.status == "unread"

        read = generated.operation("notifications", "api_v1_notifications_notification_id_read_read")
        was_read = await read.asyncio(
            notification.id,
            client=client,
            body=models.CommandBody(expected_version=notification.version),
            idempotency_key=uuid.uuid4().hex,
        )
        assert isinstance(was_read, models.CommandDocument) and was_read.data.status == "read"

        acknowledge = generated.operation(
            "notifications", "api_v1_notifications_notification_id_acknowledge_acknowledge"
        )
        acknowledged = await acknowledge.asyncio(
            notification.id,
            client=client,
            body=models.ConfirmedCommandBody(expected_version=was_read.data.version, confirm=True),
            idempotency_key=uuid.uuid4().hex,
        )
        assert isinstance(acknowledged, models.CommandDocument)
        answer = acknowledged.data
        assert isinstance(answer, models.CommandAnswer) and answer.status == "acknowledged"
        assert answer.operationId.startswith("op_") and answer.version == was_read.data.version + 1

        get_one = generated.operation("notifications", "api_v1_notifications_notification_id_get_notification")
        shown = await get_one.asyncio(notification.id, client=client)
        assert isinstance(shown, models.NotificationDocument) and shown.data.status == "acknowledged"
        assert all(isinstance(h, models.HistoryEntry) for h in shown.data.history)
        assert "acknowledged" in [h.to for h in shown.data.history]
